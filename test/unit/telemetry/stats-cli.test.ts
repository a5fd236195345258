import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeRecord, type CallRecord, type StatsReport } from "../../../src/telemetry/index.js";
import { cliSandbox, type CliSandbox } from "../../helpers/cli.js";

let sb: CliSandbox;
const now = Date.now();

function rec(agoMs: number, server: string, tool: string, over: Partial<CallRecord> = {}): CallRecord {
  return {
    ts: now - agoMs,
    agent: "claude",
    server,
    tool,
    namespaced: `${server}__${tool}`,
    via: "call_tool",
    duration_ms: 120,
    ok: true,
    args_bytes: 20,
    result_bytes: 380,
    est_tokens: 100,
    ...over,
  };
}

beforeAll(() => {
  sb = cliSandbox("mcphub-stats-cli-");
  const dir = join(sb.dataDir, "telemetry");
  mkdirSync(dir, { recursive: true });
  for (const r of [
    rec(3 * 86_400_000, "github", "search_issues"),
    rec(2 * 3_600_000, "github", "search_issues"),
    rec(3_600_000, "memory", "read_graph", { ok: false, error_class: "timeout", duration_ms: 30_000, agent: "codex" }),
    rec(60_000, "github", "get_issue", { via: "mount" }),
  ]) {
    appendFileSync(join(dir, `calls-${new Date(r.ts).toISOString().slice(0, 10)}.ndjson`), encodeRecord(r));
  }
});
afterAll(() => sb.cleanup());

describe("mcphub stats", () => {
  it("prints the report as JSON with --json, honouring --since", async () => {
    const res = await sb.run(["stats", "--since", "24h", "--json", "--recent", "2"]);
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    const r = JSON.parse(res.stdout) as StatsReport;
    expect(r.totals).toMatchObject({ calls: 3, errors: 1, est_tokens: 300 });
    expect(r.servers.map((s) => [s.server, s.calls])).toEqual([["github", 2], ["memory", 1]]);
    expect(r.recent?.map((x) => x.tool)).toEqual(["github__get_issue", "memory__read_graph"]);
  });

  it("prints readable tables without colour when not on a terminal", async () => {
    const res = await sb.run(["stats", "--tools", "--recent", "1", "--server", "github"]);
    expect(res.code).toBe(0);
    expect(res.stdout).not.toMatch(/\x1b\[/);
    expect(res.stdout).toMatch(/^3 calls, 0 errors, ~300 est\. tokens/);
    expect(res.stdout).toMatch(/SERVER\s+CALLS\s+ERRORS\s+EST_TOKENS\s+AVG\n\s*github\s+3\s+0\s+300\s+120ms/);
    expect(res.stdout).toMatch(/github__search_issues\s+2\s+0\s+200\s+120ms/);
    expect(res.stdout).toMatch(/TIME \(UTC\)\s+TOOL/);
    expect(res.stdout).toContain("github__get_issue");
  });

  it("rejects a bad --since with one clear line and a non-zero exit", async () => {
    const res = await sb.run(["stats", "--since", "yesterday"]);
    expect(res.code).not.toBe(0);
    expect(res.stdout).toBe("");
    expect(res.stderr.trim().split("\n")).toEqual(['mcphub: --since "yesterday" is not a duration; use e.g. 90m, 24h or 7d']);
  });

  it("says so when nothing was recorded", async () => {
    const empty = cliSandbox("mcphub-stats-empty-");
    try {
      const res = await empty.run(["stats"]);
      expect(res.code).toBe(0);
      expect(res.stdout.trim()).toBe("No calls recorded (all retained calls).");
    } finally {
      empty.cleanup();
    }
  });
});
