// The on-disk cache of tool vectors, in the data dir under `embeddings/`: one file per endpoint,
// model and dimension count, holding a vector per tool *content hash* (the hash of the text that
// was embedded). A tool whose text did not change keeps its vector across restarts and
// re-listings; only new or changed tools are sent to the endpoint.
//
// File layout (little-endian): "MCPHUBV1", u32 header length, header JSON {model, url, dimensions},
// then records of [32-byte SHA-256 of the text][dimensions × f32]. Written whole to a temp file
// (mode 0600), fsynced and renamed over the old one, so a reader never sees half a file. A file
// that does not parse is ignored (and replaced on the next save): the cache is only a cache.
import { createHash, hash, randomBytes } from "node:crypto";
import { chmod, mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";

const MAGIC = Buffer.from("MCPHUBV1", "ascii");
const HASH_BYTES = 32;
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

export interface CacheIdentity {
  url: string;
  model: string;
  dimensions: number | undefined;
}

/** The SHA-256 of a text, as the cache keys it. */
export function contentHash(text: string): string {
  // The one-shot form: a warm restart hashes every tool's text (11k texts: ~half the time of createHash).
  return hash("sha256", text, "hex");
}

/** One file per endpoint + model + dimensions: a different model never reuses another's vectors. */
export function cacheFileName(id: CacheIdentity): string {
  const key = createHash("sha256").update(`${id.url}\u0000${id.model}\u0000${id.dimensions ?? ""}`).digest("hex").slice(0, 24);
  return `${key}.vec`;
}

export interface CacheFileInfo {
  file: string;
  model: string;
  dimensions: number;
  vectors: number;
  bytes: number;
}

export class VectorCache {
  private readonly vectors = new Map<string, Float32Array>();
  /** Hashes asked for in this process: on save, vectors nobody asked for are dropped when they dominate. */
  private readonly used = new Set<string>();
  private dimensions: number | undefined;
  private dirty = false;
  private saving: Promise<void> | undefined;

  private constructor(
    readonly dir: string,
    readonly file: string,
    private readonly id: CacheIdentity,
  ) {}

  /** Opens (loads) the cache for this endpoint and model; a missing or damaged file is an empty cache. */
  static async open(dataDir: string, id: CacheIdentity): Promise<VectorCache> {
    const dir = join(dataDir, "embeddings");
    const cache = new VectorCache(dir, join(dir, cacheFileName(id)), id);
    await cache.load();
    return cache;
  }

  get size(): number {
    return this.vectors.size;
  }

  get dims(): number | undefined {
    return this.dimensions;
  }

  get(hash: string): Float32Array | undefined {
    const v = this.vectors.get(hash);
    if (v) this.used.add(hash);
    return v;
  }

  set(hash: string, vector: Float32Array): void {
    if (this.dimensions !== undefined && vector.length !== this.dimensions) {
      // The model changed its output size (a different quantisation or version under one name):
      // the old vectors are from another space and cannot be mixed with the new ones.
      this.vectors.clear();
      this.used.clear();
    }
    this.dimensions = vector.length;
    this.vectors.set(hash, vector);
    this.used.add(hash);
    this.dirty = true;
  }

  /** Writes the cache if it changed (one write at a time; a change during a write is saved after it). */
  async save(): Promise<void> {
    while (this.saving) await this.saving;
    if (!this.dirty) return;
    this.dirty = false;
    this.saving = this.write().finally(() => {
      this.saving = undefined;
    });
    await this.saving;
  }

  private async load(): Promise<void> {
    let buf: Buffer;
    try {
      buf = await readFile(this.file);
    } catch {
      return;
    }
    if (buf.length < MAGIC.length + 4 || !buf.subarray(0, MAGIC.length).equals(MAGIC)) return;
    const headerLength = buf.readUInt32LE(MAGIC.length);
    const start = MAGIC.length + 4 + headerLength;
    if (start > buf.length) return;
    let header: { model?: unknown; dimensions?: unknown };
    try {
      header = JSON.parse(buf.subarray(MAGIC.length + 4, start).toString("utf8")) as typeof header;
    } catch {
      return;
    }
    const dims = header.dimensions;
    if (header.model !== this.id.model || typeof dims !== "number" || !Number.isInteger(dims) || dims <= 0) return;
    const record = HASH_BYTES + dims * 4;
    if ((buf.length - start) % record !== 0) return;
    const count = (buf.length - start) / record;
    // The header is padded so that every vector starts on a 4-byte boundary: vectors are views
    // into the file's buffer, not copies (a warm restart reads 11k vectors in a few ms).
    const aligned = (buf.byteOffset + start + HASH_BYTES) % 4 === 0;
    for (let i = 0; i < count; i++) {
      const at = start + i * record;
      const hash = buf.subarray(at, at + HASH_BYTES).toString("hex");
      let v: Float32Array;
      if (aligned) v = new Float32Array(buf.buffer, buf.byteOffset + at + HASH_BYTES, dims);
      else {
        v = new Float32Array(dims);
        new Uint8Array(v.buffer).set(buf.subarray(at + HASH_BYTES, at + record));
      }
      this.vectors.set(hash, v);
    }
    this.dimensions = dims;
  }

  private async write(): Promise<void> {
    const dims = this.dimensions;
    if (dims === undefined) return;
    // Vectors of tools no longer seen are kept (servers come and go) until they outnumber the live ones.
    const keep = this.vectors.size > 2 * Math.max(1, this.used.size) ? [...this.used] : [...this.vectors.keys()];
    const json = JSON.stringify({ model: this.id.model, url: this.id.url, dimensions: dims });
    // Pad the header with spaces (still valid JSON) so that vectors start at 4-byte offsets.
    const pad = (4 - ((MAGIC.length + 4 + Buffer.byteLength(json) + HASH_BYTES) % 4)) % 4;
    const header = Buffer.from(json + " ".repeat(pad), "utf8");
    const record = HASH_BYTES + dims * 4;
    const out = Buffer.allocUnsafe(MAGIC.length + 4 + header.length + keep.length * record);
    MAGIC.copy(out, 0);
    out.writeUInt32LE(header.length, MAGIC.length);
    header.copy(out, MAGIC.length + 4);
    let at = MAGIC.length + 4 + header.length;
    for (const hash of keep) {
      const v = this.vectors.get(hash);
      if (!v) continue;
      out.write(hash, at, "hex");
      Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(out, at + HASH_BYTES);
      at += record;
    }
    await mkdir(this.dir, { recursive: true, mode: DIR_MODE });
    if (((await stat(this.dir)).mode & 0o777) !== DIR_MODE) await chmod(this.dir, DIR_MODE);
    const tmp = join(this.dir, `.${randomBytes(8).toString("hex")}.tmp`);
    const handle = await open(tmp, "wx", FILE_MODE);
    try {
      await handle.writeFile(out.subarray(0, at));
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(tmp, this.file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }
}

/** What the cache directory holds, per file (for doctor): model, dimensions, vector count, size. */
export async function describeCacheDir(dataDir: string): Promise<CacheFileInfo[]> {
  const dir = join(dataDir, "embeddings");
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(".vec")).sort();
  } catch {
    return [];
  }
  const out: CacheFileInfo[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      const handle = await open(file, "r");
      try {
        const size = (await handle.stat()).size;
        const head = Buffer.alloc(Math.min(size, 4096));
        await handle.read(head, 0, head.length, 0);
        if (!head.subarray(0, MAGIC.length).equals(MAGIC)) continue;
        const len = head.readUInt32LE(MAGIC.length);
        const header = JSON.parse(head.subarray(MAGIC.length + 4, MAGIC.length + 4 + len).toString("utf8")) as { model: string; dimensions: number };
        const body = size - (MAGIC.length + 4 + len);
        out.push({ file, model: header.model, dimensions: header.dimensions, vectors: Math.floor(body / (HASH_BYTES + header.dimensions * 4)), bytes: size });
      } finally {
        await handle.close();
      }
    } catch {
      // an unreadable or foreign file: not ours to describe
    }
  }
  return out;
}
