// The dense index beside the lexical one: one unit vector per tool (from the embeddings service),
// ranked by cosine similarity to the query's vector. It is pure (vectors in, ranking out) so that
// ranking stays testable without a network.
//
// Speed at 11,000 tools × 768 dimensions: an exact scan is ~8 M multiply-adds (several ms in
// JavaScript). Above EXACT_WORK the scan runs in two steps instead: a Hamming-distance pass over
// one bit per dimension (the sign of the vector minus the catalogue's mean vector, so the bits
// split the catalogue evenly), then exact cosine on the best RESCORE_FACTOR × limit candidates.
// bench/search-scale.ts reports its recall against the exact scan. Packing (on the first search
// after a change) computes only the sign bits; the vectors stay the arrays they came in (views
// into the cache file's buffer after a restart), never copied into one matrix.
import type { CatalogEntry } from "../types.js";

/** Above this many multiply-adds per query (tools × dimensions), use the two-step scan. */
export const EXACT_WORK = 2_000_000;
/** Candidates rescored exactly per result wanted (at least MIN_RESCORE). */
const RESCORE_FACTOR = 8;
const MIN_RESCORE = 200;
/** Vectors sampled (evenly) to estimate the catalogue's mean vector. */
const MEAN_SAMPLE = 1000;

export interface DenseMatch {
  entry: CatalogEntry;
  similarity: number;
}

interface Packed {
  entries: CatalogEntry[];
  dims: number;
  /** The vectors as given (no contiguous copy: only the rescored candidates are read in full). */
  vectors: Float32Array[];
  mean: Float32Array;
  /** Sign bits of (vector − mean), `words` Int32 per row. */
  bits: Int32Array;
  words: number;
}

export class DenseIndex {
  private readonly byServer = new Map<string, { entry: CatalogEntry; vector: Float32Array }[]>();
  private packed: Packed | undefined;
  private dims: number | undefined;

  /** Replaces one server's vectors (unit length, all of one dimension count). */
  setServer(server: string, items: { entry: CatalogEntry; vector: Float32Array }[]): void {
    const dims = items[0]?.vector.length;
    if (dims !== undefined && this.dims !== undefined && dims !== this.dims) {
      // Another dimension count means another model: the old vectors cannot be compared with it.
      this.byServer.clear();
    }
    if (items.length === 0) this.byServer.delete(server);
    else {
      this.byServer.set(server, items);
      this.dims = dims;
    }
    this.packed = undefined;
  }

  removeServer(server: string): void {
    if (this.byServer.delete(server)) this.packed = undefined;
  }

  hasServer(server: string): boolean {
    return this.byServer.has(server);
  }

  size(): number {
    let n = 0;
    for (const list of this.byServer.values()) n += list.length;
    return n;
  }

  get dimensions(): number | undefined {
    return this.dims;
  }

  /** The `limit` tools most similar to `query` (a unit vector), best first, ties by name. */
  search(query: Float32Array, limit: number, filter?: (e: CatalogEntry) => boolean): DenseMatch[] {
    const p = this.pack();
    if (!p || limit <= 0 || query.length !== p.dims) return [];
    const n = p.entries.length;
    let candidates: number[];
    if (n * p.dims <= EXACT_WORK) {
      candidates = [];
      for (let i = 0; i < n; i++) if (!filter || filter(p.entries[i] as CatalogEntry)) candidates.push(i);
    } else {
      candidates = this.hammingCandidates(p, query, Math.max(MIN_RESCORE, limit * RESCORE_FACTOR), filter);
    }
    const scored = candidates.map((i) => ({ i, s: dot(p.vectors[i] as Float32Array, query) }));
    scored.sort((a, b) => b.s - a.s || cmp((p.entries[a.i] as CatalogEntry).namespaced, (p.entries[b.i] as CatalogEntry).namespaced));
    return scored.slice(0, limit).map(({ i, s }) => ({ entry: p.entries[i] as CatalogEntry, similarity: s }));
  }

  /** The exact scan, whatever the catalogue size (the benchmark's reference for recall). */
  searchExact(query: Float32Array, limit: number): DenseMatch[] {
    const p = this.pack();
    if (!p || query.length !== p.dims) return [];
    const scored = p.entries.map((entry, i) => ({ entry, similarity: dot(p.vectors[i] as Float32Array, query) }));
    scored.sort((a, b) => b.similarity - a.similarity || cmp(a.entry.namespaced, b.entry.namespaced));
    return scored.slice(0, limit);
  }

  private hammingCandidates(p: Packed, query: Float32Array, want: number, filter?: (e: CatalogEntry) => boolean): number[] {
    const q = new Int32Array(p.words);
    signBits(query, p.mean, q, 0);
    // Counting sort by distance (0..dims): O(n), no comparison sort over the catalogue.
    const n = p.entries.length;
    const dist = new Uint16Array(n);
    const counts = new Uint32Array(p.dims + 2);
    const { bits, words } = p;
    const table = POPCOUNT16;
    for (let i = 0, off = 0; i < n; i++, off += words) {
      let h = 0;
      for (let w = 0; w < words; w++) {
        const x = (bits[off + w] as number) ^ (q[w] as number);
        h += (table[x & 0xffff] as number) + (table[x >>> 16] as number);
      }
      dist[i] = h;
      counts[h] = (counts[h] as number) + 1;
    }
    const out: number[] = [];
    // Walk distances from the nearest, taking whole distance classes until enough pass the filter.
    let threshold = 0;
    let taken = 0;
    while (threshold <= p.dims && taken < want) taken += counts[threshold++] as number;
    for (let i = 0; i < n; i++) {
      if ((dist[i] as number) < threshold && (!filter || filter(p.entries[i] as CatalogEntry))) out.push(i);
    }
    if (filter && out.length < want) {
      // The filter removed too many of the nearest: fall back to every allowed tool.
      out.length = 0;
      for (let i = 0; i < n; i++) if (filter(p.entries[i] as CatalogEntry)) out.push(i);
    }
    return out;
  }

  private pack(): Packed | undefined {
    if (this.packed) return this.packed;
    const dims = this.dims;
    if (dims === undefined) return undefined;
    const entries: CatalogEntry[] = [];
    const vectors: Float32Array[] = [];
    for (const server of [...this.byServer.keys()].sort()) {
      for (const item of this.byServer.get(server) ?? []) {
        entries.push(item.entry);
        vectors.push(item.vector);
      }
    }
    const n = entries.length;
    // The mean vector centres the sign bits; a sample of the catalogue estimates it as well as all
    // of it does, at a fraction of the cost of a warm restart.
    const step = Math.max(1, Math.floor(n / MEAN_SAMPLE));
    const sum = new Float64Array(dims);
    let sampled = 0;
    for (let i = 0; i < n; i += step, sampled++) {
      const v = vectors[i] as Float32Array;
      for (let d = 0; d < dims; d++) sum[d] = (sum[d] as number) + (v[d] as number);
    }
    const mean = new Float32Array(dims);
    for (let d = 0; d < dims; d++) mean[d] = (sum[d] as number) / Math.max(1, sampled);
    const words = Math.ceil(dims / 32);
    const bits = new Int32Array(n * words);
    for (let i = 0; i < n; i++) signBits(vectors[i] as Float32Array, mean, bits, i * words);
    this.packed = { entries, dims, vectors, mean, bits, words };
    return this.packed;
  }
}

/** Writes the sign bits of (v − mean) into `out` from `at`, 32 dimensions per word. */
function signBits(v: Float32Array, mean: Float32Array, out: Int32Array, at: number): void {
  const dims = v.length;
  let w = at;
  for (let base = 0; base < dims; base += 32) {
    let word = 0;
    const end = Math.min(32, dims - base);
    for (let b = 0; b < end; b++) if ((v[base + b] as number) > (mean[base + b] as number)) word |= 1 << b;
    out[w++] = word;
  }
}

function dot(v: Float32Array, q: Float32Array): number {
  const dims = q.length;
  let s0 = 0;
  let s1 = 0;
  let d = 0;
  for (; d + 1 < dims; d += 2) {
    s0 += (v[d] as number) * (q[d] as number);
    s1 += (v[d + 1] as number) * (q[d + 1] as number);
  }
  if (d < dims) s0 += (v[d] as number) * (q[d] as number);
  return s0 + s1;
}

/** Bits set in each 16-bit value: two lookups count a 32-bit word. */
const POPCOUNT16: Uint8Array = (() => {
  const t = new Uint8Array(65536);
  for (let i = 1; i < 65536; i++) t[i] = (t[i >> 1] as number) + (i & 1);
  return t;
})();

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
