// Issue 28, /metrics: the daemon's Prometheus exposition, scraped while calls are made and read
// with a real text-format parser. Counters and histograms move with the calls; the series stay
// bounded over 1,000 distinct calls (no argument value, no unknown tool name becomes a label);
// access is that of /api/status (loopback before any token, then a bearer token, an agent's token
// seeing only its own series); a guardrail refusal is counted as an event; `mcp serve
// --metrics-listen` serves the same on a loopback port.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, runMcphub, startGateway, tempHome, type TempHome } from "../helpers/gateway.js";
import { httpClient, rawRequest, startDaemon, until, type Daemon, type HttpClient } from "../helpers/mcp-daemon.js";
import { parseScrape, type Scrape } from "../helpers/prometheus.js";

const ECHO = { command: process.execPath, args: [join(FIXTURES, "echo.mjs")] };
const CANARY = "canary-7f3e9b1d";

let home: TempHome;
let daemon: Daemon;
let cfg: string;
let base: string;
beforeAll(async () => {
  home = tempHome("mcphub-metrics-");
  cfg = home.writeConfig({ expose: "all", servers: { echo: ECHO, other: ECHO }, agents: { alpha: {}, beta: { servers: ["other"] } } });
  daemon = await startDaemon(home, cfg);
  base = daemon.url.replace(/\/mcp$/, "");
});
afterAll(async () => {
  await daemon?.stop();
  home.cleanup();
});

async function scrape(token?: string): Promise<Scrape> {
  const r = await rawRequest(`${base}/metrics`, "GET", token ? { authorization: `Bearer ${token}` } : {});
  expect(r.status, r.body).toBe(200);
  expect(String(r.headers["content-type"])).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseScrape(r.body);
}

const echo = (c: HttpClient, message: string) => c.call("echo__echo", { message });

describe("/metrics on the daemon", () => {
  let client: HttpClient;
  beforeAll(async () => {
    client = await httpClient(daemon.url);
  });
  afterAll(() => client?.close());

  it("counts calls by server, tool, agent and outcome, with gateway and downstream time apart", async () => {
    await until(async () => ((await client.client.listTools()).tools.some((t) => t.name === "echo__echo") ? true : undefined), "echo's tools");
    const before = await scrape();
    const calls0 = before.total("mcphub_tool_calls_total", { server: "echo", tool: "echo__echo", outcome: "ok" });
    for (let i = 0; i < 5; i++) expect((await echo(client, `hello ${i}`)).isError).toBeFalsy();
    await client.call("mcphub_call_tool", { tool: "echo__missing", arguments: {} });
    await client.call("mcphub_search_tools", { query: "echo a message" });
    const after = await scrape();
    expect(after.total("mcphub_tool_calls_total", { server: "echo", tool: "echo__echo", agent: "(unscoped)", outcome: "ok" }) - calls0).toBe(5);
    // The unknown tool is counted, without its name: server and tool empty. (A name in a known
    // server's namespace is a bad reference: the answer suggests the names it may have meant.)
    expect(after.total("mcphub_tool_calls_total", { server: "", tool: "", outcome: "bad_reference" })).toBeGreaterThanOrEqual(1);
    expect(after.types.get("mcphub_tool_call_gateway_seconds")).toBe("histogram");
    expect(after.types.get("mcphub_tool_call_downstream_seconds")).toBe("histogram");
    const moved = (name: string) => after.total(name, { server: "echo" }) - before.total(name, { server: "echo" });
    expect(moved("mcphub_tool_call_gateway_seconds")).toBe(5);
    expect(moved("mcphub_tool_call_downstream_seconds")).toBe(5);
    expect(after.total("mcphub_tool_call_gateway_seconds_sum", { server: "echo" })).toBeGreaterThan(0);
    expect(after.total("mcphub_tool_call_downstream_seconds_sum", { server: "echo" })).toBeGreaterThan(0);
    // Every call lands in the +Inf bucket of its server's histogram.
    expect(after.total("mcphub_tool_call_gateway_seconds_bucket", { server: "echo", le: "+Inf" })).toBe(after.total("mcphub_tool_call_gateway_seconds", { server: "echo" }));
    expect(after.total("mcphub_discovery_seconds", { tool: "search_tools" })).toBeGreaterThanOrEqual(1);
    expect(after.total("mcphub_sessions", { agent: "(unscoped)" })).toBeGreaterThanOrEqual(1);
    expect(after.total("mcphub_downstream_state", { server: "echo", state: "ready" })).toBe(1);
    expect(after.total("mcphub_downstream_up", { server: "echo" })).toBe(1);
    expect(after.total("mcphub_downstream_tools", { server: "echo" })).toBe(1);
    // Node's process metrics are there for the usual dashboards.
    expect(after.families.has("process_cpu_seconds_total")).toBe(true);
  });

  it("keeps the series bounded over 1,000 distinct calls (arguments and unknown names are never labels)", async () => {
    const warm = await scrape();
    const known = warm.series().length;
    for (let batch = 0; batch < 100; batch++) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) => {
          const i = batch * 10 + j;
          return i % 2 === 0 ? echo(client, `${CANARY}-${i}`) : client.call("mcphub_call_tool", { tool: `echo__${CANARY}_${i}`, arguments: { x: i } });
        }),
      );
    }
    const after = await scrape();
    const series = after.series();
    // Only the histograms' buckets of series that existed already can be new: no new label sets.
    expect(series.length).toBe(known);
    expect(series.join("\n")).not.toContain(CANARY);
    expect(after.total("mcphub_tool_calls_total", { server: "echo", tool: "echo__echo", outcome: "ok" })).toBeGreaterThanOrEqual(505);
  });

  it("counts the vault's store operations (a result over the budget is stored)", async () => {
    const r = await client.call("mcphub_call_tool", { tool: "echo__echo", arguments: { message: "x".repeat(200_000) } });
    expect(r.isError).toBeFalsy();
    const s = await scrape();
    expect(s.total("mcphub_store_operations_total", { store: "results", outcome: "ok" })).toBeGreaterThanOrEqual(1);
    expect(s.total("mcphub_store_operation_seconds", { store: "results" })).toBeGreaterThanOrEqual(1);
  });
});

describe("/metrics access", () => {
  it("needs a token once tokens exist; an agent's token shows only its own series", async () => {
    const alphaTok = (await runMcphub(home, ["--config", cfg, "token", "create", "alpha"])).stdout.trim();
    const betaTok = (await runMcphub(home, ["--config", cfg, "token", "create", "beta"])).stdout.trim();
    const anon = await rawRequest(`${base}/metrics`, "GET", {});
    expect(anon.status).toBe(401);
    expect(anon.body).toMatch(/Authorization: Bearer <token>/);
    expect((await rawRequest(`${base}/metrics`, "GET", { authorization: "Bearer nope" })).status).toBe(401);
    const alpha = await httpClient(daemon.url, alphaTok);
    const beta = await httpClient(daemon.url, betaTok);
    try {
      expect((await echo(alpha, "from alpha")).isError).toBeFalsy();
      expect((await beta.call("other__echo", { message: "from beta" })).isError).toBeFalsy();
      const seen = await scrape(betaTok);
      const agents = new Set(seen.samples("mcphub_tool_calls_total").map((m) => m.labels?.agent));
      expect([...agents]).toEqual(["beta"]);
      const servers = new Set([...seen.families.values()].flatMap((f) => f.metrics.map((m) => m.labels?.server)).filter((s) => s !== undefined && s !== ""));
      expect([...servers]).toEqual(["other"]);
      // Node's process metrics are the operator's.
      expect(seen.families.has("process_cpu_seconds_total")).toBe(false);
      const post = await rawRequest(`${base}/metrics`, "POST", { authorization: `Bearer ${betaTok}` }, {});
      expect(post.status).toBe(405);
    } finally {
      await alpha.close();
      await beta.close();
    }
  });
});

describe("guardrail events", () => {
  it("counts a refusal by event, reason and agent, and the refused call by its outcome", async () => {
    const own = tempHome("mcphub-metrics-guard-");
    try {
      const c = own.writeConfig({ expose: "all", servers: { echo: ECHO }, agents: { careful: { policy: { deny: ["echo__echo"] } } } });
      const gw = await startGateway(own, c, { extraArgs: ["--agent", "careful", "--metrics-listen", "127.0.0.1:0"], env: { MCPHUB_LOG_LEVEL: "info" } });
      try {
        const url = await until(() => /metrics at (http:\/\/\S+\/metrics)/.exec(gw.stderr())?.[1], "the metrics line");
        const before = parseScrape((await rawRequest(url, "GET", {})).body);
        expect(before.total("mcphub_guardrail_events_total")).toBe(0);
        const refused = await gw.client.callTool({ name: "mcphub_call_tool", arguments: { tool: "echo__echo", arguments: { message: CANARY } } });
        expect(JSON.stringify(refused)).toMatch(/denied/);
        const after = parseScrape((await rawRequest(url, "GET", {})).body);
        expect(after.total("mcphub_guardrail_events_total", { event: "refused", reason: "denied", agent: "careful" })).toBe(1);
        expect(after.total("mcphub_tool_calls_total", { server: "echo", tool: "echo__echo", agent: "careful", outcome: "denied" })).toBe(1);
        expect(after.series().join("\n")).not.toContain(CANARY);
      } finally {
        await gw.close();
      }
    } finally {
      own.cleanup();
    }
  });
});

describe("mcp serve --metrics-listen", () => {
  it("serves /metrics on a loopback port of its own, and refuses another address", async () => {
    const own = tempHome("mcphub-metrics-stdio-");
    try {
      const c = own.writeConfig({ expose: "all", servers: { echo: ECHO } });
      const gw = await startGateway(own, c, { extraArgs: ["--metrics-listen", "127.0.0.1:0"], env: { MCPHUB_LOG_LEVEL: "info" } });
      try {
        const url = await until(() => /metrics at (http:\/\/\S+\/metrics)/.exec(gw.stderr())?.[1], "the metrics line");
        await until(async () => ((await gw.client.listTools()).tools.some((t) => t.name === "echo__echo") ? true : undefined), "echo's tools");
        expect((await gw.call("echo__echo", { message: "hi" })).isError).toBeFalsy();
        const r = await rawRequest(url, "GET", {});
        expect(r.status).toBe(200);
        const s = parseScrape(r.body);
        expect(s.total("mcphub_tool_calls_total", { server: "echo", outcome: "ok" })).toBe(1);
        expect(s.total("mcphub_sessions")).toBe(1);
        // DNS rebinding: a page reaching the port under another name is refused.
        expect((await rawRequest(url, "GET", { host: "evil.example:80" })).status).toBe(403);
        expect((await rawRequest(url.replace(/\/metrics$/, "/other"), "GET", {})).status).toBe(404);
      } finally {
        await gw.close();
      }
      const bad = await runMcphub(own, ["--config", c, "mcp", "serve", "--metrics-listen", "0.0.0.0:0"]);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/loopback only/);
      expect(bad.stderr).not.toMatch(/\n\s+at /);
    } finally {
      own.cleanup();
    }
  });
});
