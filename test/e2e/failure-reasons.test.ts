// Issue 15, item 12: failure reasons an operator can act on. The stderr line that explains a failed
// start (with the missing file's path) reaches doctor --probe and list_servers, --verbose shows the
// tail, a server that keeps failing is logged once (with the next retry time), /healthz says
// "degraded" and names it, and --json commands print their errors as JSON.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { Supervisor } from "../../src/downstream/supervisor.js";
import { cliSandbox, type CliSandbox } from "../helpers/cli.js";
import { healthz, httpClient, startDaemon, until } from "../helpers/mcp-daemon.js";
import { doc, FIXTURES, tempHome, waitReady, type TempHome } from "../helpers/gateway.js";

const FAIL = { command: process.execPath, args: [join(FIXTURES, "fail-start.mjs")] };
const ECHO = { command: process.execPath, args: [join(FIXTURES, "echo.mjs")] };

describe("doctor --probe", () => {
  let sb: CliSandbox;
  beforeAll(() => {
    sb = cliSandbox("mcphub-reasons-");
    writeFileSync(sb.config, YAML.stringify({ servers: { broken: FAIL } }));
  });
  afterAll(() => sb.cleanup());

  it("shows the stderr line that explains the failure; --verbose adds the tail", async () => {
    const r = await sb.run(["doctor", "--probe", "--server", "broken"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}probe:broken .*downstream stderr: .*: Error: ENOENT: no such file or directory, open '\/srv\/missing\/settings\.json'/);
    expect(r.stdout).not.toContain("at Object.openSync");
    const v = await sb.run(["doctor", "--probe", "--server", "broken", "--verbose"]);
    expect(v.stdout).toContain("| starting fail-start v1");
    expect(v.stdout).toContain("|     at main (/srv/app/index.js:4:9)");
  });

  it("--json: one JSON document, failures in it and in the exit code; errors as JSON", async () => {
    const r = await sb.run(["doctor", "--probe", "--server", "broken", "--json"]);
    expect(r.code).toBe(1);
    const checks = JSON.parse(r.stdout) as { name: string; ok: boolean; error?: string }[];
    expect(checks.find((c) => c.name === "probe:broken")?.error).toContain("/srv/missing/settings.json");
    const bad = await sb.run(["--json", "enable", "ghost"]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toEqual({ error: 'unknown server "ghost"; configured servers: broken' });
    expect(bad.stderr).toBe("");
    const usage = await sb.run(["list", "--json", "--frobnicate"]);
    expect(usage.code).not.toBe(0);
    expect(JSON.parse(usage.stdout)).toEqual({ error: "unknown option '--frobnicate'" });
  });
});

describe("a permanently failing server", () => {
  it("is logged once per change, with the next retry time, however often it retries", async () => {
    const home = tempHome("mcphub-faillog-");
    const startLog = join(home.dir, "starts.log");
    const logs: string[] = [];
    process.env.START_LOG = startLog;
    const sup = new Supervisor({
      servers: { broken: { ...FAIL, enabled: true } },
      connectTimeoutMs: 10_000,
      clientInfo: { name: "mcphub", version: "test" },
      log: (level, msg) => logs.push(`${level}: ${msg}`),
      backoff: { initialMs: 5, maxMs: 40 },
    });
    try {
      sup.start();
      await until(() => (existsSync(startLog) && readFileSync(startLog, "utf8").split("\n").length > 6 ? true : undefined), `six start attempts (logs: ${logs.join(" | ")})`, 300);
      const mine = logs.filter((l) => l.includes("broken:"));
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatch(/^error: broken: connect failed: .*\/srv\/missing\/settings\.json.*; next retry in \d+ms \(\d\d:\d\d:\d\d UTC\), then with backoff up to 40ms; the same failure is not logged again$/);
      expect(sup.snapshot("broken")?.error).toContain("/srv/missing/settings.json");
    } finally {
      delete process.env.START_LOG;
      await sup.close();
      home.cleanup();
    }
  });
});

describe("daemon health and list_servers", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome("mcphub-health-");
  });
  afterAll(() => home.cleanup());

  it("/healthz is degraded (200) naming the failing server; list_servers shows the reason", async () => {
    const cfg = home.writeConfig({ servers: { broken: FAIL, fine: ECHO } });
    const daemon = await startDaemon(home, cfg);
    const c = await httpClient(daemon.url);
    try {
      await waitReady(c, ["fine"]);
      const h = await until(async () => {
        const x = await healthz(daemon.url);
        return x.status === "degraded" ? x : undefined;
      }, "a degraded health report");
      expect(h.httpStatus).toBe(200);
      expect(h.failing).toEqual([{ name: "broken", state: "failed" }]);
      expect(h.servers).toEqual({ ready: 1, connecting: 0, failing: 1 });
      const servers = doc(await c.call("mcphub_list_servers")).servers as { name: string; error?: string }[];
      expect(servers.find((s) => s.name === "broken")?.error).toContain("open '/srv/missing/settings.json'");
      // The daemon's own output: the failure once, not once per retry.
      await until(() => (daemon.stderr().includes("broken: failed") ? true : undefined), "the failure line");
      expect(daemon.stderr().match(/broken: failed/g)).toHaveLength(1);
    } finally {
      await c.close();
      await daemon.stop();
    }
  });
});
