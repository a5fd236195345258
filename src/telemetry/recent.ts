// The last hour of calls, per server and per minute, kept up to date by tailing the day files.
// The status page asks for it every few seconds; re-reading the hour each time (`queryStats
// --since 1h`) costs a scan of everything recorded since midnight's file start, while a tail reads
// only the bytes appended since the last look. Every gateway process (the daemon and any stdio
// gateways) appends to the same files, so the page shows the same calls `mcphub stats` counts.
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { storeOf, type Store } from "../store/index.js";
import { nthSmallest } from "./aggregate.js";
import { dayFileName, telemetryDir } from "./files.js";
import { logSegments } from "./query.js";
import { scanFile, scanSegment, type ScannedRow } from "./scan.js";
import { NOT_SENT_ERROR_CLASSES } from "./record.js";

export const RECENT_WINDOW_MS = 60 * 60_000;
export const BUCKET_MS = 60_000;
/**
 * Durations kept per server and minute; past this a uniform sample of them (reservoir) stands in
 * for all, so a flood of calls cannot grow memory. Percentiles are exact below it.
 */
export const MAX_SAMPLES_PER_BUCKET = 2048;

interface Bucket {
  /** Calls that reached the server (refused ones are counted apart). */
  calls: number;
  errors: number;
  /** Calls refused before they reached the server (bad arguments, guardrails). */
  refused: number;
  /** Up to MAX_SAMPLES_PER_BUCKET durations (a uniform sample once there are more calls). */
  samples: number[];
}

interface ServerTrack {
  /** Minute index (ts / BUCKET_MS) → bucket. */
  buckets: Map<number, Bucket>;
  lastCall: number;
}

/** One server's hour, as the page draws it. Series hold one value per minute, oldest first. */
export interface RecentServerStats {
  /** Calls that reached the server. */
  calls: number;
  errors: number;
  /** errors / calls, 0 when there were no calls: the server's own failures only. */
  errorRate: number;
  /** Calls refused before they reached the server (invalid arguments, guardrails): not its errors. */
  refused: number;
  p50Ms?: number;
  p95Ms?: number;
  /** ms since the epoch of the newest call in the window. */
  lastCall?: number;
  series: {
    calls: number[];
    errors: number[];
    /** Per-minute percentiles; null for a minute without calls. */
    p50: (number | null)[];
    p95: (number | null)[];
  };
}

export interface RecentOptions {
  windowMs?: number;
  now?: () => number;
  /** A refresh within this long of the previous one reuses it (the page may ask often). */
  minRefreshMs?: number;
}

export class RecentCalls {
  private readonly dir: string;
  /** A shared store (PostgreSQL): segments are tailed by their own positions, not files. */
  private readonly shared: Store | undefined;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly minRefreshMs: number;
  private readonly servers = new Map<string, ServerTrack>();
  private readonly agents = new Map<string, number>();
  /** Day file name → where the next read starts and the identity of the file read so far. */
  private readonly files = new Map<string, { offset: number; ino: number }>();
  private refreshing: Promise<void> | undefined;
  private refreshedAt = -Infinity;
  /** Lines seen that were not records (torn by a crash); for tests and diagnostics. */
  malformed = 0;

  constructor(where: string | Store, opts: RecentOptions = {}) {
    const store = storeOf(where);
    this.dir = telemetryDir(store.where);
    this.shared = store.kind === "files" ? undefined : store;
    this.windowMs = opts.windowMs ?? RECENT_WINDOW_MS;
    this.now = opts.now ?? Date.now;
    this.minRefreshMs = opts.minRefreshMs ?? 1000;
  }

  /** Reads what was appended since the last refresh. Concurrent callers share one read. */
  refresh(): Promise<void> {
    if (this.refreshing) return this.refreshing;
    if (this.now() - this.refreshedAt < this.minRefreshMs) return Promise.resolve();
    this.refreshing = this.readNew().finally(() => {
      this.refreshedAt = this.now();
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Servers with at least one call in the window, by name. */
  serverNames(): string[] {
    this.expire();
    return [...this.servers.keys()].sort();
  }

  /** The window's numbers for one server (zeros when it had no calls). */
  server(name: string): RecentServerStats {
    this.expire();
    return summarize(this.servers.get(name), this.firstMinute(), this.minutes());
  }

  /** Every server's calls together. */
  total(): RecentServerStats {
    this.expire();
    const merged: ServerTrack = { buckets: new Map(), lastCall: 0 };
    for (const t of this.servers.values()) {
      merged.lastCall = Math.max(merged.lastCall, t.lastCall);
      for (const [m, b] of t.buckets) {
        const into = merged.buckets.get(m) ?? { calls: 0, errors: 0, refused: 0, samples: [] };
        into.calls += b.calls;
        into.errors += b.errors;
        into.refused += b.refused;
        // Transient: at most servers x MAX_SAMPLES_PER_BUCKET values per minute.
        for (const d of b.samples) into.samples.push(d);
        merged.buckets.set(m, into);
      }
    }
    return summarize(merged.buckets.size ? merged : undefined, this.firstMinute(), this.minutes());
  }

  /** The newest call per agent name ("" = unscoped) within the window. */
  lastCallByAgent(): Map<string, number> {
    const cutoff = this.now() - this.windowMs;
    return new Map([...this.agents].filter(([, ts]) => ts >= cutoff));
  }

  private minutes(): number {
    return Math.round(this.windowMs / BUCKET_MS);
  }

  private firstMinute(): number {
    return Math.floor(this.now() / BUCKET_MS) - this.minutes() + 1;
  }

  private expire(): void {
    const first = this.firstMinute();
    for (const [name, t] of this.servers) {
      for (const m of t.buckets.keys()) if (m < first) t.buckets.delete(m);
      if (t.buckets.size === 0) this.servers.delete(name);
    }
  }

  private async readNew(): Promise<void> {
    const now = this.now();
    const cutoff = now - this.windowMs;
    // The window spans at most two UTC days (it is far shorter than a day).
    const names = [...new Set([dayFileName(Math.max(cutoff, 1)), dayFileName(now)])];
    for (const name of this.files.keys()) if (!names.includes(name)) this.files.delete(name);
    const firstMinute = Math.floor(now / BUCKET_MS) - this.minutes() + 1;
    const onRow = (row: ScannedRow) => this.add(row, firstMinute);
    if (this.shared) {
      const segments = new Map((await logSegments(this.shared, cutoff)).map((seg) => [seg.name, seg]));
      for (const name of names) {
        const seg = segments.get(name);
        if (!seg) {
          this.files.delete(name);
          continue;
        }
        const at = this.files.get(name) ?? { offset: 0, ino: 0 };
        const result = await scanSegment(seg, onRow, cutoff, { rows: 0, malformed: 0 }, { from: at.offset });
        this.malformed += result.malformed;
        this.files.set(name, { offset: result.end ?? at.offset, ino: 0 });
      }
      this.expire();
      return;
    }
    for (const name of names) {
      const path = join(this.dir, name);
      let ino: number;
      let size: number;
      try {
        const s = await stat(path);
        ino = s.ino;
        size = s.size;
      } catch {
        this.files.delete(name); // not written yet (or pruned): nothing to read
        continue;
      }
      let at = this.files.get(name);
      // A different or shorter file than the one read so far: read it again from the start.
      if (!at || at.ino !== ino || size < at.offset) at = { offset: 0, ino };
      if (size === at.offset) {
        this.files.set(name, at);
        continue;
      }
      const result = await scanFile(path, onRow, cutoff, { rows: 0, malformed: 0 }, { from: at.offset });
      this.malformed += result.malformed;
      this.files.set(name, { offset: result.end ?? at.offset, ino });
    }
    this.expire();
  }

  private add(row: ScannedRow, firstMinute: number): void {
    const minute = Math.floor(row.ts / BUCKET_MS);
    if (minute < firstMinute) return;
    const server = row.server;
    let t = this.servers.get(server);
    if (!t) {
      t = { buckets: new Map(), lastCall: 0 };
      this.servers.set(server, t);
    }
    let b = t.buckets.get(minute);
    if (!b) {
      b = { calls: 0, errors: 0, refused: 0, samples: [] };
      t.buckets.set(minute, b);
    }
    if (row.ts > t.lastCall) t.lastCall = row.ts;
    const agent = row.agent;
    if (row.ts > (this.agents.get(agent) ?? 0)) this.agents.set(agent, row.ts);
    // Never sent: neither the server's error nor its latency (a refusal takes 0 ms).
    if (!row.ok && NOT_SENT_ERROR_CLASSES.has(row.error_class ?? "")) {
      b.refused++;
      return;
    }
    b.calls++;
    if (!row.ok) b.errors++;
    addSample(b, row.duration_ms, b.calls);
  }
}

/** Reservoir sampling (algorithm R): the n-th value replaces a random kept one with chance k/n. */
function addSample(b: Bucket, value: number, n: number): void {
  if (b.samples.length < MAX_SAMPLES_PER_BUCKET) {
    b.samples.push(value);
    return;
  }
  const j = Math.floor(Math.random() * n);
  if (j < MAX_SAMPLES_PER_BUCKET) b.samples[j] = value;
}

/** Nearest-rank percentiles (as `mcphub stats` computes them) of a copy of `values`. */
function percentiles(values: number[], ps: number[]): number[] | undefined {
  if (values.length === 0) return undefined;
  const a = Float64Array.from(values);
  return ps.map((p) => nthSmallest(a, Math.max(0, Math.ceil(p * a.length) - 1)));
}

function summarize(t: ServerTrack | undefined, firstMinute: number, minutes: number): RecentServerStats {
  const series: RecentServerStats["series"] = { calls: [], errors: [], p50: [], p95: [] };
  let calls = 0;
  let errors = 0;
  let refused = 0;
  const all: number[] = [];
  for (let i = 0; i < minutes; i++) {
    const b = t?.buckets.get(firstMinute + i);
    series.calls.push(b?.calls ?? 0);
    series.errors.push(b?.errors ?? 0);
    const p = b ? percentiles(b.samples, [0.5, 0.95]) : undefined;
    series.p50.push(p?.[0] ?? null);
    series.p95.push(p?.[1] ?? null);
    if (b) {
      calls += b.calls;
      errors += b.errors;
      refused += b.refused;
      for (const d of b.samples) all.push(d);
    }
  }
  const p = percentiles(all, [0.5, 0.95]);
  return {
    calls,
    errors,
    errorRate: calls ? errors / calls : 0,
    refused,
    ...(p ? { p50Ms: p[0], p95Ms: p[1] } : {}),
    ...(t && t.lastCall > 0 ? { lastCall: t.lastCall } : {}),
    series,
  };
}
