// Issue 28, structured logs: `--log-format json` writes one JSON object a line on stderr (time,
// level, message), and a line written while a tool call is handled carries that request's id and,
// with tracing on, its trace id; the daemon's operator lines are JSON too. A bad format is refused.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, runMcphub, startGateway, tempHome, type TempHome } from "../helpers/gateway.js";
import { startDaemon, until } from "../helpers/mcp-daemon.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp.js";

const CRASH = { command: process.execPath, args: [join(FIXTURES, "crash-mid-call.mjs")] };

interface LogLine {
  ts: string;
  level: string;
  msg: string;
  request_id?: string;
  trace_id?: string;
}

function jsonLines(stderr: string): LogLine[] {
  return stderr
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const parsed = JSON.parse(l) as LogLine;
      expect(Object.keys(parsed).slice(0, 3)).toEqual(["ts", "level", "msg"]);
      expect(new Date(parsed.ts).toISOString()).toBe(parsed.ts);
      expect(["info", "warn", "error"]).toContain(parsed.level);
      return parsed;
    });
}

let home: TempHome;
let receiver: OtlpReceiver;
beforeAll(async () => {
  home = tempHome("mcphub-logs-");
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
  home.cleanup();
});

describe("--log-format json", () => {
  it("mcp serve: every stderr line is one object; a call's lines carry its request id and trace id", async () => {
    const cfg = home.writeConfig({ expose: "all", servers: { crash: CRASH }, telemetry: { otlp: { url: receiver.url } } }, "stdio.yaml");
    const gw = await startGateway(home, cfg, { extraArgs: ["--log-format", "json"], env: { MCPHUB_LOG_LEVEL: "info" } });
    try {
      await until(async () => ((await gw.client.listTools()).tools.some((t) => t.name === "crash__crash") ? true : undefined), "crash's tools");
      expect((await gw.call("crash__echo", { message: "hi" })).isError).toBeFalsy();
      const r = await gw.call("crash__crash");
      expect(r.isError).toBe(true);
      await until(() => (jsonLines(gw.stderr()).some((l) => l.request_id !== undefined) ? true : undefined), "a line of the call");
    } finally {
      await gw.close();
    }
    const lines = jsonLines(gw.stderr());
    expect(lines.length).toBeGreaterThan(1);
    const ofCall = lines.filter((l) => l.request_id !== undefined);
    expect(ofCall.length).toBeGreaterThan(0);
    for (const l of ofCall) {
      expect(l.request_id).toMatch(/^\d+:\d+$/);
      expect(l.trace_id).toMatch(/^[0-9a-f]{32}$/);
    }
    // The access line of each call, in its own request; the connection's own events in none.
    const echo = ofCall.find((l) => /^call crash__echo: ok in [\d.]+ ms$/.test(l.msg));
    const crash = ofCall.find((l) => /^call crash__crash: \w+ in [\d.]+ ms$/.test(l.msg));
    expect(echo?.level).toBe("info");
    expect(crash?.request_id).not.toBe(echo?.request_id);
    expect(crash?.trace_id).not.toBe(echo?.trace_id);
    expect(lines.find((l) => l.msg.startsWith("crash: ready"))?.request_id).toBeUndefined();
    // The trace id in the log is a trace that was exported.
    const traceId = ofCall[0]?.trace_id;
    await until(() => (receiver.spans.some((s) => s.traceId === traceId) ? true : undefined), "the logged trace exported", 300);
    // Lines outside any call carry neither.
    expect(lines.some((l) => l.request_id === undefined && l.trace_id === undefined)).toBe(true);
  });

  it("mcp up: the operator's lines are JSON objects too", async () => {
    const cfg = home.writeConfig({ servers: {} }, "daemon.yaml");
    const d = await startDaemon(home, cfg, ["--log-format", "json"]);
    try {
      const lines = jsonLines(d.stderr());
      expect(lines.find((l) => l.msg.startsWith("mcphub listening on http://127.0.0.1:"))?.level).toBe("info");
    } finally {
      await d.stop();
    }
  });

  it("refuses an unknown format with the choices", async () => {
    const cfg = home.writeConfig({ servers: {} }, "bad.yaml");
    const r = await runMcphub(home, ["--config", cfg, "mcp", "serve", "--log-format", "xml"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/--log-format "xml" is not a log format; use text or json/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
