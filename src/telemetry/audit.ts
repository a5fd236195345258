// The guardrails' audit trail: one record per refusal, confirmation asked (and its answer),
// definition change noticed and approval, in `audit-YYYY-MM-DD.ndjson` beside the call records
// (the store's log: files, or rows in PostgreSQL).
// Like a call record it holds names, classes and config keys, never an argument value: the
// encoder writes exactly the fields below, each checked for shape, so nothing else reaches disk.
import { readFile } from "node:fs/promises";
import { storeOf, type Store } from "../store/index.js";

export const AUDIT_EVENTS = [
  /** A call refused by the policy or by a pinned definition; it never reached the downstream. */
  "refused",
  /** The user was asked to confirm a call and accepted it. */
  "confirmed",
  /** The user declined or cancelled a confirmation (the call was not made). */
  "declined",
  /** A tool's definition differs from the approved one (noticed once per new version). */
  "changed",
  /** A tool of a quarantined server was seen and awaits its first approval. */
  "awaiting_approval",
  /** An operator approved a tool's current definition (`mcphub approve`). */
  "approved",
] as const;
export type AuditEvent = (typeof AUDIT_EVENTS)[number];

export interface AuditRecord {
  ts: number;
  event: AuditEvent;
  /** The agent the call was for ("" unscoped); the operator's approvals have "". */
  agent: string;
  server: string;
  /** The wire name. */
  tool: string;
  namespaced: string;
  /** read | write | destructive, when known. */
  effect?: string;
  /** Why: `denied`, `effect_not_allowed`, `definition_changed`, `confirmation_unavailable`, ... */
  reason?: string;
  /** The config key that decided (`agents.claude.policy.allow`); never a value from a call. */
  rule?: string;
  /** How the call came in: mount, call_tool or detach. */
  via?: string;
}

const IDENT = /^[a-z][a-z0-9_.-]{0,47}$/;
// Rules are config paths: keys, indices and quoted pattern text, bounded.
const RULE = /^[A-Za-z0-9_.[\]"*\-/: ]{1,200}$/;
const EVENTS: ReadonlySet<string> = new Set(AUDIT_EVENTS);

/** One line: a JSON object with exactly the known fields, each of its expected shape. */
export function encodeAudit(r: AuditRecord): string | undefined {
  if (!EVENTS.has(r.event)) return undefined;
  const out: Record<string, string | number> = {
    ts: Number.isFinite(r.ts) && r.ts > 0 ? Math.round(r.ts) : Date.now(),
    event: r.event,
    agent: String(r.agent ?? ""),
    server: String(r.server),
    tool: String(r.tool),
    namespaced: String(r.namespaced),
  };
  if (r.effect !== undefined && IDENT.test(r.effect)) out["effect"] = r.effect;
  if (r.reason !== undefined && IDENT.test(r.reason)) out["reason"] = r.reason;
  if (r.rule !== undefined && RULE.test(r.rule)) out["rule"] = r.rule;
  if (r.via !== undefined && IDENT.test(r.via)) out["via"] = r.via;
  return `${JSON.stringify(out)}\n`;
}

export interface AuditQuery {
  sinceMs?: number;
  now?: number;
  agent?: string;
  server?: string;
}

export interface AuditReport {
  /** Count per event. */
  counts: Partial<Record<AuditEvent, number>>;
  /** The newest records first, at most `limit`. */
  recent: AuditRecord[];
}

/** Reads the audit trail of a window (small files: read whole, parsed line by line). */
export async function queryAudit(source: string | Store, q: AuditQuery = {}, limit = 20): Promise<AuditReport> {
  const now = q.now ?? Date.now();
  const cutoff = q.sinceMs !== undefined ? now - q.sinceMs : undefined;
  const counts: AuditReport["counts"] = {};
  const all: AuditRecord[] = [];
  const log = storeOf(source).log();
  let segments;
  try {
    segments = await log.segments("audit", cutoff);
  } finally {
    await log.close();
  }
  for (const seg of segments) {
    let text = "";
    try {
      if (seg.path !== undefined) text = await readFile(seg.path, "utf8");
      else for await (const batch of seg.read(0)) text += batch.text;
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      const r = parseAudit(line);
      if (!r || (cutoff !== undefined && r.ts < cutoff)) continue;
      if (q.agent !== undefined && r.agent !== q.agent) continue;
      if (q.server !== undefined && r.server !== q.server) continue;
      counts[r.event] = (counts[r.event] ?? 0) + 1;
      all.push(r);
    }
  }
  all.sort((a, b) => b.ts - a.ts);
  return { counts, recent: all.slice(0, limit) };
}

function parseAudit(line: string): AuditRecord | undefined {
  if (line.trim() === "") return undefined;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined; // a torn line (a crash mid-write) costs one record
  }
  if (v === null || typeof v !== "object") return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.ts !== "number" || typeof o.event !== "string" || !EVENTS.has(o.event)) return undefined;
  const str = (k: string) => (typeof o[k] === "string" ? (o[k] as string) : undefined);
  return {
    ts: o.ts,
    event: o.event as AuditEvent,
    agent: str("agent") ?? "",
    server: str("server") ?? "",
    tool: str("tool") ?? "",
    namespaced: str("namespaced") ?? "",
    ...(str("effect") !== undefined ? { effect: str("effect") as string } : {}),
    ...(str("reason") !== undefined ? { reason: str("reason") as string } : {}),
    ...(str("rule") !== undefined ? { rule: str("rule") as string } : {}),
    ...(str("via") !== undefined ? { via: str("via") as string } : {}),
  };
}
