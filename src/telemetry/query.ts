// Aggregation over the day files: `mcphub stats`, the `stats` management tool, `pin --top N` and
// `status` (enabled servers never called) all read through here. Only the files whose day
// overlaps the window are opened; within them, lines older than the cutoff are skipped after
// reading their timestamp alone.
import { dayFiles } from "./files.js";
import { scanFile, type ScanResult, type ScannedRow } from "./scan.js";

export interface StatsQuery {
  /** Window length: only calls with ts >= now - sinceMs. Omitted = everything retained. */
  sinceMs?: number;
  server?: string;
  agent?: string;
  /** Include the N most recent calls. */
  recent?: number;
  /** Include per-tool rows. */
  tools?: boolean;
  /** Reference time for the window (tests). Default Date.now(). */
  now?: number;
}

export interface StatsTotals {
  calls: number;
  errors: number;
  est_tokens: number;
  total_ms: number;
  avg_ms: number;
  p50_ms?: number;
  p99_ms?: number;
  /** Sum of argument bytes sent downstream. */
  bytes_in: number;
  /** Sum of result bytes received from downstreams. */
  bytes_out: number;
}

export interface ServerStats {
  server: string;
  calls: number;
  errors: number;
  est_tokens: number;
  avg_ms: number;
}

export interface ToolStats {
  server: string;
  tool: string;
  namespaced: string;
  calls: number;
  errors: number;
  avg_ms: number;
  est_tokens: number;
}

export interface RecentCall {
  ts: string;
  /** The public `server__tool` name. */
  tool: string;
  agent: string;
  via: string;
  ok: boolean;
  duration_ms: number;
  est_tokens: number;
  error_class?: string;
}

export interface AgentStats {
  agent: string;
  calls: number;
  errors: number;
  est_tokens: number;
}

export interface StatsReport {
  totals: StatsTotals;
  servers: ServerStats[];
  tools?: ToolStats[];
  recent?: RecentCall[];
  agents?: AgentStats[];
  /** ISO time of the window start, when a window was given. */
  since?: string;
}

/**
 * Running counts. Every aggregate is this one class (extra data lives beside it, not in it) so the
 * hot `add` sees a single object shape and stays monomorphic: with several shapes V8 falls back
 * to slow property lookups, which measurably slowed the million-row scan.
 */
class Agg {
  calls = 0;
  errors = 0;
  est_tokens = 0;
  total_ms = 0;
}

interface ToolAgg {
  agg: Agg;
  namespaced: string;
}

interface ServerAgg {
  agg: Agg;
  tools: Map<string, ToolAgg>;
}

interface KeptCall {
  ts: number;
  seq: number;
  namespaced: string;
  agent: string;
  via: string;
  ok: boolean;
  duration_ms: number;
  est_tokens: number;
  error_class: string | undefined;
}

/**
 * A map key must not be a slice of a megabyte chunk string (V8 would keep the whole chunk alive
 * for as long as the key lives); copying through a Buffer yields a flat string of its own.
 */
function own(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, "utf8").toString("utf8");
}

function add(a: Agg, r: ScannedRow): void {
  a.calls++;
  if (!r.ok) a.errors++;
  a.est_tokens += r.est_tokens;
  a.total_ms += r.duration_ms;
}

function avg(a: Agg): number {
  return a.calls === 0 ? 0 : Math.trunc(a.total_ms / a.calls);
}

const byCallsThenName = <T extends { calls: number }>(name: (x: T) => string) => (a: T, b: T) =>
  b.calls - a.calls || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0);

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: Float64Array, p: number): number {
  const idx = Math.max(0, Math.ceil(p * sorted.length) - 1);
  return sorted[idx] ?? 0;
}

/**
 * Finds the N most recent calls in two passes. The aggregation pass only feeds timestamps into a
 * numeric min-heap of size N (no per-row objects or strings, though nearly every row of a
 * chronological file is "newer than the oldest kept"); its minimum is the threshold. A second pass
 * then reads just the day files that can hold calls at or after it and keeps the matching rows.
 */
class RecentThreshold {
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
}

function keep(r: ScannedRow, seq: number): KeptCall {
  return {
    ts: r.ts,
    seq,
    namespaced: own(r.namespaced),
    agent: own(r.agent),
    via: r.via,
    ok: r.ok,
    duration_ms: r.duration_ms,
    est_tokens: r.est_tokens,
    error_class: r.error_class === undefined ? undefined : own(r.error_class),
  };
}

function recentCall(k: KeptCall): RecentCall {
  return {
    ts: new Date(k.ts).toISOString(),
    tool: k.namespaced,
    agent: k.agent,
    via: k.via,
    ok: k.ok,
    duration_ms: k.duration_ms,
    est_tokens: k.est_tokens,
    ...(k.error_class === undefined ? {} : { error_class: k.error_class }),
  };
}

function windowStart(sinceMs: number | undefined, now: number): number | undefined {
  if (sinceMs !== undefined && (!Number.isFinite(sinceMs) || sinceMs < 0)) {
    throw new Error(`the stats window must be a non-negative duration, got ${sinceMs}`);
  }
  return sinceMs === undefined ? undefined : now - sinceMs;
}

async function scanWindow(
  dataDir: string,
  cutoff: number | undefined,
  onRow: (r: ScannedRow) => void,
): Promise<ScanResult> {
  const result: ScanResult = { rows: 0, malformed: 0 };
  for (const f of await dayFiles(dataDir, cutoff)) {
    await scanFile(f.path, onRow, cutoff ?? 0, result);
  }
  return result;
}

export async function queryStats(dataDir: string, q: StatsQuery = {}): Promise<StatsReport> {
  const now = q.now ?? Date.now();
  const totals = new Agg();
  let bytesIn = 0;
  let bytesOut = 0;
  const servers = new Map<string, ServerAgg>();
  const agents = new Map<string, Agg>();
  const recentN = q.recent !== undefined && q.recent > 0 ? Math.floor(q.recent) : 0;
  const recent = recentN > 0 ? new RecentThreshold(recentN) : undefined;
  const cutoff = windowStart(q.sinceMs, now);
  const matches = (r: ScannedRow): boolean =>
    (q.server === undefined || r.serverIs(q.server)) && (q.agent === undefined || r.agentIs(q.agent));
  let durations = new Float64Array(1024);
  const wantTools = q.tools === true;

  await scanWindow(dataDir, cutoff, (r) => {
    if (!matches(r)) return;
    if (totals.calls === durations.length) {
      const grown = new Float64Array(durations.length * 2);
      grown.set(durations);
      durations = grown;
    }
    durations[totals.calls] = r.duration_ms;
    add(totals, r);
    bytesIn += r.args_bytes;
    bytesOut += r.result_bytes;

    let s = servers.get(r.server);
    if (s === undefined) {
      s = { agg: new Agg(), tools: new Map() };
      servers.set(own(r.server), s);
    }
    add(s.agg, r);
    if (wantTools) {
      let t = s.tools.get(r.tool);
      if (t === undefined) {
        t = { agg: new Agg(), namespaced: own(r.namespaced) };
        s.tools.set(own(r.tool), t);
      }
      add(t.agg, r);
    }
    let a = agents.get(r.agent);
    if (a === undefined) {
      a = new Agg();
      agents.set(own(r.agent), a);
    }
    add(a, r);
    recent?.offer(r.ts);
  });

  const sorted = durations.subarray(0, totals.calls).sort();
  const report: StatsReport = {
    totals: {
      calls: totals.calls,
      errors: totals.errors,
      est_tokens: totals.est_tokens,
      total_ms: totals.total_ms,
      avg_ms: avg(totals),
      ...(totals.calls > 0 ? { p50_ms: percentile(sorted, 0.5), p99_ms: percentile(sorted, 0.99) } : {}),
      bytes_in: bytesIn,
      bytes_out: bytesOut,
    },
    servers: [...servers]
      .map(([server, { agg: s }]) => ({ server, calls: s.calls, errors: s.errors, est_tokens: s.est_tokens, avg_ms: avg(s) }))
      .sort(byCallsThenName((x) => x.server)),
    agents: [...agents]
      .map(([agent, a]) => ({ agent, calls: a.calls, errors: a.errors, est_tokens: a.est_tokens }))
      .sort(byCallsThenName((x) => x.agent)),
  };
  if (wantTools) {
    const tools: ToolStats[] = [];
    for (const [server, s] of servers) {
      for (const [tool, { agg: t, namespaced }] of s.tools) {
        tools.push({ server, tool, namespaced, calls: t.calls, errors: t.errors, avg_ms: avg(t), est_tokens: t.est_tokens });
      }
    }
    report.tools = tools.sort(byCallsThenName((x) => x.namespaced));
  }
  if (recent) {
    const threshold = recent.threshold();
    const kept: KeptCall[] = [];
    if (threshold !== undefined) {
      await scanWindow(dataDir, Math.max(threshold, cutoff ?? 0), (r) => {
        if (matches(r)) kept.push(keep(r, kept.length));
      });
    }
    // Newest first; among equal timestamps, the later line first.
    kept.sort((a, b) => b.ts - a.ts || b.seq - a.seq);
    report.recent = kept.slice(0, recentN).map(recentCall);
  }
  if (cutoff !== undefined) report.since = new Date(cutoff).toISOString();
  return report;
}

/** The N most-called tools in the window (for `mcphub pin --top N`), by calls then name. */
export async function topTools(
  dataDir: string,
  opts: { n: number; sinceMs?: number; now?: number },
): Promise<{ server: string; tool: string; namespaced: string; calls: number }[]> {
  const counts = new Map<string, Map<string, { namespaced: string; calls: number }>>();
  await scanWindow(dataDir, windowStart(opts.sinceMs, opts.now ?? Date.now()), (r) => {
    let byTool = counts.get(r.server);
    if (byTool === undefined) counts.set(own(r.server), (byTool = new Map()));
    const t = byTool.get(r.tool);
    if (t === undefined) byTool.set(own(r.tool), { namespaced: own(r.namespaced), calls: 1 });
    else t.calls++;
  });
  const all: { server: string; tool: string; namespaced: string; calls: number }[] = [];
  for (const [server, byTool] of counts) {
    for (const [tool, t] of byTool) all.push({ server, tool, namespaced: t.namespaced, calls: t.calls });
  }
  return all.sort(byCallsThenName((x) => x.namespaced)).slice(0, Math.max(0, Math.floor(opts.n)));
}

/** Servers with at least one recorded call in the window (for `status`: enabled but never called). */
export async function calledServers(dataDir: string, opts: { sinceMs?: number; now?: number } = {}): Promise<Set<string>> {
  const seen = new Set<string>();
  await scanWindow(dataDir, windowStart(opts.sinceMs, opts.now ?? Date.now()), (r) => {
    if (!seen.has(r.server)) seen.add(own(r.server));
  });
  return seen;
}
