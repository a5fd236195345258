import { appendFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StatsAccumulator } from "../../../src/telemetry/aggregate.js";
import { dayFiles } from "../../../src/telemetry/files.js";
import { DAY_MS, encodeRecord, queryStats, type CallRecord, type StatsQuery } from "../../../src/telemetry/index.js";
import { defaultWorkers, PARALLEL_MIN_BYTES, scanInWorkers, splitRuns } from "../../../src/telemetry/parallel.js";
import { scanFile } from "../../../src/telemetry/scan.js";

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
let dataDir: string;

/** Deterministic pseudo-random numbers, so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Six days of calls: names that first appear late (map order), a tool whose `namespaced` differs
// between days (first seen must win), escaped names (slow path), torn lines, equal timestamps
// around the recent-calls threshold, and days of very different sizes.
beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "mcphub-stats-par-"));
  const dir = join(dataDir, "telemetry");
  mkdirSync(dir, { recursive: true });
  const rand = rng(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const write = (r: CallRecord) => appendFileSync(join(dir, `calls-${new Date(r.ts).toISOString().slice(0, 10)}.ndjson`), encodeRecord(r));
  for (let day = 5; day >= 0; day--) {
    const n = [40, 400, 25, 900, 60, 300][day] as number;
    const base = NOW - day * DAY_MS - 10 * 3_600_000;
    for (let i = 0; i < n; i++) {
      const server = day < 2 && i % 7 === 0 ? "late-server" : pick(["github", "memory", 'we"ird\\srv']);
      const tool = pick(["search", "read", "write"]);
      const ok = rand() > 0.1;
      write({
        ts: base + Math.floor(i / 3) * 1000, // three calls share each timestamp
        agent: day === 0 && i % 5 === 0 ? "late-agent" : pick(["claude", "codex", ""]),
        server,
        tool,
        namespaced: tool === "read" && day >= 3 ? `${server}__read_v1` : `${server}__${tool}`,
        via: pick(["mount", "call_tool", "detach"] as const),
        duration_ms: Math.floor(rand() * 5000),
        ok,
        ...(ok ? {} : { error_class: pick(["timeout", "tool_error"]) }),
        args_bytes: Math.floor(rand() * 300),
        result_bytes: Math.floor(rand() * 9000),
        est_tokens: Math.floor(rand() * 2000),
      });
    }
    appendFileSync(join(dir, `calls-${new Date(base).toISOString().slice(0, 10)}.ndjson`), "[17960, torn line\n");
  }
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe("splitRuns", () => {
  it("cuts files into contiguous, non-empty runs of similar size, in order", () => {
    const files = [5, 50, 5, 90, 10, 30].map((size, i) => ({ i, size }));
    const runs = splitRuns(files, 2);
    expect(runs.flat().map((f) => f.i)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(runs.map((r) => r.reduce((n, f) => n + f.size, 0))).toEqual([150, 40]);
    for (const n of [1, 2, 3, 6, 9]) {
      const r = splitRuns(files, n);
      expect(r.length).toBe(Math.min(n, files.length));
      expect(r.every((run) => run.length > 0)).toBe(true);
      expect(r.flat()).toEqual(files);
    }
    expect(splitRuns([], 2)).toEqual([]);
  });
});

describe("defaultWorkers", () => {
  it("uses two threads only for large windows on a machine with a free core", () => {
    expect(defaultWorkers(PARALLEL_MIN_BYTES, 2, 0.3)).toBe(2);
    expect(defaultWorkers(PARALLEL_MIN_BYTES - 1, 2, 0.3)).toBe(0);
    expect(defaultWorkers(PARALLEL_MIN_BYTES, 1, 0)).toBe(0);
    expect(defaultWorkers(PARALLEL_MIN_BYTES, 2, 1.5)).toBe(0);
    expect(defaultWorkers(PARALLEL_MIN_BYTES, 8, 3)).toBe(2);
  });
});

describe("parallel scan", () => {
  it("returns one partial per run whose merge equals a sequential scan", async () => {
    const files = await dayFiles(dataDir);
    expect(files.length).toBe(6);
    const seq = new StatsAccumulator({}, true, 7);
    for (const f of files) await scanFile(f.path, seq.onRow);
    const runs = splitRuns(files.map((f) => ({ path: f.path, size: statSync(f.path).size })), 2).map((r) => r.map((f) => f.path));
    const partials = await scanInWorkers(runs, { minTs: 0, filter: {}, tools: true, recent: 7 });
    expect(partials.length).toBe(2);
    expect(partials.every((p) => p.totals[0] > 0)).toBe(true);
    const merged = new StatsAccumulator({}, true, 7);
    for (const p of partials) merged.merge(p);
    const { recentTs: a, ...restMerged } = merged.toPartial();
    const { recentTs: b, ...restSeq } = seq.toPartial();
    expect(restMerged).toEqual(restSeq);
    expect([...a].sort()).toEqual([...b].sort());
  });

  const queries: [string, StatsQuery][] = [
    ["everything, with tools and recent calls", { tools: true, recent: 10 }],
    ["a window that cuts a day file", { sinceMs: 2.5 * DAY_MS, tools: true, recent: 4 }],
    ["one server", { server: "memory", tools: true, recent: 3 }],
    ["an escaped server name", { server: 'we"ird\\srv', tools: true }],
    ["one agent", { agent: "late-agent", recent: 5 }],
    ["the unscoped agent", { agent: "", tools: true }],
  ];
  for (const [name, q] of queries) {
    it(`gives the same report on 2 and 3 threads as in one: ${name}`, async () => {
      const one = await queryStats(dataDir, { ...q, now: NOW, workers: 0 });
      expect(one.totals.calls).toBeGreaterThan(0);
      expect(await queryStats(dataDir, { ...q, now: NOW, workers: 2 })).toEqual(one);
      expect(await queryStats(dataDir, { ...q, now: NOW, workers: 3 })).toEqual(one);
    });
  }
});
