// The detached-call journal: one small encrypted record per detached call under vault/detached/,
// rewritten atomically as the call moves pending → done | failed. Any gateway process of the same
// user can read it, so a finished detached result survives a restart. The owner {pid, instance}
// lets a reader tell a pending call whose gateway died (it will never finish) from a live one.
import { stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { deriveKey } from "./crypto.js";
import { VaultTamperedError } from "./errors.js";
import { STALE_TEMP_MS, ensurePrivateDir, isErrno, isPidAlive, listDir } from "./fsutil.js";
import { openKeyring, vaultPaths, type Keyring } from "./keys.js";
import { SealedFileError, readSealedFile, writeSealedFile } from "./sealedfile.js";

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
  retentionMs: number;
  env?: NodeJS.ProcessEnv;
  /** An already-opened keyring (saves a second scrypt run). */
  keyring?: Keyring;
}

export class DetachedJournal {
  private constructor(
    private readonly key: Buffer,
    private readonly dir: string,
    private readonly retentionMs: number,
  ) {}

  static async open(opts: DetachedJournalOptions): Promise<DetachedJournal> {
    if (!Number.isFinite(opts.retentionMs) || opts.retentionMs <= 0) {
      throw new Error(`result retention must be a positive duration, got ${opts.retentionMs} ms`);
    }
    const keyring = opts.keyring ?? (await openKeyring(opts.dataDir, opts.env ?? process.env));
    const journal = new DetachedJournal(deriveKey(keyring.dataKey, "mcphub detached v1"), vaultPaths(opts.dataDir).detached, opts.retentionMs);
    await ensurePrivateDir(journal.dir);
    await journal.prune();
    return journal;
  }

  /** Creates or replaces the record for rec.callId (atomic: readers see the old or the new one). */
  async write(rec: DetachedRecord): Promise<void> {
    if (!CALL_ID.test(rec.callId)) throw new Error(`invalid callId ${JSON.stringify(rec.callId.slice(0, 40))}`);
    const parsed = RecordSchema.parse(rec);
    await writeSealedFile(this.pathFor(rec.callId), this.key, MAGIC, rec.callId, Buffer.from(JSON.stringify(parsed), "utf8"));
  }

  /** The record, or undefined when unknown or expired (a finished record expires `retentionMs`
   *  after it finished). Throws VaultTamperedError when the file is not authentic. */
  async get(callId: string, now: number = Date.now()): Promise<DetachedRecord | undefined> {
    const rec = await this.readRecord(callId);
    if (!rec) return undefined;
    return this.isExpired(rec, now) ? undefined : rec;
  }

  /** Removes expired records: finished ones past retention, and pending ones past retention
   *  whose owning process is gone (they can never finish). Returns how many went. */
  async prune(now: number = Date.now()): Promise<number> {
    const names = await listDir(this.dir);
    let removed = 0;
    for (const name of names) {
      const path = join(this.dir, name);
      let drop = false;
      if (name.endsWith(".tmp")) {
        drop = await olderThan(path, now - STALE_TEMP_MS);
      } else if (name.endsWith(".rec")) {
        try {
          const rec = await this.readRecord(name.slice(0, -".rec".length));
          drop = rec !== undefined && this.isExpired(rec, now);
        } catch (err) {
          if (!(err instanceof VaultTamperedError)) throw err;
          drop = await olderThan(path, now - this.retentionMs);
        }
      }
      if (!drop) continue;
      try {
        await unlink(path);
        if (name.endsWith(".rec")) removed++;
      } catch (err) {
        if (!isErrno(err, "ENOENT")) throw err;
      }
    }
    return removed;
  }

  /** Live records: how many, and how many of those are still pending. */
  async stats(now: number = Date.now()): Promise<{ count: number; pending: number }> {
    const names = await listDir(this.dir);
    let count = 0;
    let pending = 0;
    for (const name of names) {
      if (!name.endsWith(".rec")) continue;
      try {
        const rec = await this.get(name.slice(0, -".rec".length), now);
        if (!rec) continue;
        count++;
        if (rec.state === "pending") pending++;
      } catch (err) {
        if (!(err instanceof VaultTamperedError)) throw err;
      }
    }
    return { count, pending };
  }

  private isExpired(rec: DetachedRecord, now: number): boolean {
    if (rec.state !== "pending") return rec.finished + this.retentionMs <= now;
    return rec.started + this.retentionMs <= now && !isPidAlive(rec.owner.pid);
  }

  private pathFor(callId: string): string {
    return join(this.dir, `${callId}.rec`);
  }

  private async readRecord(callId: string): Promise<DetachedRecord | undefined> {
    if (!CALL_ID.test(callId)) return undefined;
    let plain: Buffer | undefined;
    try {
      plain = await readSealedFile(this.pathFor(callId), this.key, MAGIC, callId);
    } catch (err) {
      if (err instanceof SealedFileError) throw new VaultTamperedError(`detached record ${callId} failed authentication (${err.message})`);
      throw err;
    }
    if (!plain) return undefined;
    const parsed = RecordSchema.safeParse(JSON.parse(plain.toString("utf8")));
    if (!parsed.success) throw new VaultTamperedError(`detached record ${callId} is malformed`);
    return parsed.data;
  }
}

async function olderThan(path: string, cutoff: number): Promise<boolean> {
  try {
    return (await stat(path)).mtimeMs <= cutoff;
  } catch {
    return false;
  }
}
