// The running aggregates of `queryStats`, split out so that a scan can run in one thread or in
// several: each worker feeds rows of a contiguous run of day files into its own `StatsAccumulator`,
// ships it back as a plain `PartialStats` (structured-clone friendly, durations transferred), and
// the main thread merges the partials in file order. Merging in file order reproduces exactly what
// one sequential scan would have built (same sums, same first-seen names, same map order).
import type { ScannedRow } from "./scan.js";

/** Row filter of a query: only calls of this server and/or agent are counted. */
export interface RowFilter {
  server?: string;
  agent?: string;
}

/**
 * Running counts. Every aggregate is this one class (extra data lives beside it, not in it) so the
 * hot `add` sees a single object shape and stays monomorphic: with several shapes V8 falls back
 * to slow property lookups, which measurably slowed the million-row scan.
 */
export class Agg {
  calls = 0;
  errors = 0;
  est_tokens = 0;
  total_ms = 0;
}

/** [calls, errors, est_tokens, total_ms]: an `Agg` as plain data. */
export type AggTuple = [number, number, number, number];

export interface ToolAgg {
  agg: Agg;
  namespaced: string;
}

export interface ServerAgg {
  agg: Agg;
  tools: Map<string, ToolAgg>;
}

/** What one scan of some day files produced; plain data, so it crosses a worker boundary. */
export interface PartialStats {
  totals: AggTuple;
  bytesIn: number;
  bytesOut: number;
  /** In first-seen order: [server, totals, [tool, namespaced, totals][]]. */
  servers: [string, AggTuple, [string, string, AggTuple][]][];
  /** In first-seen order. */
  agents: [string, AggTuple][];
  /** duration_ms of every counted call, in scan order. */
  durations: Float64Array;
  /** The timestamps the recent-calls heap kept (at most `recent` of them, unordered). */
  recentTs: Float64Array;
}

/**
 * A map key must not be a slice of a megabyte chunk string (V8 would keep the whole chunk alive
 * for as long as the key lives); copying through a Buffer yields a flat string of its own.
 */
export function own(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, "utf8").toString("utf8");
}

function add(a: Agg, r: ScannedRow): void {
  a.calls++;
  if (!r.ok) a.errors++;
  a.est_tokens += r.est_tokens;
  a.total_ms += r.duration_ms;
}

function addTuple(a: Agg, t: AggTuple): void {
  a.calls += t[0];
  a.errors += t[1];
  a.est_tokens += t[2];
  a.total_ms += t[3];
}

const tuple = (a: Agg): AggTuple => [a.calls, a.errors, a.est_tokens, a.total_ms];

/**
 * Finds the N most recent calls in two passes. The aggregation pass only feeds timestamps into a
 * numeric min-heap of size N (no per-row objects or strings, though nearly every row of a
 * chronological file is "newer than the oldest kept"); its minimum is the threshold. A second pass
 * then reads just the day files that can hold calls at or after it and keeps the matching rows.
 */
export class RecentThreshold {
  private readonly heap: Float64Array;
  private size = 0;
  constructor(private readonly limit: number) {
    this.heap = new Float64Array(limit);
  }

  offer(ts: number): void {
    const h = this.heap;
    if (this.size < this.limit) {
      let i = this.size++;
      h[i] = ts;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if ((h[p] as number) <= ts) break;
        h[i] = h[p] as number;
        h[p] = ts;
        i = p;
      }
      return;
    }
    if (ts <= (h[0] as number)) return;
    h[0] = ts;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.size && (h[l] as number) < (h[m] as number)) m = l;
      if (r < this.size && (h[r] as number) < (h[m] as number)) m = r;
      if (m === i) break;
      const t = h[i] as number;
      h[i] = h[m] as number;
      h[m] = t;
      i = m;
    }
  }

  /** The oldest ts among the N newest seen; undefined when nothing was seen. */
  threshold(): number | undefined {
    return this.size === 0 ? undefined : this.heap[0];
  }

  /** The kept timestamps (unordered); offering them to another heap merges the two. */
  kept(): Float64Array {
    return this.heap.slice(0, this.size);
  }
}

/** Every aggregate `queryStats` reports, fed row by row or merged from partials. */
export class StatsAccumulator {
  readonly totals = new Agg();
  bytesIn = 0;
  bytesOut = 0;
  readonly servers = new Map<string, ServerAgg>();
  readonly agents = new Map<string, Agg>();
  readonly recent: RecentThreshold | undefined;
  private durations = new Float64Array(1024);

  constructor(
    private readonly filter: RowFilter,
    private readonly wantTools: boolean,
    recentN: number,
  ) {
    this.recent = recentN > 0 ? new RecentThreshold(recentN) : undefined;
  }

  matches(r: ScannedRow): boolean {
    return (this.filter.server === undefined || r.serverIs(this.filter.server)) && (this.filter.agent === undefined || r.agentIs(this.filter.agent));
  }

  /** The scan callback: counts one row if it passes the filter. */
  readonly onRow = (r: ScannedRow): void => {
    if (!this.matches(r)) return;
    const totals = this.totals;
    this.pushDuration(totals.calls, r.duration_ms);
    add(totals, r);
    this.bytesIn += r.args_bytes;
    this.bytesOut += r.result_bytes;

    let s = this.servers.get(r.server);
    if (s === undefined) {
      s = { agg: new Agg(), tools: new Map() };
      this.servers.set(own(r.server), s);
    }
    add(s.agg, r);
    if (this.wantTools) {
      let t = s.tools.get(r.tool);
      if (t === undefined) {
        t = { agg: new Agg(), namespaced: own(r.namespaced) };
        s.tools.set(own(r.tool), t);
      }
      add(t.agg, r);
    }
    let a = this.agents.get(r.agent);
    if (a === undefined) {
      a = new Agg();
      this.agents.set(own(r.agent), a);
    }
    add(a, r);
    this.recent?.offer(r.ts);
  };

  private pushDuration(at: number, ms: number): void {
    if (at === this.durations.length) {
      const grown = new Float64Array(this.durations.length * 2);
      grown.set(this.durations);
      this.durations = grown;
    }
    this.durations[at] = ms;
  }

  /**
   * Nearest-rank percentiles of the counted calls' durations (p in (0, 1]), undefined when none
   * was counted. Selection instead of a sort: sorting a million doubles took ~0.15-0.2 s, a
   * selection per percentile a few milliseconds. Reorders the durations: call once, at the end.
   */
  percentiles(ps: number[]): number[] | undefined {
    const n = this.totals.calls;
    if (n === 0) return undefined;
    const a = this.durations.subarray(0, n);
    return ps.map((p) => nthSmallest(a, Math.max(0, Math.ceil(p * n) - 1)));
  }

  toPartial(): PartialStats {
    return {
      totals: tuple(this.totals),
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
      servers: [...this.servers].map(([name, s]) => [
        name,
        tuple(s.agg),
        [...s.tools].map(([tool, t]): [string, string, AggTuple] => [tool, t.namespaced, tuple(t.agg)]),
      ]),
      agents: [...this.agents].map(([name, a]) => [name, tuple(a)]),
      durations: this.durations.slice(0, this.totals.calls),
      recentTs: this.recent?.kept() ?? new Float64Array(0),
    };
  }

  /**
   * Adds the partial of the files that come right after everything merged so far. Names seen for
   * the first time are appended, and a tool keeps the `namespaced` of its first row, as in a
   * sequential scan.
   */
  merge(p: PartialStats): void {
    const need = this.totals.calls + p.durations.length;
    if (need > this.durations.length) {
      const grown = new Float64Array(Math.max(need, this.durations.length * 2));
      grown.set(this.durations.subarray(0, this.totals.calls));
      this.durations = grown;
    }
    this.durations.set(p.durations, this.totals.calls);
    addTuple(this.totals, p.totals);
    this.bytesIn += p.bytesIn;
    this.bytesOut += p.bytesOut;
    for (const [name, agg, tools] of p.servers) {
      let s = this.servers.get(name);
      if (s === undefined) {
        s = { agg: new Agg(), tools: new Map() };
        this.servers.set(name, s);
      }
      addTuple(s.agg, agg);
      for (const [tool, namespaced, t] of tools) {
        let ta = s.tools.get(tool);
        if (ta === undefined) {
          ta = { agg: new Agg(), namespaced };
          s.tools.set(tool, ta);
        }
        addTuple(ta.agg, t);
      }
    }
    for (const [name, agg] of p.agents) {
      let a = this.agents.get(name);
      if (a === undefined) {
        a = new Agg();
        this.agents.set(name, a);
      }
      addTuple(a, agg);
    }
    for (const ts of p.recentTs) this.recent?.offer(ts);
  }
}

/**
 * The k-th smallest value of `a` (0-based), found by quickselect; reorders `a`. Median-of-three
 * pivots, and a plain sort of the remaining range if partitioning degenerates, so the worst case
 * stays O(n log n).
 */
export function nthSmallest(a: Float64Array, k: number): number {
  if (k < 0 || k >= a.length) throw new RangeError(`k=${k} is outside 0..${a.length - 1}`);
  let lo = 0;
  let hi = a.length - 1;
  let budget = 2 * Math.ceil(Math.log2(a.length + 1)) + 8;
  while (hi > lo) {
    if (budget-- === 0 || hi - lo < 16) {
      a.subarray(lo, hi + 1).sort();
      break;
    }
    const mid = lo + ((hi - lo) >> 1);
    const x = a[lo] as number;
    const y = a[mid] as number;
    const z = a[hi] as number;
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    // Hoare partition: afterwards a[lo..j] <= pivot <= a[i..hi], and j < i.
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((a[i] as number) < pivot) i++;
      while ((a[j] as number) > pivot) j--;
      if (i <= j) {
        const t = a[i] as number;
        a[i] = a[j] as number;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break; // j < k < i: a[k] equals the pivot
  }
  return a[k] as number;
}
