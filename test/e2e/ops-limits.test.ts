// Issue 28, limits, end to end on the daemon: the 61st call in a minute under calls_per_minute: 60
// is refused at once with a JSON-RPC error naming the limit and when to retry; another agent is
// unaffected; a server's concurrent_calls refuses without a queue and queues with one; the limits
// show on /api/status and in /metrics; a reload changes them.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIMITED_ERROR_CODE } from "../../src/gateway/call/index.js";
import { FIXTURES, runMcphub, tempHome, type TempHome } from "../helpers/gateway.js";
import { httpClient, rawRequest, startDaemon, until, type Daemon, type HttpClient } from "../helpers/mcp-daemon.js";
import { parseScrape } from "../helpers/prometheus.js";

const ECHO = { command: process.execPath, args: [join(FIXTURES, "echo.mjs")] };
const SLOW = { command: process.execPath, args: [join(FIXTURES, "slow-tools.mjs")] };

function configOf(perMinute: number) {
  return {
    expose: "all",
    servers: {
      echo: ECHO,
      slow: { ...SLOW, limits: { concurrent_calls: 1 } },
      slowq: { ...SLOW, limits: { concurrent_calls: 1, queue: 1, queue_timeout: "2m" } },
    },
    agents: { alpha: { limits: { calls_per_minute: perMinute } }, beta: {} },
  };
}

let home: TempHome;
let cfg: string;
let daemon: Daemon;
let tokens: Record<string, string>;
let alpha: HttpClient;
let beta: HttpClient;
beforeAll(async () => {
  home = tempHome("mcphub-limits-");
  cfg = home.writeConfig(configOf(60));
  tokens = {};
  for (const agent of ["alpha", "beta"]) tokens[agent] = (await runMcphub(home, ["--config", cfg, "token", "create", agent])).stdout.trim();
  daemon = await startDaemon(home, cfg);
  alpha = await httpClient(daemon.url, tokens.alpha);
  beta = await httpClient(daemon.url, tokens.beta);
  for (const c of [alpha, beta]) await until(async () => ((await c.client.listTools()).tools.some((t) => t.name === "echo__echo") ? true : undefined), "echo's tools");
});
afterAll(async () => {
  await alpha?.close();
  await beta?.close();
  await daemon?.stop();
  home.cleanup();
});

async function limitedError(p: Promise<unknown>): Promise<McpError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

async function status(token: string): Promise<{ agents: { name: string; limits: Record<string, unknown> }[]; servers: { name: string; limits: Record<string, unknown> }[] }> {
  const r = await rawRequest(daemon.url.replace(/\/mcp$/, "/api/status"), "GET", { authorization: `Bearer ${token}` });
  expect(r.status).toBe(200);
  return JSON.parse(r.body) as never;
}

describe("calls_per_minute", () => {
  it("refuses the 61st call under 60 with the limit's name and when to retry; another agent is unaffected", async () => {
    for (let i = 0; i < 60; i++) expect((await alpha.call("echo__echo", { message: `m${i}` })).isError).toBeFalsy();
    const err = await limitedError(alpha.call("echo__echo", { message: "one too many" }));
    expect(err.code).toBe(LIMITED_ERROR_CODE);
    expect(err.message).toMatch(/agent "alpha" started 60 calls in the last minute, its limit \(agents\.alpha\.limits\.calls_per_minute: 60\); retry in \d+s/);
    const data = err.data as { limit: string; kind: string; value: number; retry_after_ms: number };
    expect(data).toMatchObject({ limit: "agents.alpha.limits.calls_per_minute", kind: "calls_per_minute", value: 60 });
    expect(data.retry_after_ms).toBeGreaterThan(0);
    expect(data.retry_after_ms).toBeLessThanOrEqual(60_000);
    // Through the management tool as well: the same JSON-RPC error, not a result the model must parse.
    const viaTool = await limitedError(alpha.call("mcphub_call_tool", { tool: "echo__echo", arguments: { message: "again" } }));
    expect(viaTool.code).toBe(LIMITED_ERROR_CODE);
    expect((await beta.call("echo__echo", { message: "beta is fine" })).isError).toBeFalsy();

    const st = await status(tokens.alpha as string);
    expect(st.agents.find((a) => a.name === "alpha")?.limits).toMatchObject({ calls_per_minute: { limit: 60, key: "agents.alpha.limits.calls_per_minute", last_minute: 60 } });
    const m = parseScrape((await rawRequest(daemon.url.replace(/\/mcp$/, "/metrics"), "GET", { authorization: `Bearer ${tokens.alpha}` })).body);
    expect(m.total("mcphub_limit_refusals_total", { limit: "calls_per_minute", agent: "alpha" })).toBe(2);
    expect(m.total("mcphub_tool_calls_total", { agent: "alpha", outcome: "limited" })).toBe(2);
    expect(m.total("mcphub_agent_calls_last_minute", { agent: "alpha" })).toBe(60);
  });

  it("a reload that raises the limit admits the agent's next call", async () => {
    writeFileSync(cfg, YAML.stringify(configOf(1000)));
    const admitted = async () => {
      const r = await alpha.call("echo__echo", { message: "after reload" }).catch((err: unknown) => {
        // Until the daemon has read the new file, the old limit answers.
        expect((err as McpError).code).toBe(LIMITED_ERROR_CODE);
        return undefined;
      });
      return r !== undefined && r.isError !== true ? true : undefined;
    };
    await until(admitted, "the raised limit", 200, 100);
  });
});

describe("a server's concurrent_calls", () => {
  it("without a queue refuses a second call at once; with a queue of 1 the second waits and is sent", async () => {
    const first = beta.call("slow__silent", { ms: 4000 });
    await until(async () => ((await status(tokens.beta as string)).servers.find((s) => s.name === "slow")?.limits.in_flight === 1 ? true : undefined), "the first slow call in flight");
    const err = await limitedError(alpha.call("slow__silent", { ms: 1 }));
    expect(err.code).toBe(LIMITED_ERROR_CODE);
    expect(err.message).toMatch(/server "slow" has 1 calls in flight, its limit \(servers\.slow\.limits\.concurrent_calls: 1\), and no queue/);
    expect(err.data).toMatchObject({ limit: "servers.slow.limits.concurrent_calls", kind: "server_concurrent_calls", value: 1 });
    expect((await first).isError).toBeFalsy();

    const held = beta.call("slowq__silent", { ms: 1500 });
    await until(async () => ((await status(tokens.beta as string)).servers.find((s) => s.name === "slowq")?.limits.in_flight === 1 ? true : undefined), "the first queued-server call in flight");
    const waiting = alpha.call("slowq__silent", { ms: 1 });
    const shown = await until(async () => {
      const s = (await status(tokens.beta as string)).servers.find((x) => x.name === "slowq");
      return s?.limits.queued === 1 ? s : undefined;
    }, "the second call in the queue");
    expect(shown.limits).toMatchObject({ in_flight: 1, queued: 1, concurrent_calls: { limit: 1, queue: 1, queue_timeout_ms: 120_000 } });
    // A third finds the queue full.
    const full = await limitedError(beta.call("slowq__silent", { ms: 1 }));
    expect(full.message).toMatch(/1 calls already waiting, the queue's size \(servers\.slowq\.limits\.queue: 1\)/);
    expect((await held).isError).toBeFalsy();
    expect((await waiting).isError).toBeFalsy();
  });
});
