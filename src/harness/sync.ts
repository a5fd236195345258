// Sync: compare what an agent's harness file holds with what it should hold, print that as a
// plan, and on --write apply it with a backup first, touching only the MCP section and removing
// only entries mcphub itself wrote before. Every write records a plan id that --rollback restores.
import { createHash, randomBytes } from "node:crypto";
import { unlink } from "node:fs/promises";
import { isAbsolute, resolve, dirname } from "node:path";
import { expandHome } from "../config/paths.js";
import type { AgentConfig, AgentType, Config } from "../config/schema.js";
import { sameEntry } from "./codecs.js";
import { findDuplicates, type Duplicate, type NameClash } from "./identity.js";
import { GATEWAY_ENTRY, PENDING_TOKEN, desiredEntries, type SelfCommand } from "./desired.js";
import { openDocument } from "./documents.js";
import { backupFile, readIfExists, writeAtomic } from "./files.js";
import { adapterFor } from "./registry.js";
import { ownedNames, readState, writeState, type PlanRecord, type SyncState } from "./state.js";
import { canonicalJson } from "../util/json/canonical.js";
import type { HarnessAdapter, NeutralEntry, RawValue } from "./types.js";

export type SyncActionKind = "add" | "update" | "remove" | "unchanged";

export interface SyncAction {
  action: SyncActionKind;
  name: string;
  /** For updates: which fields change, with secret values redacted (at most 240 bytes). */
  detail?: string;
}

export interface SyncPlan {
  agent: string;
  type: AgentType;
  mode: "gateway" | "direct";
  path: string;
  planId: string;
  actions: SyncAction[];
  /** Servers a direct-mode agent cannot receive, with the reason. */
  skipped: { name: string; reason: string }[];
  /**
   * Entries of a gateway agent's file that the gateway serves too (same command, args, url and
   * env names): the model would see their tools twice. `withOffload` turns them into removals.
   */
  duplicates: Duplicate[];
  /** Entries that only share a name with a configured server: different servers, kept. */
  clashes: NameClash[];
  /** Things worth saying about this plan (e.g. a token that cannot be reused). */
  notes: string[];
  /** Entries to write (internal: carries secrets such as tokens; never print it). */
  readonly desired: NeutralEntry[];
  /** The file's text when planned (undefined: it did not exist), to detect a concurrent edit. */
  readonly original: string | undefined;
  readonly kind: "sync" | "offload";
}

export interface SyncContext {
  configPath: string;
  dataDir: string;
  /** Home directory for `~` paths and default harness paths. */
  home: string;
  self: SelfCommand;
  /** Creates a daemon bearer token for an agent (needed only when `listen` is set). */
  createToken?: (agent: string) => Promise<string>;
  /**
   * Whether a remembered token still authenticates as the agent. A revoked token is treated as
   * absent, so the next --write creates a fresh one instead of re-writing a dead token.
   */
  tokenValid?: (token: string, agent: string) => Promise<boolean>;
  /** Ids of the agent's live daemon tokens, to say when one exists that sync cannot reuse. */
  liveTokenIds?: (agent: string) => Promise<string[]>;
}

/** A user-facing sync failure (unknown agent, unreadable file, unknown plan...). */
export class SyncError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SyncError";
  }
}

export function agentOf(config: Config, name: string): AgentConfig {
  const agent = config.agents[name];
  if (!agent) {
    const known = Object.keys(config.agents).sort();
    throw new SyncError(
      `unknown agent "${name}"${known.length ? `; configured agents: ${known.join(", ")}` : " (no agents are configured; see `mcphub agents`)"}`,
    );
  }
  return agent;
}

/** The agent's type: `type`, else its name when that names an adapter. */
export function agentAdapter(name: string, agent: AgentConfig): HarnessAdapter {
  const adapter = adapterFor(agent.type ?? name);
  if (!adapter) throw new SyncError(`agent "${name}" has no type and its name is not a known harness; set agents.${name}.type`);
  return adapter;
}

/** Absolute harness file path: `path` (with `~`, relative to the config's folder), else the default. */
export function agentFilePath(name: string, agent: AgentConfig, ctx: Pick<SyncContext, "home" | "configPath">): string {
  const adapter = agentAdapter(name, agent);
  if (agent.path === undefined) return adapter.defaultPath(ctx.home);
  const p = expandHome(agent.path, ctx.home);
  return isAbsolute(p) ? p : resolve(dirname(ctx.configPath), p);
}

function newPlanId(agent: string): string {
  return `plan_${Date.now()}${randomBytes(3).toString("hex")}_${agent}`;
}

async function readDocument(adapter: HarnessAdapter, path: string) {
  const bytes = await readIfExists(path);
  const original = bytes?.toString("utf8");
  const doc = openDocument(adapter, path, original ?? "");
  return { original, doc };
}

/** Builds the sync plan for one agent without writing anything. */
export async function planSync(config: Config, agentName: string, ctx: SyncContext): Promise<SyncPlan> {
  const agent = agentOf(config, agentName);
  const adapter = agentAdapter(agentName, agent);
  const path = agentFilePath(agentName, agent, ctx);
  const state = await readState(ctx.dataDir);
  const { original, doc } = await readDocument(adapter, path);
  const present = doc.entries();
  const notes: string[] = [];
  const token = config.listen !== undefined ? await reusableToken(agentName, state.tokens[agentName], present.get(GATEWAY_ENTRY), adapter, ctx, notes) : undefined;
  const { entries: desired, skipped } = desiredEntries(config, agentName, agent, {
    configPath: ctx.configPath,
    home: ctx.home,
    self: ctx.self,
    ...(token !== undefined ? { token } : {}),
  });
  const owned = ownedNames(state, agentName, path);
  const actions: SyncAction[] = [];
  const wanted = new Set(desired.map((d) => d.name));
  for (const want of desired) {
    const raw = present.get(want.name);
    const have = raw === undefined ? undefined : adapter.codec.decode(want.name, raw);
    if (raw === undefined) actions.push({ action: "add", name: want.name, detail: describeNew(want) });
    else if (have && sameEntry(have, want) && !usesPendingToken(want)) actions.push({ action: "unchanged", name: want.name });
    else actions.push({ action: "update", name: want.name, detail: describeChange(have, want) });
  }
  for (const name of present.keys()) {
    if (owned.has(name) && !wanted.has(name)) actions.push({ action: "remove", name });
  }
  const { duplicates, clashes } =
    agent.mode === "gateway" ? findDuplicates(config, agent, decodedEntries(adapter, present), new Set([...wanted, ...owned])) : { duplicates: [], clashes: [] };
  return {
    agent: agentName,
    type: adapter.type,
    mode: agent.mode,
    path,
    planId: newPlanId(agentName),
    actions,
    skipped,
    duplicates,
    clashes,
    notes,
    desired,
    original,
    kind: "sync",
  };
}

/** The plan with its duplicates removed too, in the same write (one backup, one rollback). */
export function withOffload(plan: SyncPlan): SyncPlan {
  if (plan.duplicates.length === 0) return plan;
  const removals: SyncAction[] = plan.duplicates.map((d) => ({ action: "remove", name: d.name, detail: servedAs(d) }));
  return { ...plan, actions: [...plan.actions, ...removals], duplicates: [] };
}

function servedAs(d: Duplicate): string {
  return d.server === d.name ? "served through the mcphub gateway" : `served through the mcphub gateway as ${d.server}`;
}

/** The file's entries as neutral entries (those the codec understands). */
function* decodedEntries(adapter: HarnessAdapter, present: Map<string, RawValue>): Iterable<NeutralEntry> {
  for (const [name, raw] of present) {
    const e = adapter.codec.decode(name, raw);
    if (e) yield e;
  }
}

/**
 * The agent's daemon token to write again: the one sync remembers, else the one already in the
 * harness file's gateway entry (written by hand from `mcphub token create`, or by a sync whose
 * bookkeeping was moved aside), provided it still authenticates as this agent. Undefined: a new
 * one is created on --write; when the agent has live tokens sync cannot read back, a note says so.
 */
async function reusableToken(
  agent: string,
  remembered: string | undefined,
  entry: RawValue | undefined,
  adapter: HarnessAdapter,
  ctx: SyncContext,
  notes: string[],
): Promise<string | undefined> {
  const valid = async (t: string) => !ctx.tokenValid || (await ctx.tokenValid(t, agent));
  if (remembered !== undefined && (await valid(remembered))) return remembered;
  const written = entry !== undefined ? adapter.codec.decode(GATEWAY_ENTRY, entry) : undefined;
  const auth = Object.entries(written?.headers ?? {}).find(([k]) => k.toLowerCase() === "authorization")?.[1];
  const bearer = /^Bearer\s+(\S+)$/i.exec(auth ?? "")?.[1];
  if (bearer !== undefined && bearer !== remembered && (await valid(bearer))) return bearer;
  const live = (await ctx.liveTokenIds?.(agent).catch(() => [])) ?? [];
  if (live.length) {
    notes.push(
      `agent ${agent} has ${live.length === 1 ? "a live token" : `${live.length} live tokens`} (${live.join(", ")}) that sync cannot read back (only hashes are stored); --write creates another. Revoke an unused one with \`mcphub token revoke ${live[0]}\`.`,
    );
  }
  return undefined;
}

/**
 * Offload plan for a gateway agent: once its file runs the gateway entry, entries that duplicate
 * servers the gateway already proxies for it (enabled, in scope) are removed from the file.
 */
export async function planOffload(config: Config, agentName: string, ctx: SyncContext): Promise<SyncPlan & { note?: string }> {
  const agent = agentOf(config, agentName);
  const adapter = agentAdapter(agentName, agent);
  const path = agentFilePath(agentName, agent, ctx);
  const { original, doc } = await readDocument(adapter, path);
  const present = doc.entries();
  const base = { agent: agentName, type: adapter.type, mode: agent.mode, path, planId: newPlanId(agentName), skipped: [], duplicates: [], clashes: [], notes: [], desired: [], original, kind: "offload" as const };
  if (agent.mode !== "gateway") return { ...base, actions: [], note: "direct-mode agent: nothing to offload" };
  if (!present.has(GATEWAY_ENTRY)) {
    return { ...base, actions: [], note: `no "${GATEWAY_ENTRY}" entry yet; run \`mcphub sync ${agentName} --write\` first` };
  }
  // By identity, never by name: an entry that only shares a name with a server is another server.
  const { duplicates, clashes } = findDuplicates(config, agent, decodedEntries(adapter, present), new Set([GATEWAY_ENTRY]));
  const actions: SyncAction[] = duplicates.map((d) => ({ action: "remove", name: d.name, detail: servedAs(d) }));
  return { ...base, actions, clashes };
}

function usesPendingToken(e: NeutralEntry): boolean {
  return Object.values(e.headers ?? {}).some((v) => v.includes(PENDING_TOKEN));
}

/** What an added entry will run or reach, so a dry run shows it; env and header values never. */
export function describeNew(want: NeutralEntry): string {
  const parts: string[] = [];
  if (want.command !== undefined) parts.push(`command ${JSON.stringify(want.command)}`);
  if (want.args?.length) parts.push(`args ${JSON.stringify(want.args)}`);
  if (want.url !== undefined) parts.push(`url ${JSON.stringify(want.url)}${want.transport === "sse" ? " (sse)" : ""}`);
  const names = (label: string, m: Record<string, string> | undefined) => {
    const keys = Object.keys(m ?? {}).sort();
    if (keys.length) parts.push(`${label} ${keys.join(", ")} (values redacted)`);
  };
  names("env", want.env);
  names("headers", want.headers);
  const text = parts.join("; ");
  return Buffer.byteLength(text) <= 1024 ? text : `${Buffer.from(text).subarray(0, 1020).toString("utf8").replace(/\uFFFD$/, "")}...`;
}

/** A field-by-field change summary; env and header values are never shown. */
export function describeChange(have: NeutralEntry | undefined, want: NeutralEntry): string {
  if (!have) return "replaces an entry mcphub cannot read";
  const parts: string[] = [];
  const show = (v: unknown) => JSON.stringify(v ?? null);
  if ((have.command ?? null) !== (want.command ?? null)) parts.push(`command ${show(have.command)} → ${show(want.command)}`);
  if (show(have.args ?? []) !== show(want.args ?? [])) parts.push(`args ${show(have.args ?? [])} → ${show(want.args ?? [])}`);
  if ((have.url ?? null) !== (want.url ?? null)) parts.push(`url ${show(have.url)} → ${show(want.url)}`);
  if (have.url !== undefined && want.url !== undefined && (have.transport ?? "http") !== (want.transport ?? "http")) {
    parts.push(`transport ${have.transport ?? "http"} → ${want.transport ?? "http"}`);
  }
  const mapDiff = (label: string, a: Record<string, string> = {}, b: Record<string, string> = {}) => {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      if (!(k in a)) parts.push(`${label}.${k} added`);
      else if (!(k in b)) parts.push(`${label}.${k} removed`);
      else if (a[k] !== b[k] || b[k]?.includes(PENDING_TOKEN)) {
        parts.push(`${label}.${k} changed (value redacted)`);
      }
    }
  };
  mapDiff("env", have.env, want.env);
  mapDiff("headers", have.headers, want.headers);
  const text = parts.join("; ") || "entry shape normalised";
  return Buffer.byteLength(text) <= 240 ? text : `${Buffer.from(text).subarray(0, 236).toString("utf8").replace(/\uFFFD$/, "")}...`;
}

export interface WriteResult {
  plan: SyncPlan;
  written: boolean;
  /** Backup path, null when the file did not exist before. */
  backup?: string | null;
}

/** Applies a plan: backup, edit only the MCP section, record ownership and the plan id. */
export async function writePlan(config: Config, plan: SyncPlan, ctx: SyncContext): Promise<WriteResult> {
  if (plan.actions.every((a) => a.action === "unchanged")) return { plan, written: false };
  const agent = agentOf(config, plan.agent);
  const adapter = agentAdapter(plan.agent, agent);
  const state = await readState(ctx.dataDir);
  const { original, doc } = await readDocument(adapter, plan.path);
  if (original !== plan.original) {
    throw new SyncError(`${plan.path} changed while planning; run the sync again`);
  }
  let desired = plan.desired;
  const reused = desired.find((e) => e.name === GATEWAY_ENTRY && e.url !== undefined)?.headers?.Authorization?.replace(/^Bearer\s+/, "");
  if (config.listen !== undefined && reused !== undefined && !reused.includes(PENDING_TOKEN)) state.tokens[plan.agent] = reused;
  if (desired.some(usesPendingToken)) {
    if (!ctx.createToken) throw new SyncError("config sets listen, but no token store is available to create the agent's daemon token");
    const token = await ctx.createToken(plan.agent);
    state.tokens[plan.agent] = token;
    desired = desired.map((e) =>
      e.headers ? { ...e, headers: Object.fromEntries(Object.entries(e.headers).map(([k, v]) => [k, v.replace(PENDING_TOKEN, token)])) } : e,
    );
  }
  const byName = new Map(desired.map((d) => [d.name, d]));
  for (const action of plan.actions) {
    if (action.action === "remove") doc.remove(action.name);
    else if (action.action === "add" || action.action === "update") {
      const entry = byName.get(action.name);
      if (entry) doc.upsert(action.name, adapter.codec.encode(entry), adapter.codec.managedKeys);
    }
  }
  const backup = original === undefined ? null : await backupFile(plan.path);
  const before = state.agents[plan.agent];
  const written = doc.text();
  await writeAtomic(plan.path, written);
  try {
    recordPlan(state, plan, backup, before, { type: adapter.type, ...fingerprint(adapter, plan.path, Buffer.from(written, "utf8")) });
    await writeState(ctx.dataDir, state);
  } catch (err) {
    // Bookkeeping failed: put the harness file back as it was so nothing is left unowned.
    if (backup === null) await unlink(plan.path).catch(() => undefined);
    else await writeAtomic(plan.path, (await readIfExists(backup)) ?? Buffer.alloc(0));
    throw err;
  }
  return { plan, written: true, backup };
}

/** What a rollback compares against: the file's hash and each MCP entry's hash. */
function fingerprint(adapter: HarnessAdapter, path: string, bytes: Buffer): { written_sha256: string; written_entries?: Record<string, string> } {
  const out: { written_sha256: string; written_entries?: Record<string, string> } = { written_sha256: sha256(bytes) };
  const entries = entryHashes(adapter, path, bytes);
  if (entries) out.written_entries = entries;
  return out;
}

function entryHashes(adapter: HarnessAdapter, path: string, bytes: Buffer): Record<string, string> | undefined {
  try {
    const entries = openDocument(adapter, path, bytes.toString("utf8")).entries();
    return Object.fromEntries([...entries].map(([name, raw]) => [name, sha256(Buffer.from(canonicalJson(raw), "utf8"))]));
  } catch {
    return undefined;
  }
}

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function recordPlan(
  state: SyncState,
  plan: SyncPlan,
  backup: string | null,
  before: SyncState["agents"][string] | undefined,
  written: { type: string; written_sha256: string; written_entries?: Record<string, string> },
): void {
  const ownedBefore = before && before.path === plan.path ? before.owned : [];
  let owned: string[];
  if (plan.kind === "sync") {
    owned = plan.desired.map((d) => d.name);
  } else {
    const removed = new Set(plan.actions.filter((a) => a.action === "remove").map((a) => a.name));
    owned = ownedBefore.filter((n) => !removed.has(n));
  }
  state.agents[plan.agent] = { path: plan.path, owned };
  state.plans[plan.planId] = {
    agent: plan.agent,
    path: plan.path,
    backup,
    created_at: new Date().toISOString(),
    kind: plan.kind,
    owned_before: ownedBefore,
    owned_path_before: before?.path ?? null,
    ...written,
  };
}

export interface RollbackResult {
  planId: string;
  agent: string;
  path: string;
  restored: "backup" | "deleted";
  backup: string | null;
  /** Where the file as it was just before the rollback was saved (null: there was no file). */
  saved: string | null;
}

/**
 * Restores the file a plan wrote to exactly what it was before (or deletes it if it was new).
 * Refuses when the file changed after the plan (saying what changed) unless `force`, saves the
 * current file first either way, and refuses a second rollback of the same plan.
 */
export async function rollbackPlan(planId: string, ctx: Pick<SyncContext, "dataDir">, opts: { force?: boolean } = {}): Promise<RollbackResult> {
  const state = await readState(ctx.dataDir);
  const rec = state.plans[planId];
  if (!rec) {
    const known = Object.keys(state.plans).sort().slice(-5);
    throw new SyncError(`unknown plan "${planId}"${known.length ? `; recent plans: ${known.join(", ")}` : " (no plan has been written yet)"}`);
  }
  if (rec.rolled_back) {
    throw new SyncError(
      `plan ${planId} was already rolled back (${rec.rolled_back.at}); rolling it back again would overwrite what came after${rec.rolled_back.saved ? ` (the file as it was before that rollback is ${rec.rolled_back.saved})` : ""}`,
    );
  }
  const current = await readIfExists(rec.path);
  if (!opts.force) {
    const changed = changeSince(rec, current);
    if (changed) {
      throw new SyncError(
        `${rec.path} changed after plan ${planId} was written (${changed}); rolling back would lose that. Pass --force to roll back anyway (the current file is saved first)`,
      );
    }
  }
  const saved = current === undefined ? null : await backupFile(rec.path);
  if (rec.backup === null) {
    await unlink(rec.path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
  } else {
    const bytes = await readIfExists(rec.backup);
    if (bytes === undefined) throw new SyncError(`backup ${rec.backup} of plan ${planId} is gone; cannot roll back`);
    await writeAtomic(rec.path, bytes);
  }
  if (rec.owned_path_before !== null) state.agents[rec.agent] = { path: rec.owned_path_before, owned: rec.owned_before };
  else delete state.agents[rec.agent];
  rec.rolled_back = { at: new Date().toISOString(), saved };
  await writeState(ctx.dataDir, state);
  return { planId, agent: rec.agent, path: rec.path, restored: rec.backup === null ? "deleted" : "backup", backup: rec.backup, saved };
}

/** What changed in the file since a plan wrote it, in words; undefined when nothing did. */
function changeSince(rec: PlanRecord, current: Buffer | undefined): string | undefined {
  if (rec.written_sha256 === undefined) {
    return "this plan was recorded before mcphub kept track of what it wrote, so later edits cannot be ruled out";
  }
  if (current === undefined) return "the file was deleted";
  if (sha256(current) === rec.written_sha256) return undefined;
  const adapter = rec.type ? adapterFor(rec.type) : undefined;
  const now = adapter ? entryHashes(adapter, rec.path, current) : undefined;
  const then = rec.written_entries;
  if (!adapter || !now || !then) return "its contents differ from what the plan wrote";
  const added = Object.keys(now).filter((n) => !(n in then));
  const removed = Object.keys(then).filter((n) => !(n in now));
  const edited = Object.keys(now).filter((n) => n in then && now[n] !== then[n]);
  const section = adapter.section.join(".");
  const parts = [
    ...(added.length ? [`${section} entries added: ${added.join(", ")}`] : []),
    ...(removed.length ? [`${section} entries removed: ${removed.join(", ")}`] : []),
    ...(edited.length ? [`${section} entries edited: ${edited.join(", ")}`] : []),
  ];
  return parts.length ? parts.join("; ") : `settings outside ${section} were edited`;
}

/** The JSON a CLI prints for a plan (no internal fields, no secrets). */
export function publicPlan(plan: SyncPlan) {
  return {
    agent: plan.agent,
    type: plan.type,
    mode: plan.mode,
    path: plan.path,
    planId: plan.planId,
    actions: plan.actions,
    ...(plan.skipped.length ? { skipped: plan.skipped } : {}),
    ...(plan.duplicates.length ? { duplicates: plan.duplicates } : {}),
    ...(plan.clashes.length ? { clashes: plan.clashes } : {}),
    ...(plan.notes.length ? { notes: plan.notes } : {}),
  };
}
