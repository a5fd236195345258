// One proxied call as telemetry sees it, and its on-disk line. The record type has no field that
// could hold an argument or result value: only names, sizes, timings and a short error class.
// The encoder writes exactly these fields (never a spread of the caller's object), so an extra
// property smuggled in at runtime is dropped rather than persisted.
import { estimateTokens } from "../util/units.js";

export type CallVia = "mount" | "call_tool" | "detach";

export interface CallRecord {
  /** When the call finished, milliseconds since the epoch. Also selects the day file. */
  ts: number;
  /** The `--agent` name (or the token's agent on the daemon); "" when unscoped. */
  agent: string;
  server: string;
  /** The downstream's wire name. */
  tool: string;
  /** The public `server__tool` name. */
  namespaced: string;
  via: CallVia;
  duration_ms: number;
  ok: boolean;
  /** A short class such as "timeout" or "outcome_unknown"; never a message. */
  error_class?: string;
  args_bytes: number;
  result_bytes: number;
  est_tokens: number;
}

const VIAS: ReadonlySet<string> = new Set<CallVia>(["mount", "call_tool", "detach"]);

/**
 * Error classes are identifiers, not messages: lowercase letters, digits, `_`, `.`, `-`, at most
 * 48 characters. Anything else (a message with a value in it, say) is recorded as "error".
 */
export const ERROR_CLASS_RE = /^[a-z][a-z0-9_.-]{0,47}$/;

/**
 * Error classes of calls that never reached the server: arguments that failed its schema, and the
 * guardrails' refusals (policy, pinned definitions, a confirmation that failed or was declined).
 * They say nothing about the server's health, so per-server error rates leave them out.
 */
export const NOT_SENT_ERROR_CLASSES: ReadonlySet<string> = new Set([
  "invalid_arguments",
  "denied",
  "effect_not_allowed",
  "definition_changed",
  "awaiting_approval",
  "definitions_unreadable",
  "confirmation_unavailable",
  "confirmation_timeout",
  "declined",
]);

export function normalizeErrorClass(cls: string | undefined, ok: boolean): string | undefined {
  if (ok && cls === undefined) return undefined;
  if (cls !== undefined && ERROR_CLASS_RE.test(cls)) return cls;
  return ok ? undefined : "error";
}

/** Builds a record, deriving `est_tokens` the same way everywhere (ceil of bytes / 4). */
export function callRecord(fields: Omit<CallRecord, "est_tokens" | "ts"> & { ts?: number }): CallRecord {
  return {
    ...fields,
    ts: fields.ts ?? Date.now(),
    est_tokens: estimateTokens(fields.args_bytes + fields.result_bytes),
  };
}

function count(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.round(n) : 0;
}

/**
 * The on-disk line ("calls-v1"): a JSON array with the fields in this fixed order, newline-terminated.
 *   [ts, server, tool, namespaced, agent, via, ok, duration_ms, args_bytes, result_bytes, est_tokens, error_class?]
 * An array rather than an object halves the bytes per line (no repeated keys), which halves what
 * `stats` has to read and decode, and gives the reader fixed positions; each line is still valid
 * JSON (`jq -c '{ts: .[0], server: .[1], ...}'` reads it back). Readers also accept the same
 * record written as an object with the CallRecord field names.
 */
export const RECORD_FIELDS = [
  "ts",
  "server",
  "tool",
  "namespaced",
  "agent",
  "via",
  "ok",
  "duration_ms",
  "args_bytes",
  "result_bytes",
  "est_tokens",
  "error_class",
] as const;

/**
 * Encodes a record as one line (with the trailing newline). Only the listed fields are written;
 * strings go through JSON.stringify so a name with a quote or a newline still yields one line.
 */
export function encodeRecord(r: CallRecord): string {
  const ok = r.ok === true;
  const via = VIAS.has(r.via) ? r.via : "call_tool";
  const errorClass = normalizeErrorClass(r.error_class, ok);
  return (
    `[${count(r.ts)},${JSON.stringify(String(r.server))},${JSON.stringify(String(r.tool))}` +
    `,${JSON.stringify(String(r.namespaced))},${JSON.stringify(String(r.agent ?? ""))},"${via}",${ok}` +
    `,${count(r.duration_ms)},${count(r.args_bytes)},${count(r.result_bytes)},${count(r.est_tokens)}` +
    (errorClass === undefined ? "" : `,"${errorClass}"`) +
    "]\n"
  );
}
