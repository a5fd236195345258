// Aggregation over the day segments of the store's log: `mcphub stats`, the `stats` management
// tool, `pin --top N` and `status` (enabled servers never called) all read through here. Only the
// segments whose day overlaps the window are read; within them, lines older than the cutoff are
// skipped after reading their timestamp alone. Day files (the files store) may be split over
// worker threads; PostgreSQL's segments are read in this thread, through the same parser.
import { stat } from "node:fs/promises";
import { storeOf, type LogKind, type LogSegment, type Store } from "../store/index.js";
import { own, StatsAccumulator, type Agg } from "./aggregate.js";
import { defaultWorkers, scanInWorkers, splitRuns } from "./parallel.js";
import { scanFile, scanSegment, type ScanResult, type ScannedRow } from "./scan.js";

/** Where telemetry is read from: a data directory (its files), or a store. */
export type TelemetrySource = string | Store;

/** The segments of `kind` that may hold records at or after `cutoff`, oldest first. */
export async function logSegments(source: TelemetrySource, cutoff: number | undefined, kind: LogKind = "calls"): Promise<LogSegment[]> {
  const log = storeOf(source).log();
  try {
    return await log.segments(kind, cutoff);
  } finally {
    await log.close();
  }
}

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
  /**
   * Threads to scan with; 0 scans in this thread. Default: 2 when the window's day files hold
   * 24 MiB or more and a second core is free (see `defaultWorkers`), else 0. The report is the
   * same either way.
   */
  workers?: number;
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

function avg(a: Agg): number {
  return a.calls === 0 ? 0 : Math.trunc(a.total_ms / a.calls);
}

const byCallsThenName = <T extends { calls: number }>(name: (x: T) => string) => (a: T, b: T) =>
  b.calls - a.calls || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0);

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
  source: TelemetrySource,
  cutoff: number | undefined,
  onRow: (r: ScannedRow) => void,
): Promise<ScanResult> {
  const result: ScanResult = { rows: 0, malformed: 0 };
  for (const seg of await logSegments(source, cutoff)) {
    await scanSegment(seg, onRow, cutoff ?? 0, result);
  }
  return result;
}

export async function queryStats(source: TelemetrySource, q: StatsQuery = {}): Promise<StatsReport> {
  const now = q.now ?? Date.now();
  const recentN = q.recent !== undefined && q.recent > 0 ? Math.floor(q.recent) : 0;
  const cutoff = windowStart(q.sinceMs, now);
  const filter = { ...(q.server !== undefined ? { server: q.server } : {}), ...(q.agent !== undefined ? { agent: q.agent } : {}) };
  const wantTools = q.tools === true;
  const acc = new StatsAccumulator(filter, wantTools, recentN);

  const segments = await logSegments(source, cutoff);
  const files = segments.every((seg) => seg.path !== undefined) ? segments.map((seg) => ({ path: seg.path as string })) : undefined;
  let workers = files ? q.workers : 0;
  let sized: { path: string; size: number }[] = [];
  if (files && (workers === undefined || workers > 1)) {
    sized = await Promise.all(files.map(async (f) => ({ path: f.path, size: await sizeOf(f.path) })));
    workers ??= defaultWorkers(sized.reduce((n, f) => n + f.size, 0));
  }
  if (files && workers !== undefined && workers > 1 && files.length > 1) {
    const runs = splitRuns(sized, Math.floor(workers)).map((run) => run.map((f) => f.path));
    const partials = await scanInWorkers(runs, { minTs: cutoff ?? 0, filter, tools: wantTools, recent: recentN });
    for (const p of partials) acc.merge(p);
  } else {
    const result: ScanResult = { rows: 0, malformed: 0 };
    for (const seg of segments) {
      if (seg.path !== undefined) await scanFile(seg.path, acc.onRow, cutoff ?? 0, result);
      else await scanSegment(seg, acc.onRow, cutoff ?? 0, result);
    }
  }

  const totals = acc.totals;
  const pct = acc.percentiles([0.5, 0.99]);
  const report: StatsReport = {
    totals: {
      calls: totals.calls,
      errors: totals.errors,
      est_tokens: totals.est_tokens,
      total_ms: totals.total_ms,
      avg_ms: avg(totals),
      ...(pct ? { p50_ms: pct[0] as number, p99_ms: pct[1] as number } : {}),
      bytes_in: acc.bytesIn,
      bytes_out: acc.bytesOut,
    },
    servers: [...acc.servers]
      .map(([server, { agg: s }]) => ({ server, calls: s.calls, errors: s.errors, est_tokens: s.est_tokens, avg_ms: avg(s) }))
      .sort(byCallsThenName((x) => x.server)),
    agents: [...acc.agents]
      .map(([agent, a]) => ({ agent, calls: a.calls, errors: a.errors, est_tokens: a.est_tokens }))
      .sort(byCallsThenName((x) => x.agent)),
  };
  if (wantTools) {
    const tools: ToolStats[] = [];
    for (const [server, s] of acc.servers) {
      for (const [tool, { agg: t, namespaced }] of s.tools) {
        tools.push({ server, tool, namespaced, calls: t.calls, errors: t.errors, avg_ms: avg(t), est_tokens: t.est_tokens });
      }
    }
    report.tools = tools.sort(byCallsThenName((x) => x.namespaced));
  }
  const recent = acc.recent;
  if (recent) {
    const threshold = recent.threshold();
    const kept: KeptCall[] = [];
    if (threshold !== undefined) {
      await scanWindow(source, Math.max(threshold, cutoff ?? 0), (r) => {
        if (acc.matches(r)) kept.push(keep(r, kept.length));
      });
    }
    // Newest first; among equal timestamps, the later line first.
    kept.sort((a, b) => b.ts - a.ts || b.seq - a.seq);
    report.recent = kept.slice(0, recentN).map(recentCall);
  }
  if (cutoff !== undefined) report.since = new Date(cutoff).toISOString();
  return report;
}

/** Size of a day file; one pruned meanwhile counts as empty. */
async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

/** The N most-called tools in the window (for `mcphub pin --top N`), by calls then name. */
export async function topTools(
  source: TelemetrySource,
  opts: { n: number; sinceMs?: number; now?: number },
): Promise<{ server: string; tool: string; namespaced: string; calls: number }[]> {
  const counts = new Map<string, Map<string, { namespaced: string; calls: number }>>();
  await scanWindow(source, windowStart(opts.sinceMs, opts.now ?? Date.now()), (r) => {
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
export async function calledServers(source: TelemetrySource, opts: { sinceMs?: number; now?: number } = {}): Promise<Set<string>> {
  const seen = new Set<string>();
  await scanWindow(source, windowStart(opts.sinceMs, opts.now ?? Date.now()), (r) => {
    if (!seen.has(r.server)) seen.add(own(r.server));
  });
  return seen;
}
