// Benchmark: what the status page's last-hour charts cost the daemon. The page asks every few
// seconds; the numbers come from the telemetry day files. Compared side by side, median of runs:
//   - RecentCalls, cold: the first refresh (reads the day file once, keeps the last hour),
//   - RecentCalls, after 100 new calls: a refresh that reads only the appended bytes (the steady state),
//   - RecentCalls, nothing new: a refresh that finds the file unchanged (one stat),
//   - the per-server summaries and 60-minute series for every server (from memory),
//   - queryStats --since 1h: what re-reading the hour on every refresh would cost instead
//     (one aggregate query, without per-minute series; the day file is scanned each time).
// Also the page's size (raw and gzipped). The day file is the worst case of the day: it is 23:00
// UTC, so the file holds 23 hours of calls before the last hour.
// Usage: npx tsx bench/status.ts [records-in-the-day=200000]
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { PAGE_HTML } from "../src/serve/status/page.js";
import { dayFileName, telemetryDir } from "../src/telemetry/files.js";
import { queryStats } from "../src/telemetry/query.js";
import { RecentCalls } from "../src/telemetry/recent.js";
import { encodeRecord, type CallRecord } from "../src/telemetry/record.js";

const RECORDS = Number(process.argv[2] ?? 200_000);
const NOW = Date.UTC(2026, 10, 30, 23, 0, 0);
const DAY_START = Date.UTC(2026, 10, 30);
const SERVERS = ["github", "filesystem", "memory", "everything", "cortex", "vecgrep", "codemap", "monitor", "postgres", "slack", "linear", "sentry"];

function record(i: number, ts: number): CallRecord {
  const server = SERVERS[i % SERVERS.length] as string;
  return {
    ts,
    agent: i % 3 === 0 ? "claude" : "codex",
    server,
    tool: "search",
    namespaced: `${server}__search`,
    via: "call_tool",
    duration_ms: 5 + ((i * 7919) % 900),
    ok: i % 17 !== 0,
    ...(i % 17 === 0 ? { error_class: "timeout" } : {}),
    args_bytes: 80,
    result_bytes: 2000,
    est_tokens: 520,
  };
}

function cpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function measure(label: string, runs: number, setup: () => void, fn: () => Promise<unknown>): Promise<string> {
  const walls: number[] = [];
  const cpus: number[] = [];
  for (let r = 0; r < runs; r++) {
    setup();
    const c0 = cpu();
    const t0 = performance.now();
    await fn();
    walls.push(performance.now() - t0);
    cpus.push(cpu() - c0);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  return `${label.padEnd(52)}${med(walls).toFixed(2).padStart(10)} ms${med(cpus).toFixed(2).padStart(10)} ms${String(runs).padStart(7)}`;
}

const dataDir = mkdtempSync(join(tmpdir(), "mcphub-bench-status-"));
try {
  const dir = telemetryDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, dayFileName(NOW));
  const span = NOW - DAY_START - 60_000;
  const lines: string[] = [];
  for (let i = 0; i < RECORDS; i++) lines.push(encodeRecord(record(i, DAY_START + Math.floor((i / RECORDS) * span))));
  writeFileSync(file, lines.join(""));
  const inHour = lines.length - lines.findIndex((_, i) => DAY_START + Math.floor((i / RECORDS) * span) >= NOW - 3_600_000);
  let next = RECORDS;
  const append = (n: number) => {
    const more: string[] = [];
    for (let k = 0; k < n; k++) more.push(encodeRecord(record(next++, NOW - 30_000)));
    appendFileSync(file, more.join(""));
  };

  const rows: string[] = [];
  let warm = new RecentCalls(dataDir, { now: () => NOW, minRefreshMs: 0 });
  rows.push(await measure("RecentCalls, cold (first refresh)", 5, () => (warm = new RecentCalls(dataDir, { now: () => NOW, minRefreshMs: 0 })), () => warm.refresh()));
  rows.push(await measure("RecentCalls, after 100 new calls", 20, () => append(100), () => warm.refresh()));
  rows.push(await measure("RecentCalls, nothing new", 20, () => undefined, () => warm.refresh()));
  rows.push(
    await measure("summaries + series, 12 servers and the total", 20, () => undefined, async () => {
      for (const s of SERVERS) warm.server(s);
      warm.total();
    }),
  );
  rows.push(await measure("queryStats --since 1h (re-reading the hour)", 5, () => undefined, () => queryStats(dataDir, { sinceMs: 3_600_000, now: NOW, workers: 0 })));

  const size = statSync(file).size;
  console.log(`status page charts: day file of ${RECORDS.toLocaleString("en")} calls (${(size / 1048576).toFixed(1)} MiB), ${inHour.toLocaleString("en")} in the last hour, node ${process.version}`);
  console.log(`${"measurement".padEnd(52)}${"wall median".padStart(13)}${"cpu median".padStart(13)}${"runs".padStart(7)}`);
  for (const r of rows) console.log(r);
  const counted = warm.total().calls;
  console.log(`(last hour as the page shows it: ${counted.toLocaleString("en")} calls; the tail read ${(next - RECORDS).toLocaleString("en")} appended calls in all)`);
  console.log(`page: ${Buffer.byteLength(PAGE_HTML).toLocaleString("en")} bytes, ${gzipSync(PAGE_HTML).length.toLocaleString("en")} gzipped`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
