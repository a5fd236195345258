// Blob spaces in PostgreSQL: a blob is a row (mcphub_blobs) naming the version whose chunks
// (mcphub_blob_chunks, up to 1 MiB each) hold its bytes. A writer inserts chunks under a fresh
// version and commits by pointing the row at it (and dropping the old version's chunks) in one
// transaction, so a reader sees the old blob or the new one whole; a range read fetches only the
// chunks it overlaps. The bytes are what the vault sealed: PostgreSQL never sees plaintext.
import { randomBytes } from "node:crypto";
import { BlobChangedError, ShortReadError } from "../errors.js";
import type { BlobReader, BlobSpace, BlobStat, Blobs, BlobWriter } from "../types.js";
import type { Db } from "./db.js";

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

export class PgBlobs implements Blobs {
  constructor(
    readonly space: BlobSpace,
    private readonly db: Db,
  ) {}

  async create(key: string): Promise<BlobWriter> {
    if (!KEY_RE.test(key)) throw new Error(`invalid ${this.space} key ${JSON.stringify(key.slice(0, 40))}`);
    const version = randomBytes(12).toString("hex");
    const { db, space } = this;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let offset = 0;
    let done = false;
    const flush = async (all: boolean) => {
      while (pendingBytes >= CHUNK || (all && pendingBytes > 0)) {
        const joined = Buffer.concat(pending, pendingBytes);
        const take = Math.min(CHUNK, joined.length);
        const chunk = joined.subarray(0, take);
        await db.query("INSERT INTO mcphub_blob_chunks (space, key, version, off, len, written, bytes) VALUES ($1, $2, $3, $4, $5, $6, $7)", [space, key, version, offset, take, Date.now(), chunk]);
        offset += take;
        const rest = joined.subarray(take);
        pending = rest.length > 0 ? [rest] : [];
        pendingBytes = rest.length;
      }
    };
    const dropChunks = () => db.query("DELETE FROM mcphub_blob_chunks WHERE space = $1 AND key = $2 AND version = $3", [space, key, version]);
    return {
      write: async (buffers) => {
        if (done) throw new Error("blob writer is closed");
        for (const b of buffers) {
          pending.push(b);
          pendingBytes += b.length;
        }
        await flush(false);
      },
      commit: async () => {
        if (done) throw new Error("blob writer is closed");
        done = true;
        try {
          await flush(true);
          await db.transaction(async (c) => {
            const old = await c.query<{ version: string }>("SELECT version FROM mcphub_blobs WHERE space = $1 AND key = $2 FOR UPDATE", [space, key]);
            await c.query(
              "INSERT INTO mcphub_blobs (space, key, version, size, modified) VALUES ($1, $2, $3, $4, $5) " +
                "ON CONFLICT (space, key) DO UPDATE SET version = EXCLUDED.version, size = EXCLUDED.size, modified = EXCLUDED.modified",
              [space, key, version, offset, Date.now()],
            );
            const prev = old.rows[0]?.version;
            if (prev !== undefined) await c.query("DELETE FROM mcphub_blob_chunks WHERE space = $1 AND key = $2 AND version = $3", [space, key, prev]);
          });
        } catch (err) {
          await dropChunks().catch(() => undefined);
          throw err;
        }
      },
      abort: async () => {
        done = true;
        await dropChunks().catch(() => undefined);
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
    const { db, space } = this;
    // The chunks fetched last: a page read is far smaller than a chunk, and pages are read in
    // order, so one fetched chunk serves many reads (without this, paging 10 MB in 64 KiB pages
    // moved 160 MB out of PostgreSQL).
    let cached: { off: number; bytes: Buffer }[] = [];
    const covered = (position: number, end: number) => {
      let at = position;
      for (const c of cached) if (c.off <= at && c.off + c.bytes.length > at) at = c.off + c.bytes.length;
      return at >= end;
    };
    return {
      version: st.version,
      size: st.size,
      read: async (into, position) => {
        if (into.length === 0) return;
        const end = position + into.length;
        if (end > st.size) throw new ShortReadError();
        let rows: { off: number; bytes: Buffer }[];
        if (covered(position, end)) rows = cached;
        else {
          const got = await db.query<{ off: string; bytes: Buffer }>(
            "SELECT off::text, bytes FROM mcphub_blob_chunks WHERE space = $1 AND key = $2 AND version = $3 AND off < $5 AND off + len > $4 ORDER BY off",
            [space, st.key, st.version, position, end],
          );
          rows = got.map((r) => ({ off: Number(r.off), bytes: r.bytes }));
          cached = rows.slice(-2);
        }
        let filled = 0;
        for (const r of rows) {
          const off = r.off;
          if (off + r.bytes.length <= position + filled) continue;
          const from = Math.max(position, off);
          const to = Math.min(end, off + r.bytes.length);
          if (from !== position + filled) break;
          r.bytes.copy(into, from - position, from - off, to - off);
          filled = to - position;
        }
        if (filled < into.length) {
          // The chunks of that version are gone: the blob was replaced or removed meanwhile.
          throw new BlobChangedError(st.key);
        }
      },
      close: async () => undefined,
    };
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
