// The status page's last hour: tailing day files incrementally must count exactly what a full
// `queryStats --since 1h` counts, never a torn line, and forget calls as they leave the window.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodeRecord, queryStats, type CallRecord } from "../../../src/telemetry/index.js";
import { MAX_SAMPLES_PER_BUCKET, RecentCalls } from "../../../src/telemetry/recent.js";
import { NOT_SENT_ERROR_CLASSES } from "../../../src/telemetry/record.js";
import type { RefusalReason } from "../../../src/guard/refusals.js";

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "mcphub-recent-"));
  mkdirSync(join(dataDir, "telemetry"), { recursive: true });
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const MIN = 60_000;
// 00:20 UTC: the last hour spans yesterday's and today's day files.
const NOW = Date.UTC(2026, 10, 30, 0, 20, 30);

function rec(ts: number, server: string, over: Partial<CallRecord> = {}): CallRecord {
  return {
    ts,
    agent: "claude",
    server,
    tool: "t",
    namespaced: `${server}__t`,
    via: "call_tool",
    duration_ms: 100,
    ok: true,
    args_bytes: 1,
    result_bytes: 1,
    est_tokens: 1,
    ...over,
  };
}

function fileOf(ts: number): string {
  return join(dataDir, "telemetry", `calls-${new Date(ts).toISOString().slice(0, 10)}.ndjson`);
}

function write(records: CallRecord[]): void {
  for (const r of records) appendFileSync(fileOf(r.ts), encodeRecord(r));
}

describe("RecentCalls", () => {
  it("counts calls refused before they reached the server apart: not its errors, not its latency (issue 24, item 7)", async () => {
    write([
      rec(NOW - 5 * MIN, "memory", { duration_ms: 40 }),
      rec(NOW - 4 * MIN, "memory", { duration_ms: 60, ok: false, error_class: "tool_error" }),
      rec(NOW - 3 * MIN, "memory", { duration_ms: 0, ok: false, error_class: "invalid_arguments" }),
      rec(NOW - 2 * MIN, "memory", { duration_ms: 0, ok: false, error_class: "denied" }),
      rec(NOW - 1 * MIN, "memory", { duration_ms: 0, ok: false, error_class: "declined" }),
    ]);
    const recent = new RecentCalls(dataDir, { now: () => NOW, minRefreshMs: 0 });
    await recent.refresh();
    const m = recent.server("memory");
    expect(m).toMatchObject({ calls: 2, errors: 1, errorRate: 0.5, refused: 3, p50Ms: 40, p95Ms: 60 });
    expect(recent.total()).toMatchObject({ calls: 2, errors: 1, refused: 3 });
    expect(m.lastCall).toBe(NOW - 1 * MIN);
  });

  it("every guardrail refusal reason and invalid_arguments is a never-sent class", () => {
    // A new refusal reason fails to compile here until it is listed (and so counted apart).
    const reasons: Record<RefusalReason, true> = {
      denied: true,
      effect_not_allowed: true,
      definition_changed: true,
      awaiting_approval: true,
      definitions_unreadable: true,
      confirmation_unavailable: true,
      confirmation_timeout: true,
      declined: true,
    };
    for (const r of [...Object.keys(reasons), "invalid_arguments"]) expect(NOT_SENT_ERROR_CLASSES.has(r), r).toBe(true);
    for (const r of ["tool_error", "timeout", "outcome_unknown", "not_connected", "needs_auth", "error"]) expect(NOT_SENT_ERROR_CLASSES.has(r), r).toBe(false);
  });

  it("counts the last hour across two day files exactly as queryStats does", async () => {
    const records: CallRecord[] = [];
    for (let i = 0; i < 300; i++) {
      const ts = NOW - ((i * 7919) % (80 * MIN)); // spread over 80 minutes: some fall outside
      records.push(rec(ts, i % 3 === 0 ? "memory" : "everything", { duration_ms: (i * 37) % 1000, ok: i % 10 !== 0, agent: i % 2 ? "claude" : "codex" }));
    }
    write(records);
    const recent = new RecentCalls(dataDir, { now: () => NOW, minRefreshMs: 0 });
    await recent.refresh();
    for (const server of ["memory", "everything"]) {
      const mine = recent.server(server);
      // queryStats' window is ts >= now - 1h; ours is whole minutes, so compare on that window.
      const windowStart = (Math.floor(NOW / MIN) - 59) * MIN;
      const full = await queryStats(dataDir, { sinceMs: NOW - windowStart, now: NOW, server, workers: 0 });
      expect(mine.calls).toBe(full.totals.calls);
      expect(mine.errors).toBe(full.totals.errors);
      expect(mine.p50Ms).toBe(full.totals.p50_ms);
      expect(mine.series.calls.reduce((a, b) => a + b, 0)).toBe(mine.calls);
      expect(mine.series.calls).toHaveLength(60);
    }
    expect(recent.serverNames()).toEqual(["everything", "memory"]);
    expect([...recent.lastCallByAgent().keys()].sort()).toEqual(["claude", "codex"]);
    const total = recent.total();
    expect(total.calls).toBe(recent.server("memory").calls + recent.server("everything").calls);
  });

  it("reads only what was appended, and never a torn last line", async () => {
    const recent = new RecentCalls(dataDir, { now: () => NOW, minRefreshMs: 0 });
    await recent.refresh(); // no files yet: no calls, no error
    expect(recent.server("memory").calls).toBe(0);
    write([rec(NOW - MIN, "memory"), rec(NOW - 2 * MIN, "memory", { ok: false, error_class: "timeout" })]);
    await recent.refresh();
    expect(recent.server("memory")).toMatchObject({ calls: 2, errors: 1, errorRate: 0.5 });
    // A writer is mid-append: half a line is on disk.
    const line = encodeRecord(rec(NOW - 10_000, "memory", { duration_ms: 900 }));
    appendFileSync(fileOf(NOW), line.slice(0, 20));
    await recent.refresh();
    expect(recent.server("memory").calls).toBe(2);
    expect(recent.malformed).toBe(0);
    appendFileSync(fileOf(NOW), line.slice(20));
    await recent.refresh();
    expect(recent.server("memory").calls).toBe(3);
    expect(recent.server("memory").lastCall).toBe(NOW - 10_000);
    await recent.refresh(); // nothing new: nothing counted twice
    expect(recent.server("memory").calls).toBe(3);
  });

  it("starts over when the file was replaced by a shorter one", async () => {
    write([rec(NOW - MIN, "memory"), rec(NOW - MIN, "memory")]);
    const recent = new RecentCalls(dataDir, { now: () => NOW, minRefreshMs: 0 });
    await recent.refresh();
    expect(recent.server("memory").calls).toBe(2);
    writeFileSync(fileOf(NOW), encodeRecord(rec(NOW - MIN, "other")));
    await recent.refresh();
    expect(recent.server("other").calls).toBe(1);
  });

  it("forgets calls as they leave the window", async () => {
    let now = NOW;
    write([rec(NOW - 5 * MIN, "memory"), rec(NOW - 50 * MIN, "memory")]);
    const recent = new RecentCalls(dataDir, { now: () => now, minRefreshMs: 0 });
    await recent.refresh();
    expect(recent.server("memory").calls).toBe(2);
    now = NOW + 20 * MIN;
    expect(recent.server("memory").calls).toBe(1);
    now = NOW + 2 * 60 * MIN;
    await recent.refresh();
    expect(recent.server("memory").calls).toBe(0);
    expect(recent.serverNames()).toEqual([]);
  });

  it("bounds the durations kept per minute, and still counts every call", async () => {
    const n = MAX_SAMPLES_PER_BUCKET * 3;
    const minuteStart = Math.floor(NOW / MIN) * MIN;
    write(Array.from({ length: n }, (_, i) => rec(minuteStart + (i % 30_000), "busy", { duration_ms: i % 200 })));
    const recent = new RecentCalls(dataDir, { now: () => NOW, minRefreshMs: 0 });
    await recent.refresh();
    const s = recent.server("busy");
    expect(s.calls).toBe(n);
    // A uniform sample of 0..199 has its median near 100.
    expect(s.p50Ms).toBeGreaterThan(80);
    expect(s.p50Ms).toBeLessThan(120);
  });

  it("shares one read between concurrent callers and spaces refreshes", async () => {
    write([rec(NOW - MIN, "memory")]);
    const recent = new RecentCalls(dataDir, { now: () => NOW, minRefreshMs: 60_000 });
    await Promise.all([recent.refresh(), recent.refresh(), recent.refresh()]);
    expect(recent.server("memory").calls).toBe(1);
    write([rec(NOW - MIN, "memory")]);
    await recent.refresh(); // within minRefreshMs: not read yet
    expect(recent.server("memory").calls).toBe(1);
  });
});
