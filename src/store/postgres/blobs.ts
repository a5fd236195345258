// Blob spaces in PostgreSQL: a blob is a row (mcphub_blobs) naming the version whose chunks
// (mcphub_blob_chunks, up to 1 MiB each) hold its bytes. A writer inserts chunks under a fresh
// version in one transaction on a connection of its own and commits by pointing the row at it
// (and dropping the old version's chunks) in that same transaction, so a reader sees the old blob
// or the new one whole, one commit (one WAL flush) covers the whole blob, and a writer that dies
// leaves nothing behind. The bytes are what the vault sealed: PostgreSQL never sees plaintext.
//
// Reads are what made a stored result slow to page (5.4x the files for 10 MB): node-postgres
// decodes bytea from hex text. Range reads go through a binary COPY instead (copyout.ts), fetch
// only the part of a chunk they need (`substring`, cheap because chunks are stored uncompressed,
// migration 2), and read ahead when a blob is read in order. Fetched ranges of a version are kept
// in a small cache shared by every reader of this process: a version's bytes never change, and
// the vault opens a new reader for every page, so page after page is served from one fetch. The
// stat the vault makes before every page is answered from memory too, while the notification
// connection is up: commits and removals notify "space/key" (follow.ts), so another replica's
// replacement or removal is seen within the notification's latency, as for documents.
import { randomBytes } from "node:crypto";
import { BlobChangedError, ShortReadError } from "../errors.js";
import type { BlobReader, BlobSpace, BlobStat, Blobs, BlobWriter } from "../types.js";
import { copyRows, int8, type CopyField } from "./copyout.js";
import { isUnavailable, type Db } from "./db.js";
import { DOC_CHANNEL } from "./docs.js";
import type { Follower } from "./follow.js";

const CHUNK = 1 << 20;
const KEY_RE = /^[A-Za-z0-9_-]{1,128}$/;

interface StatRow {
  key: string;
  version: string;
  size: string;
  modified: string;
}

function statOf(r: StatRow): BlobStat {
  return { key: r.key, version: r.version, size: Number(r.size), modified: Number(r.modified) };
}

/**
 * Reads are cached in aligned blocks of a blob version: a page read that crosses a block edge
 * needs no refetch, and a read that continues from the block before reads a chunk's worth ahead.
 */
const BLOCK = 256 * 1024;
const READ_AHEAD_BLOCKS = CHUNK / BLOCK;
/** Cached blocks per process: 8 MiB. */
const CACHE_BLOCKS = 32;
/** Cached stats per process. */
const CACHE_STATS = 1024;

export class PgBlobs implements Blobs {
  /** Blocks by `key version index`, least recently used first. */
  private readonly cache = new Map<string, Buffer>();
  /**
   * Stats by key, least recently used first. The vault checks a blob's version before every page
   * it reads; answering that from memory saves a round trip per page. Kept only while the
   * notification connection is up, since every commit and removal notifies "space/key" (and a
   * dropped connection clears it all); `epoch` keeps a stat read before a change from landing after it.
   */
  private readonly stats = new Map<string, BlobStat>();
  private epoch = 0;

  constructor(
    readonly space: BlobSpace,
    private readonly db: Db,
    private readonly follower?: Follower,
  ) {
    follower?.listen((changed, key) => {
      if (changed !== "*" && changed !== space) return;
      this.epoch++;
      if (key === undefined) this.stats.clear();
      else this.stats.delete(key);
    });
  }

  async create(key: string): Promise<BlobWriter> {
    if (!KEY_RE.test(key)) throw new Error(`invalid ${this.space} key ${JSON.stringify(key.slice(0, 40))}`);
    const version = randomBytes(12).toString("hex");
    const { db, space } = this;
    const c = await db.connect();
    let released = false;
    const release = (broken: boolean) => {
      if (released) return;
      released = true;
      c.release(broken);
    };
    try {
      await c.query("BEGIN");
    } catch (err) {
      release(isUnavailable(err));
      throw db.wrap(err);
    }
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let offset = 0;
    let done = false;
    // One chunk insert in flight while the next chunk is produced: the round trip overlaps the
    // sealing of the next chunk, and at most two chunks are held in memory.
    let inflight: Promise<unknown> | undefined;
    const settle = async () => {
      const p = inflight;
      inflight = undefined;
      if (p) await p;
    };
    const flush = async (all: boolean) => {
      while (pendingBytes >= CHUNK || (all && pendingBytes > 0)) {
        const joined = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, pendingBytes);
        const take = Math.min(CHUNK, joined.length);
        const chunk = joined.subarray(0, take);
        await settle();
        inflight = c.query("INSERT INTO mcphub_blob_chunks (space, key, version, off, len, written, bytes) VALUES ($1, $2, $3, $4, $5, $6, $7)", [space, key, version, offset, take, Date.now(), chunk]);
        // Not awaited here: a failure is seen by the next settle(). Never left unhandled meanwhile.
        inflight.catch(() => undefined);
        offset += take;
        const rest = joined.subarray(take);
        pending = rest.length > 0 ? [rest] : [];
        pendingBytes = rest.length;
      }
    };
    const fail = async (err: unknown): Promise<never> => {
      done = true;
      const broken = isUnavailable(err);
      if (!broken) {
        await inflight?.catch(() => undefined);
        await c.query("ROLLBACK").catch(() => undefined);
      }
      release(broken);
      throw db.wrap(err);
    };
    return {
      write: async (buffers) => {
        if (done) throw new Error("blob writer is closed");
        for (const b of buffers) {
          if (b.length === 0) continue;
          pending.push(b);
          pendingBytes += b.length;
        }
        try {
          await flush(false);
        } catch (err) {
          await fail(err);
        }
      },
      commit: async () => {
        if (done) throw new Error("blob writer is closed");
        try {
          await flush(true);
          await settle();
          const old = await c.query<{ version: string }>("SELECT version FROM mcphub_blobs WHERE space = $1 AND key = $2 FOR UPDATE", [space, key]);
          await c.query(
            "INSERT INTO mcphub_blobs (space, key, version, size, modified) VALUES ($1, $2, $3, $4, $5) " +
              "ON CONFLICT (space, key) DO UPDATE SET version = EXCLUDED.version, size = EXCLUDED.size, modified = EXCLUDED.modified",
            [space, key, version, offset, Date.now()],
          );
          const prev = old.rows[0]?.version;
          if (prev !== undefined) await c.query("DELETE FROM mcphub_blob_chunks WHERE space = $1 AND key = $2 AND version = $3", [space, key, prev]);
          await c.query("SELECT pg_notify($1, $2)", [DOC_CHANNEL, `${space}/${key}`]);
          await c.query("COMMIT");
        } catch (err) {
          await fail(err);
        }
        done = true;
        release(false);
        this.forget(key);
      },
      abort: async () => {
        if (done) return;
        done = true;
        await inflight?.catch(() => undefined);
        const ok = await c.query("ROLLBACK").then(
          () => true,
          () => false,
        );
        release(!ok);
      },
    };
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    if (!KEY_RE.test(key)) return undefined;
    const cacheable = this.follower?.following === true;
    const hit = cacheable ? this.stats.get(key) : undefined;
    if (hit) {
      this.stats.delete(key);
      this.stats.set(key, hit);
      return hit;
    }
    const epoch = this.epoch;
    const rows = await this.db.query<StatRow>("SELECT key, version, size::text, modified::text FROM mcphub_blobs WHERE space = $1 AND key = $2", [this.space, key]);
    const st = rows[0] ? statOf(rows[0]) : undefined;
    if (st && cacheable && this.follower?.following === true && epoch === this.epoch) {
      this.stats.set(key, st);
      if (this.stats.size > CACHE_STATS) {
        const oldest = this.stats.keys().next().value;
        if (oldest !== undefined) this.stats.delete(oldest);
      }
    }
    return st;
  }

  async open(key: string): Promise<BlobReader | undefined> {
    const st = await this.stat(key);
    return st ? this.reader(st) : undefined;
  }

  async openAt(seen: BlobStat): Promise<BlobReader | undefined> {
    return this.reader(seen);
  }

  private reader(st: BlobStat): BlobReader {
    return {
      version: st.version,
      size: st.size,
      read: async (into, position) => {
        if (into.length === 0) return;
        const end = position + into.length;
        if (end > st.size) throw new ShortReadError();
        const first = Math.floor(position / BLOCK);
        const last = Math.floor((end - 1) / BLOCK);
        const blocks: (Buffer | undefined)[] = [];
        for (let i = first; i <= last; i++) blocks.push(this.block(st, i));
        const missing = blocks.indexOf(undefined);
        if (missing >= 0) {
          const from = first + missing;
          // In order (the block before is here): read a chunk's worth ahead, else just what is asked.
          const ahead = this.block(st, from - 1) ? READ_AHEAD_BLOCKS - 1 : 0;
          const to = Math.min(Math.floor((st.size - 1) / BLOCK), Math.max(last, from + ahead));
          const bytes = await this.fetch(st, from * BLOCK, Math.min(st.size, (to + 1) * BLOCK));
          for (let i = from; i <= to; i++) {
            const b = bytes.subarray((i - from) * BLOCK, (i - from + 1) * BLOCK);
            this.keep(st, i, b);
            if (i <= last) blocks[i - first] = b;
          }
        }
        for (let i = first; i <= last; i++) {
          const b = blocks[i - first] as Buffer;
          const off = i * BLOCK;
          const from = Math.max(position, off);
          const to = Math.min(end, off + b.length);
          b.copy(into, from - position, from - off, to - off);
        }
      },
      close: async () => undefined,
    };
  }

  private block(st: BlobStat, index: number): Buffer | undefined {
    if (index < 0) return undefined;
    const id = `${st.key} ${st.version} ${index}`;
    const b = this.cache.get(id);
    if (b) {
      this.cache.delete(id);
      this.cache.set(id, b);
    }
    return b;
  }

  private keep(st: BlobStat, index: number, bytes: Buffer): void {
    const id = `${st.key} ${st.version} ${index}`;
    this.cache.delete(id);
    this.cache.set(id, bytes);
    while (this.cache.size > CACHE_BLOCKS) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }

  /** Drops cached blocks of a key this process replaced or removed. */
  private forget(key: string): void {
    this.epoch++;
    this.stats.delete(key);
    for (const id of [...this.cache.keys()]) if (id.startsWith(`${key} `)) this.cache.delete(id);
  }

  /** Bytes [from, to) of a blob version, as one buffer; BlobChangedError when its chunks are gone. */
  private async fetch(st: BlobStat, from: number, to: number): Promise<Buffer> {
    const lit = (s: string) => `'${s}'`;
    // Inlined, since COPY takes no parameters: the space is one of ours, the key matched KEY_RE
    // (letters, digits, _ and -), the version is hex written by a writer (re-checked here), and
    // the positions are integers.
    if (!KEY_RE.test(st.key) || !/^[0-9a-f]{1,64}$/.test(st.version) || !Number.isSafeInteger(from) || !Number.isSafeInteger(to)) {
      throw new Error(`invalid blob reference ${JSON.stringify(st.key.slice(0, 40))}`);
    }
    const select =
      `SELECT GREATEST(off, ${from})::int8, substring(bytes FROM (GREATEST(off, ${from}) - off + 1)::int FOR (LEAST(off + len, ${to}) - GREATEST(off, ${from}))::int) ` +
      `FROM mcphub_blob_chunks WHERE space = ${lit(this.space)} AND key = ${lit(st.key)} AND version = ${lit(st.version)} AND off < ${to} AND off + len > ${from} ORDER BY off`;
    const c = await this.db.connect();
    let broken = false;
    let rows: CopyField[][];
    try {
      rows = await copyRows(c, select);
    } catch (err) {
      broken = isUnavailable(err);
      throw this.db.wrap(err);
    } finally {
      c.release(broken);
    }
    const only = rows.length === 1 ? rows[0] : undefined;
    if (only?.[1]?.length === to - from && int8(only[0] ?? null) === from) return only[1];
    const out = Buffer.allocUnsafe(to - from);
    let filled = 0;
    for (const [at, bytes] of rows) {
      // Contiguous from `from`: a gap means the version's chunks went (replaced or removed).
      if (!bytes || int8(at ?? null) !== from + filled) break;
      bytes.copy(out, filled);
      filled += bytes.length;
    }
    if (filled < out.length) throw new BlobChangedError(st.key);
    return out;
  }

  async list(): Promise<BlobStat[]> {
    const rows = await this.db.query<StatRow>("SELECT key, version, size::text, modified::text FROM mcphub_blobs WHERE space = $1 ORDER BY key", [this.space]);
    return rows.map(statOf);
  }

  async remove(key: string): Promise<boolean> {
    return this.removeWhere(key, undefined);
  }

  async removeIfOlder(key: string, cutoff: number): Promise<boolean> {
    return this.removeWhere(key, cutoff);
  }

  private async removeWhere(key: string, cutoff: number | undefined): Promise<boolean> {
    this.forget(key);
    return this.db.transaction(async (c) => {
      const res = await c.query<{ version: string }>(
        cutoff === undefined
          ? "DELETE FROM mcphub_blobs WHERE space = $1 AND key = $2 RETURNING version"
          : "DELETE FROM mcphub_blobs WHERE space = $1 AND key = $2 AND modified <= $3 RETURNING version",
        cutoff === undefined ? [this.space, key] : [this.space, key, cutoff],
      );
      const v = res.rows[0]?.version;
      if (v === undefined) return false;
      await c.query("DELETE FROM mcphub_blob_chunks WHERE space = $1 AND key = $2 AND version = $3", [this.space, key, v]);
      await c.query("SELECT pg_notify($1, $2)", [DOC_CHANNEL, `${this.space}/${key}`]);
      return true;
    });
  }

  async sweep(cutoff: number): Promise<void> {
    // Chunks no blob row names, written before the cutoff: a writer died before its commit.
    await this.db.query(
      "DELETE FROM mcphub_blob_chunks c WHERE c.space = $1 AND c.written <= $2 AND NOT EXISTS (SELECT 1 FROM mcphub_blobs b WHERE b.space = c.space AND b.key = c.key AND b.version = c.version)",
      [this.space, cutoff],
    );
  }
}
