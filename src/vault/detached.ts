// The detached-call journal: one small encrypted record per detached call (a `detach: true` call,
// an MCP task, a plain call of a tool that must run as a task) in the store's `detached` space
// (vault/detached/<callId>.rec on the files, a row in PostgreSQL), rewritten atomically as the call
// moves pending → done | failed | cancelled. Any gateway process (and, on a shared store, any
// replica) can read it, so a finished result survives a restart and is pollable everywhere. The
// owner {pid, instance} lets a reader tell a pending call whose gateway died (it will never finish)
// from a live one: by pid on the files, by the replica's heartbeat in PostgreSQL (the store's
// ownerAlive). The task fields (origin, ttl, pollInterval, updated, statusMessage, downstreamTask)
// are optional: records written by older versions still read, and keep their old expiry rule.
import { z } from "zod";
import { FileDocs, storeOf, type Docs, type Owner, type Store } from "../store/index.js";
import { deriveKey } from "./crypto.js";
import { VaultTamperedError } from "./errors.js";
import { openKeyring, type Keyring } from "./keys.js";
import { SealedFileError, openSealedBytes, sealBytes } from "./sealedfile.js";

/** How a journaled call was started. */
export const DETACHED_ORIGINS = ["detach", "task", "auto"] as const;
export type DetachedOrigin = (typeof DETACHED_ORIGINS)[number];

/** A JSON-RPC error the call's request would have been answered with (an MCP task returns it from tasks/result). */
export interface RpcErrorRecord {
  code: number;
  message: string;
  data?: unknown;
}

interface DetachedBase {
  callId: string;
  server: string;
  tool: string;
  namespaced: string;
  agent: string;
  started: number;
  owner: { pid: number; instance: string };
  /** detach: call_tool {detach: true}; task: a task-augmented tools/call; auto: a plain call of a tool that must run as a task. */
  origin?: DetachedOrigin;
  /** The record's lifetime in ms from `started` (the actual one, after clamping). */
  ttl?: number;
  /** Suggested time between polls, in ms. */
  pollInterval?: number;
  /** When the record last changed (ms since the epoch). */
  updated?: number;
  /** Human-readable state, e.g. the downstream task's own status message or why it failed. */
  statusMessage?: string;
  /** The id of the task the downstream runs for this call, when it runs one; never shown to the agent. */
  downstreamTask?: string;
}

export type DetachedRecord = DetachedBase &
  (
    | { state: "pending" }
    /** rpcError: set when the call's request would have been answered with a JSON-RPC error. */
    | { state: "failed"; error: string; finished: number; rpcError?: RpcErrorRecord }
    /** resultJson: the finalised CallToolResult JSON (small; a receipt when the result was big). */
    | { state: "done"; finished: number; resultJson: string }
    /** Cancelled by the agent (tasks/cancel); whatever the call did after that is not recorded. */
    | { state: "cancelled"; finished: number }
  );

/** A finished task stays readable at least this long after it finished, whatever its ttl. */
export const FINISHED_GRACE_MS = 60_000;

const BaseSchema = z.object({
  callId: z.string(),
  server: z.string(),
  tool: z.string(),
  namespaced: z.string(),
  agent: z.string(),
  started: z.number(),
  owner: z.object({ pid: z.number().int(), instance: z.string() }),
  origin: z.enum(DETACHED_ORIGINS).optional(),
  ttl: z.number().int().positive().optional(),
  pollInterval: z.number().int().positive().optional(),
  updated: z.number().optional(),
  statusMessage: z.string().optional(),
  downstreamTask: z.string().optional(),
});
const RpcErrorSchema = z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });
const RecordSchema = z.discriminatedUnion("state", [
  BaseSchema.extend({ state: z.literal("pending") }),
  BaseSchema.extend({ state: z.literal("failed"), error: z.string(), finished: z.number(), rpcError: RpcErrorSchema.optional() }),
  BaseSchema.extend({ state: z.literal("done"), finished: z.number(), resultJson: z.string() }),
  BaseSchema.extend({ state: z.literal("cancelled"), finished: z.number() }),
]);

const MAGIC = Buffer.from("MCPHDET1", "ascii");
const CALL_ID = /^[A-Za-z0-9_-]{1,128}$/;

export interface DetachedJournalOptions {
  dataDir: string;
  /** Where the records are kept (default: the data directory's files). */
  store?: Store;
  retentionMs: number;
  env?: NodeJS.ProcessEnv;
  /** An already-opened keyring (saves a second scrypt run). */
  keyring?: Keyring;
}

export class DetachedJournal {
  private readonly docs: Docs;

  private constructor(
    private readonly key: Buffer,
    private readonly store: Store,
    private readonly retentionMs: number,
  ) {
    this.docs = store.docs("detached");
  }

  static async open(opts: DetachedJournalOptions): Promise<DetachedJournal> {
    if (!Number.isFinite(opts.retentionMs) || opts.retentionMs <= 0) {
      throw new Error(`result retention must be a positive duration, got ${opts.retentionMs} ms`);
    }
    const keyring = opts.keyring ?? (await openKeyring(opts.dataDir, opts.env ?? process.env, opts.store));
    const journal = new DetachedJournal(deriveKey(keyring.dataKey, "mcphub detached v1"), storeOf(opts.store ?? opts.dataDir), opts.retentionMs);
    if (journal.docs instanceof FileDocs) await journal.docs.ensureDir();
    await journal.prune();
    return journal;
  }

  /** Creates or replaces the record for rec.callId (atomic: readers see the old or the new one). */
  async write(rec: DetachedRecord): Promise<void> {
    if (!CALL_ID.test(rec.callId)) throw new Error(`invalid callId ${JSON.stringify(rec.callId.slice(0, 40))}`);
    const parsed = RecordSchema.parse(rec);
    // This process runs the call: its replica's heartbeat vouches for the pending record.
    if (rec.owner.pid === process.pid) await this.store.claim(rec.owner.instance);
    await this.docs.put(rec.callId, sealBytes(this.key, MAGIC, rec.callId, Buffer.from(JSON.stringify(parsed), "utf8")));
  }

  /** The record, or undefined when unknown or expired (a finished record expires `retentionMs`
   *  after it finished). Throws VaultTamperedError when the record is not authentic. */
  async get(callId: string, now: number = Date.now()): Promise<DetachedRecord | undefined> {
    const rec = await this.readRecord(callId);
    if (!rec) return undefined;
    return (await this.isExpired(rec, now)) ? undefined : rec;
  }

  /**
   * Whether the gateway process that runs a pending call is alive and is not this one (`other`):
   * the poll of a call this process does not run says pending only then.
   */
  async ownerRunsElsewhere(owner: Owner, mine: string): Promise<boolean> {
    if (this.store.kind === "files") return owner.pid !== process.pid && (await this.store.ownerAlive(owner));
    return owner.instance !== mine && (await this.store.ownerAlive(owner));
  }

  /** Removes expired records: finished ones past retention, and pending ones past retention
   *  whose owning process is gone (they can never finish). Returns how many went. */
  async prune(now: number = Date.now()): Promise<number> {
    await this.docs.sweep();
    let removed = 0;
    for (const { key } of await this.docs.list()) {
      let drop = false;
      try {
        const rec = await this.readRecord(key);
        drop = rec !== undefined && (await this.isExpired(rec, now));
      } catch (err) {
        if (!(err instanceof VaultTamperedError)) throw err;
        if (await this.docs.removeIfOlder(key, now - this.retentionMs)) removed++;
        continue;
      }
      if (drop && (await this.docs.remove(key))) removed++;
    }
    return removed;
  }

  /** Live records: how many, and how many of those are still pending. */
  async stats(now: number = Date.now()): Promise<{ count: number; pending: number }> {
    const live = await this.list(undefined, now);
    return { count: live.length, pending: live.filter((r) => r.state === "pending").length };
  }

  /**
   * Every live record (of one agent, when `agent` is given), newest first (by `started`, then
   * callId). Records that fail authentication are left out: they are nobody's to list.
   */
  async list(agent?: string, now: number = Date.now()): Promise<DetachedRecord[]> {
    const out: DetachedRecord[] = [];
    for (const { key } of await this.docs.list()) {
      try {
        const rec = await this.get(key, now);
        if (rec && (agent === undefined || rec.agent === agent)) out.push(rec);
      } catch (err) {
        if (!(err instanceof VaultTamperedError)) throw err;
      }
    }
    return out.sort((a, b) => b.started - a.started || (a.callId < b.callId ? -1 : a.callId > b.callId ? 1 : 0));
  }

  /**
   * With a ttl: gone `ttl` after it started, except while it still runs (pending, owner alive),
   * and a finished record stays at least FINISHED_GRACE_MS after finishing (a requestor polling at
   * the suggested interval must get to see a result that came late or under a short ttl). Without
   * one (older records): finished ones go `retentionMs` after finishing, pending ones
   * `retentionMs` after starting once their owner is gone.
   */
  private async isExpired(rec: DetachedRecord, now: number): Promise<boolean> {
    if (rec.ttl === undefined) {
      if (rec.state !== "pending") return rec.finished + this.retentionMs <= now;
      return rec.started + this.retentionMs <= now && !(await this.store.ownerAlive(rec.owner));
    }
    const end = rec.started + rec.ttl;
    if (rec.state === "pending") return end <= now && !(await this.store.ownerAlive(rec.owner));
    return Math.max(end, rec.finished + FINISHED_GRACE_MS) <= now;
  }

  private async readRecord(callId: string): Promise<DetachedRecord | undefined> {
    if (!CALL_ID.test(callId)) return undefined;
    const entry = await this.docs.get(callId);
    if (!entry) return undefined;
    let plain: Buffer;
    try {
      plain = openSealedBytes(entry.bytes, this.key, MAGIC, callId);
    } catch (err) {
      if (err instanceof SealedFileError) throw new VaultTamperedError(`detached record ${callId} failed authentication (${err.message})`);
      throw err;
    }
    const parsed = RecordSchema.safeParse(JSON.parse(plain.toString("utf8")));
    if (!parsed.success) throw new VaultTamperedError(`detached record ${callId} is malformed`);
    return parsed.data;
  }
}
