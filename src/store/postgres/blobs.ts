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
// the vault opens a new reader for every page, so page after page is served from one fetch.
import { randomBytes } from "node:crypto";
import { BlobChangedError, ShortReadError } from "../errors.js";
import type { BlobReader, BlobSpace, BlobStat, Blobs, BlobWriter } from "../types.js";
import { copyRows, int8, type CopyField } from "./copyout.js";
import { isUnavailable, type Db } from "./db.js";

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

/** One fetched range of a blob version, for the shared read cache. */
interface Segment {
  key: string;
  version: string;
  off: number;
  bytes: Buffer;
}

/** A random read fetches at least this much; one that continues the last fetch reads a chunk ahead. */
const MIN_FETCH = 256 * 1024;
const READ_AHEAD = CHUNK;
/** Cached ranges per process (each at most READ_AHEAD + a read's length). */
const CACHE_SEGMENTS = 8;

export class PgBlobs implements Blobs {
  private readonly cache: Segment[] = [];

  constructor(
    readonly space: BlobSpace,
    private readonly db: Db,
  ) {}

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
    const rows = await this.db.query<StatRow>("SELECT key, version, size::text, modified::text FROM mcphub_blobs WHERE space = $1 AND key = $2", [this.space, key]);
    return rows[0] ? statOf(rows[0]) : undefined;
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
        if (this.fromCache(st, into, position)) return;
        // In order: this read starts inside (or just after) the range fetched last for this version.
        const last = this.cache.find((s) => s.key === st.key && s.version === st.version);
        const sequential = last !== undefined && last.off <= position && position <= last.off + last.bytes.length;
        const fetchEnd = Math.min(st.size, Math.max(end, position + (sequential ? READ_AHEAD : MIN_FETCH)));
        const bytes = await this.fetch(st, position, fetchEnd);
        bytes.copy(into, 0, 0, into.length);
        this.remember({ key: st.key, version: st.version, off: position, bytes });
      },
      close: async () => undefined,
    };
  }

  /** Fills `into` from cached ranges of this version; false when they do not cover it. */
  private fromCache(st: BlobStat, into: Buffer, position: number): boolean {
    const end = position + into.length;
    for (const s of this.cache) {
      if (s.key !== st.key || s.version !== st.version) continue;
      if (s.off <= position && s.off + s.bytes.length >= end) {
        s.bytes.copy(into, 0, position - s.off, end - s.off);
        return true;
      }
    }
    return false;
  }

  private remember(seg: Segment): void {
    this.cache.unshift(seg);
    if (this.cache.length > CACHE_SEGMENTS) this.cache.pop();
  }

  /** Drops cached ranges of a key this process replaced or removed. */
  private forget(key: string): void {
    for (let i = this.cache.length - 1; i >= 0; i--) if (this.cache[i]?.key === key) this.cache.splice(i, 1);
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
