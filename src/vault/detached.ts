// The detached-call journal: one small encrypted record per detached call in the store's
// `detached` space (vault/detached/<callId>.rec on the files, a row in PostgreSQL), rewritten
// atomically as the call moves pending → done | failed. Any gateway process (and, on a shared
// store, any replica) can read it, so a finished detached result survives a restart and is
// pollable everywhere. The owner {pid, instance} lets a reader tell a pending call whose gateway
// died (it will never finish) from a live one: by pid on the files, by the replica's heartbeat in
// PostgreSQL (the store's ownerAlive).
import { z } from "zod";
import { FileDocs, storeOf, type Docs, type Owner, type Store } from "../store/index.js";
import { deriveKey } from "./crypto.js";
import { VaultTamperedError } from "./errors.js";
import { openKeyring, type Keyring } from "./keys.js";
import { SealedFileError, openSealedBytes, sealBytes } from "./sealedfile.js";

interface DetachedBase {
  callId: string;
  server: string;
  tool: string;
  namespaced: string;
  agent: string;
  started: number;
  owner: { pid: number; instance: string };
}

export type DetachedRecord = DetachedBase &
  (
    | { state: "pending" }
    | { state: "failed"; error: string; finished: number }
    /** resultJson: the finalised CallToolResult JSON (small; a receipt when the result was big). */
    | { state: "done"; finished: number; resultJson: string }
  );

const BaseSchema = z.object({
  callId: z.string(),
  server: z.string(),
  tool: z.string(),
  namespaced: z.string(),
  agent: z.string(),
  started: z.number(),
  owner: z.object({ pid: z.number().int(), instance: z.string() }),
});
const RecordSchema = z.discriminatedUnion("state", [
  BaseSchema.extend({ state: z.literal("pending") }),
  BaseSchema.extend({ state: z.literal("failed"), error: z.string(), finished: z.number() }),
  BaseSchema.extend({ state: z.literal("done"), finished: z.number(), resultJson: z.string() }),
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
    if (rec.owner.pid === process.pid) this.store.claim(rec.owner.instance);
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
    let count = 0;
    let pending = 0;
    for (const { key } of await this.docs.list()) {
      try {
        const rec = await this.get(key, now);
        if (!rec) continue;
        count++;
        if (rec.state === "pending") pending++;
      } catch (err) {
        if (!(err instanceof VaultTamperedError)) throw err;
      }
    }
    return { count, pending };
  }

  private async isExpired(rec: DetachedRecord, now: number): Promise<boolean> {
    if (rec.state !== "pending") return rec.finished + this.retentionMs <= now;
    return rec.started + this.retentionMs <= now && !(await this.store.ownerAlive(rec.owner));
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
