// Benchmark: `mcphub stats --since 7d` over 1,000,000 recorded calls (target: ≤ 2 s).
// Generates a week of call records directly in the on-disk format (the same encoder the gateway
// uses), then times, median of 5 runs each:
//   - queryStats({sinceMs: 7d}) in process (what the CLI and the stats tool run),
//   - the same with --tools and --recent 20,
//   - a naive baseline: readline + JSON.parse per line (what the scanner replaces),
//   - the CLI end to end (`node bin/mcphub.js stats --since 7d --json`) when dist/ is built.
// Usage: npx tsx bench/stats.ts [records=1000000]
// BENCH_STATS_DIR=/some/dir keeps (and on later runs reuses) the generated data instead of a temp dir.
// Times are wall clock and CPU (user+sys) of this process (worker threads included): on a shared
// machine CPU time is the steadier of the two.
import { spawnSync } from "node:child_process";
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdir, open, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { encodeRecord, type CallRecord } from "../src/telemetry/record.js";
import { dayFileName, telemetryDir, DAY_MS } from "../src/telemetry/files.js";
import { queryStats } from "../src/telemetry/query.js";

const RECORDS = Number(process.argv[2] ?? 1_000_000);
const RUNS = 5;
const WEEK = 7 * DAY_MS;
const root = join(fileURLToPath(import.meta.url), "..", "..");

const SERVERS = ["github", "filesystem", "memory", "everything", "cortex", "vecgrep", "codemap", "monitor", "postgres", "slack", "linear", "sentry"];
const VERBS = ["search", "get", "list", "create", "update", "read", "write", "query", "describe", "delete"];
const NOUNS = ["issues", "files", "entities", "pull_request", "repository", "documents", "metrics", "records", "comments", "events"];
const AGENTS = ["claude", "codex", "cursor", "local-agent", ""];
const VIAS = ["mount", "call_tool", "detach"] as const;
const ERRORS = ["timeout", "tool_error", "outcome_unknown", "invalid_arguments"];

/** Deterministic pseudo-random numbers (mulberry32) so every run measures the same data. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function generate(dataDir: string, n: number, now: number): Promise<number> {
  const dir = telemetryDir(dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const rand = rng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const start = now - WEEK + 60_000;
  const step = (WEEK - 120_000) / n;
  let file = "";
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  let parts: string[] = [];
  const flush = async () => {
    if (fh && parts.length) await fh.write(parts.join(""));
    parts = [];
  };
  for (let i = 0; i < n; i++) {
    const ts = Math.floor(start + i * step);
    const name = dayFileName(ts);
    if (name !== file) {
      await flush();
      await fh?.close();
      fh = await open(join(dir, name), "a", 0o600);
      file = name;
    }
    const server = pick(SERVERS);
    const tool = `${pick(VERBS)}_${pick(NOUNS)}`;
    const ok = rand() > 0.03;
    const args = 2 + Math.floor(rand() * 400);
    const result = ok ? Math.floor(rand() * 40_000) : 0;
    const r: CallRecord = {
      ts,
      agent: pick(AGENTS),
      server,
      tool,
      namespaced: `${server}__${tool}`,
      via: pick(VIAS),
      duration_ms: Math.floor(rand() * rand() * 3000),
      ok,
      ...(ok ? {} : { error_class: pick(ERRORS) }),
      args_bytes: args,
      result_bytes: result,
      est_tokens: Math.ceil((args + result) / 4),
    };
    parts.push(encodeRecord(r));
    if (parts.length >= 10_000) await flush();
  }
  await flush();
  await fh?.close();
  let bytes = 0;
  for (const f of await readdir(dir)) bytes += statSync(join(dir, f)).size;
  return bytes;
}

/** The approach the scanner replaces: a line reader and JSON.parse per line. */
async function naiveCount(dataDir: string, cutoff: number): Promise<{ calls: number; est_tokens: number }> {
  const dir = telemetryDir(dataDir);
  let calls = 0;
  let est = 0;
  for (const f of (await readdir(dir)).sort()) {
    const rl = createInterface({ input: createReadStream(join(dir, f)), crlfDelay: Infinity });
    for await (const line of rl) {
      if (!line) continue;
      const r = JSON.parse(line) as number[];
      if ((r[0] ?? 0) < cutoff) continue;
      calls++;
      est += r[10] ?? 0;
    }
  }
  return { calls, est_tokens: est };
}

/** Wall-clock and CPU milliseconds per run (CPU of this process: a child's CPU is not counted). */
async function time<T>(fn: () => Promise<T>): Promise<{ ms: number[]; cpu: number[]; last: T }> {
  const ms: number[] = [];
  const cpu: number[] = [];
  let last: T | undefined;
  for (let i = 0; i < RUNS; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    last = await fn();
    ms.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { ms, cpu, last: last as T };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (ms: number) => `${(ms / 1000).toFixed(3)} s`;

async function main(): Promise<void> {
  const keep = process.env.BENCH_STATS_DIR;
  const dataDir = keep ?? mkdtempSync(join(tmpdir(), "mcphub-bench-stats-"));
  const stamp = join(dataDir, "bench-now.txt");
  try {
    let now: number;
    if (keep && existsSync(stamp)) {
      now = Number(readFileSync(stamp, "utf8"));
      console.log(`reusing data in ${dataDir}`);
    } else {
      now = Date.now();
      const g0 = performance.now();
      const bytes = await generate(dataDir, RECORDS, now);
      writeFileSync(stamp, String(now));
      console.log(`generated ${RECORDS.toLocaleString("en")} records, ${(bytes / 1024 ** 2).toFixed(1)} MiB in ${fmt(performance.now() - g0)}`);
    }

    const rows: { name: string; ms: number[]; cpu?: number[]; calls: number }[] = [];
    // Explicit thread counts: the default depends on the machine's load (see defaultWorkers).
    // From the sources each worker thread also boots tsx, which the built CLI does not pay.
    const plain = await time(() => queryStats(dataDir, { sinceMs: WEEK, now, workers: 0 }));
    rows.push({ name: "queryStats --since 7d, one thread", ...plain, calls: plain.last.totals.calls });
    const threaded = await time(() => queryStats(dataDir, { sinceMs: WEEK, now, workers: 2 }));
    rows.push({ name: "queryStats --since 7d, 2 worker threads", ...threaded, calls: threaded.last.totals.calls });
    if (JSON.stringify(threaded.last) !== JSON.stringify(plain.last)) throw new Error("the threaded and single-thread reports differ");
    // The built code, where worker threads load plain JavaScript (what the CLI runs).
    const built = join(root, "dist", "telemetry", "parallel.js");
    if (existsSync(built)) {
      const dist = (await import(pathToFileURL(join(root, "dist", "telemetry", "query.js")).href)) as { queryStats: typeof queryStats };
      for (const workers of [0, 2]) {
        const r = await time(() => dist.queryStats(dataDir, { sinceMs: WEEK, now, workers }));
        rows.push({ name: `dist: queryStats --since 7d, ${workers === 0 ? "one thread" : "2 worker threads"}`, ...r, calls: r.last.totals.calls });
      }
    }
    const full = await time(() => queryStats(dataDir, { sinceMs: WEEK, now, tools: true, recent: 20 }));
    rows.push({ name: "queryStats --since 7d --tools --recent 20", ...full, calls: full.last.totals.calls });
    const oneDay = await time(() => queryStats(dataDir, { sinceMs: DAY_MS, now }));
    rows.push({ name: "queryStats --since 24h", ...oneDay, calls: oneDay.last.totals.calls });
    const naive = await time(() => naiveCount(dataDir, now - WEEK));
    rows.push({ name: "baseline: readline + JSON.parse per line", ...naive, calls: naive.last.calls });
    if (naive.last.est_tokens !== plain.last.totals.est_tokens) {
      throw new Error(`scanner and baseline disagree: ${plain.last.totals.est_tokens} vs ${naive.last.est_tokens} est_tokens`);
    }

    // End to end: the built CLI when dist/ has the stats command, else the sources through tsx
    // (which adds the TypeScript loader's start-up to every run).
    const env = { ...process.env, MCPHUB_DATA_DIR: dataDir, NO_COLOR: "1" };
    const tsxLoader = pathToFileURL(join(root, "node_modules", "tsx", "dist", "loader.mjs")).href;
    const variants: { name: string; argv: string[] }[] = [
      { name: "CLI: node bin/mcphub.js stats --since 7d --json", argv: [join(root, "bin", "mcphub.js")] },
      { name: "CLI via tsx (sources): stats --since 7d --json", argv: ["--import", tsxLoader, join(root, "test", "helpers", "cli-entry.ts")] },
    ];
    for (const v of variants) {
      const runCli = async () => {
        const p = spawnSync(process.execPath, [...v.argv, "stats", "--since", "7d", "--json"], { env, encoding: "utf8", maxBuffer: 64 << 20 });
        if (p.status !== 0) throw new Error(`exit ${p.status}: ${p.stderr.trim().split("\n")[0]}`);
        return (JSON.parse(p.stdout) as { totals: { calls: number } }).totals.calls;
      };
      try {
        const run = await time(runCli);
        // A child's CPU is not visible from here; its wall time includes node start-up.
        rows.push({ name: v.name, ms: run.ms, calls: run.last });
        break;
      } catch (err) {
        console.log(`${v.name}: skipped (${err instanceof Error ? err.message : String(err)})`);
      }
    }

    const w = Math.max(...rows.map((r) => r.name.length));
    const cols = ["wall median", "wall min", "cpu median", "calls"];
    console.log(`\n${"measurement".padEnd(w)}  ${cols.map((c) => c.padStart(11)).join("  ")}`);
    for (const r of rows) {
      const cells = [fmt(median(r.ms)), fmt(Math.min(...r.ms)), r.cpu ? fmt(median(r.cpu)) : "n/a", String(r.calls)];
      console.log(`${r.name.padEnd(w)}  ${cells.map((c) => c.padStart(11)).join("  ")}`);
    }
    console.log(`\n(median of ${RUNS}; target for \`stats --since 7d\`: ≤ 2.000 s over 1,000,000 calls)`);
  } finally {
    if (!keep) rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
