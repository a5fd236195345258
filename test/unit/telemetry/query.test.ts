import { mkdirSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { calledServers, DAY_MS, encodeRecord, queryStats, topTools, type CallRecord } from "../../../src/telemetry/index.js";

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "mcphub-stats-"));
  mkdirSync(join(dataDir, "telemetry"), { recursive: true });
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const H = 3_600_000;

function rec(ts: number, server: string, tool: string, over: Partial<CallRecord> = {}): CallRecord {
  const args = over.args_bytes ?? 10;
  const result = over.result_bytes ?? 90;
  return {
    ts,
    agent: "claude",
    server,
    tool,
    namespaced: `${server}__${tool}`,
    via: "call_tool",
    duration_ms: 100,
    ok: true,
    args_bytes: args,
    result_bytes: result,
    est_tokens: Math.ceil((args + result) / 4),
    ...over,
  };
}

/** Writes records straight into their day files, as the writer would. */
function write(records: CallRecord[]): void {
  for (const r of records) {
    appendFileSync(join(dataDir, "telemetry", `calls-${new Date(r.ts).toISOString().slice(0, 10)}.ndjson`), encodeRecord(r));
  }
}

/** The fixture: 10 calls over three days, two agents, three servers. */
function fixture(): void {
  write([
    rec(NOW - 3 * DAY_MS, "github", "search", { duration_ms: 1000 }), // outside 48h and 24h
    rec(NOW - 30 * H, "github", "search", { duration_ms: 300, agent: "codex" }), // inside 48h only
    rec(NOW - 30 * H, "memory", "read", { ok: false, error_class: "timeout", duration_ms: 5000, result_bytes: 0, agent: "codex" }),
    rec(NOW - 5 * H, "github", "search", { duration_ms: 10 }),
    rec(NOW - 4 * H, "github", "get_issue", { duration_ms: 20, via: "mount" }),
    rec(NOW - 3 * H, "github", "search", { duration_ms: 30 }),
    rec(NOW - 2 * H, "memory", "read", { duration_ms: 40 }),
    rec(NOW - 90 * 60_000, "fs", "write", { ok: false, error_class: "tool_error", duration_ms: 50, agent: "codex", via: "detach" }),
    rec(NOW - 60 * 60_000, "memory", "write", { duration_ms: 60, args_bytes: 400, result_bytes: 0 }),
    rec(NOW - 1000, "fs", "read", { duration_ms: 70 }),
  ]);
}

describe("queryStats", () => {
  it("reports zeros (and no percentiles) when nothing was recorded, even without a telemetry dir", async () => {
    rmSync(join(dataDir, "telemetry"), { recursive: true });
    const r = await queryStats(dataDir, { now: NOW, sinceMs: DAY_MS, recent: 5, tools: true });
    expect(r.totals).toEqual({ calls: 0, errors: 0, est_tokens: 0, total_ms: 0, avg_ms: 0, bytes_in: 0, bytes_out: 0 });
    expect(r).toMatchObject({ servers: [], tools: [], recent: [], agents: [], since: new Date(NOW - DAY_MS).toISOString() });
  });

  it("aggregates totals, servers, tools and agents over everything retained", async () => {
    fixture();
    const r = await queryStats(dataDir, { now: NOW, tools: true });
    expect(r.totals).toEqual({
      calls: 10,
      errors: 2,
      est_tokens: 25 * 8 + 3 /* the failed memory read: 10 bytes */ + 100 /* memory write: 400 bytes */,
      total_ms: 1000 + 300 + 5000 + 10 + 20 + 30 + 40 + 50 + 60 + 70,
      avg_ms: 658,
      p50_ms: 50,
      p99_ms: 5000,
      bytes_in: 10 * 9 + 400,
      bytes_out: 90 * 8,
    });
    expect(r.servers).toEqual([
      { server: "github", calls: 5, errors: 0, est_tokens: 125, avg_ms: 272 },
      { server: "memory", calls: 3, errors: 1, est_tokens: 3 + 25 + 100, avg_ms: 1700 },
      { server: "fs", calls: 2, errors: 1, est_tokens: 50, avg_ms: 60 },
    ]);
    expect(r.tools).toEqual([
      { server: "github", tool: "search", namespaced: "github__search", calls: 4, errors: 0, avg_ms: 335, est_tokens: 100 },
      { server: "memory", tool: "read", namespaced: "memory__read", calls: 2, errors: 1, avg_ms: 2520, est_tokens: 28 },
      { server: "fs", tool: "read", namespaced: "fs__read", calls: 1, errors: 0, avg_ms: 70, est_tokens: 25 },
      { server: "fs", tool: "write", namespaced: "fs__write", calls: 1, errors: 1, avg_ms: 50, est_tokens: 25 },
      { server: "github", tool: "get_issue", namespaced: "github__get_issue", calls: 1, errors: 0, avg_ms: 20, est_tokens: 25 },
      { server: "memory", tool: "write", namespaced: "memory__write", calls: 1, errors: 0, avg_ms: 60, est_tokens: 100 },
    ]);
    expect(r.agents).toEqual([
      { agent: "claude", calls: 7, errors: 0, est_tokens: 25 * 6 + 100 },
      { agent: "codex", calls: 3, errors: 2, est_tokens: 25 + 3 + 25 },
    ]);
    expect(r.since).toBeUndefined();
  });

  it("applies the window by timestamp, reading only the day files that overlap it", async () => {
    fixture();
    // A file from before the window with a broken line: never opened, so never reported.
    writeFileSync(join(dataDir, "telemetry", "calls-2026-11-01.ndjson"), "not json\n");
    const day = await queryStats(dataDir, { now: NOW, sinceMs: DAY_MS });
    expect(day.totals.calls).toBe(7);
    expect(day.totals.errors).toBe(1);
    expect(day.since).toBe("2026-11-29T12:00:00.000Z");
    const two = await queryStats(dataDir, { now: NOW, sinceMs: 2 * DAY_MS });
    expect(two.totals.calls).toBe(9);
    const hour = await queryStats(dataDir, { now: NOW, sinceMs: H });
    expect(hour.totals.calls).toBe(2);
    expect(hour.servers.map((s) => s.server)).toEqual(["fs", "memory"]);
  });

  it("filters by server and by agent", async () => {
    fixture();
    const gh = await queryStats(dataDir, { now: NOW, server: "github", tools: true });
    expect(gh.totals.calls).toBe(5);
    expect(gh.servers.map((s) => s.server)).toEqual(["github"]);
    expect(gh.tools?.map((t) => t.namespaced)).toEqual(["github__search", "github__get_issue"]);
    const codex = await queryStats(dataDir, { now: NOW, agent: "codex" });
    expect(codex.totals).toMatchObject({ calls: 3, errors: 2 });
    expect(codex.agents).toEqual([{ agent: "codex", calls: 3, errors: 2, est_tokens: 53 }]);
    const none = await queryStats(dataDir, { now: NOW, agent: "" });
    expect(none.totals.calls).toBe(0);
  });

  it("lists the N most recent calls newest first, within the filters", async () => {
    fixture();
    const r = await queryStats(dataDir, { now: NOW, recent: 3 });
    expect(r.recent).toEqual([
      { ts: new Date(NOW - 1000).toISOString(), tool: "fs__read", agent: "claude", via: "call_tool", ok: true, duration_ms: 70, est_tokens: 25 },
      { ts: new Date(NOW - H).toISOString(), tool: "memory__write", agent: "claude", via: "call_tool", ok: true, duration_ms: 60, est_tokens: 100 },
      { ts: new Date(NOW - 90 * 60_000).toISOString(), tool: "fs__write", agent: "codex", via: "detach", ok: false, duration_ms: 50, est_tokens: 25, error_class: "tool_error" },
    ]);
    const codex = await queryStats(dataDir, { now: NOW, recent: 10, agent: "codex" });
    expect(codex.recent?.map((x) => x.tool)).toEqual(["fs__write", "memory__read", "github__search"]);
  });

  it("tolerates torn and foreign lines, and reads records written as objects or with escapes", async () => {
    const f = join(dataDir, "telemetry", "calls-2026-11-30.ndjson");
    writeFileSync(
      f,
      [
        encodeRecord(rec(NOW - 10, "a", "t")).trimEnd(),
        "garbage",
        JSON.stringify({ ts: NOW - 5, server: "b", tool: "t", namespaced: "b__t", agent: "x", via: "mount", ok: false, duration_ms: 1.5, args_bytes: 2, result_bytes: 2, est_tokens: 1, error_class: "timeout" }),
        encodeRecord(rec(NOW - 4, 'c"q', "t\\x")).trimEnd(),
        '[1764500000000,"a","t"', // torn by a crash
        "",
      ].join("\n") + encodeRecord(rec(NOW - 3, "a", "t")).trimEnd(), // last line without its newline
    );
    const r = await queryStats(dataDir, { now: NOW, tools: true });
    expect(r.totals.calls).toBe(4);
    expect(r.servers.map((s) => [s.server, s.calls])).toEqual([["a", 2], ["b", 1], ['c"q', 1]]);
    expect(r.tools?.find((t) => t.server === 'c"q')?.tool).toBe("t\\x");
    expect(r.totals.errors).toBe(1);
  });

  it("reads records across chunk boundaries of large files", async () => {
    const many: CallRecord[] = [];
    for (let i = 0; i < 30_000; i++) many.push(rec(NOW - 30_000 + i, `s${i % 3}`, `tool_${"x".repeat(i % 50)}`, { duration_ms: i % 100 }));
    write(many);
    const r = await queryStats(dataDir, { now: NOW, tools: true });
    expect(r.totals.calls).toBe(30_000);
    expect(r.servers.map((s) => s.calls)).toEqual([10_000, 10_000, 10_000]);
    expect(r.tools).toHaveLength(150);
    expect(r.totals.total_ms).toBe(300 * 4950);
  });

  it("rejects a negative window", async () => {
    await expect(queryStats(dataDir, { sinceMs: -1 })).rejects.toThrow(/non-negative/);
  });
});

describe("topTools and calledServers", () => {
  it("returns the most-called tools by calls then name, within the window", async () => {
    fixture();
    expect(await topTools(dataDir, { n: 2, now: NOW })).toEqual([
      { server: "github", tool: "search", namespaced: "github__search", calls: 4 },
      { server: "memory", tool: "read", namespaced: "memory__read", calls: 2 },
    ]);
    expect((await topTools(dataDir, { n: 10, sinceMs: 2 * H, now: NOW })).map((t) => t.namespaced)).toEqual([
      "fs__read",
      "fs__write",
      "memory__read",
      "memory__write",
    ]);
  });

  it("lists servers that were called in the window", async () => {
    fixture();
    expect([...(await calledServers(dataDir, { now: NOW }))].sort()).toEqual(["fs", "github", "memory"]);
    expect([...(await calledServers(dataDir, { now: NOW, sinceMs: H }))].sort()).toEqual(["fs", "memory"]);
  });
});
