// Issue 15, items 4 and 5: detached calls are limited per agent (one agent cannot starve another);
// a call without timeout_ms gets the documented default (an idle timeout that progress resets,
// capped by call_timeout) and a timeout says what really happens to the session; on SIGTERM the
// daemon answers in-flight calls with an error at once, then drains and exits.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { detachedRefusal, MAX_DETACHED_IN_FLIGHT, MAX_DETACHED_TOTAL } from "../../src/gateway/call/index.js";
import { doc, FIXTURES, runMcphub, startGateway, tempHome, text, waitReady, type TempHome } from "../helpers/gateway.js";
import { httpClient, startDaemon, until } from "../helpers/mcp-daemon.js";

const SLOW = { command: process.execPath, args: [join(FIXTURES, "slow-tools.mjs")] };

let home: TempHome;
beforeAll(() => {
  home = tempHome("mcphub-calls-");
});
afterAll(() => home.cleanup());

describe("detached calls are fair between agents", () => {
  it("admits per agent, then up to the gateway's total", () => {
    const running = (agents: number) => Array.from({ length: agents * MAX_DETACHED_IN_FLIGHT }, (_, i) => `agent${Math.floor(i / MAX_DETACHED_IN_FLIGHT)}`);
    expect(detachedRefusal(running(1), "agent0")).toMatch(/\(8 of 8\) for this agent/);
    expect(detachedRefusal(running(1), "agent1")).toBeUndefined();
    expect(detachedRefusal(running(MAX_DETACHED_TOTAL / MAX_DETACHED_IN_FLIGHT), "late")).toMatch(/gateway has too many detached calls in flight \(32 of 32, across all agents\)/);
  });

  it("one agent at its limit does not stop another agent's detached call (daemon)", async () => {
    const cfg = home.writeConfig({ servers: { slow: SLOW }, agents: { busy: {}, other: {} } }, "fair.yaml");
    const tokens: Record<string, string> = {};
    for (const agent of ["busy", "other"]) {
      const r = await runMcphub(home, ["--config", cfg, "token", "create", agent]);
      tokens[agent] = r.stdout.trim();
    }
    const daemon = await startDaemon(home, cfg);
    const busy = await httpClient(daemon.url, tokens.busy);
    const other = await httpClient(daemon.url, tokens.other);
    try {
      await waitReady(busy, ["slow"]);
      const detach = (c: typeof busy) => c.call("mcphub_call_tool", { tool: "slow__silent", arguments: { ms: 600_000 }, detach: true });
      for (let i = 0; i < MAX_DETACHED_IN_FLIGHT; i++) expect(doc(await detach(busy)).status).toBe("accepted");
      const ninth = await detach(busy);
      expect(ninth.isError).toBe(true);
      expect(text(ninth)).toMatch(/too many detached calls in flight \(8 of 8\) for this agent/);
      const theirs = await detach(other);
      expect(theirs.isError).toBeFalsy();
      expect(doc(theirs).status).toBe("accepted");
    } finally {
      await busy.close();
      await other.close();
      await daemon.stop();
    }
  });
});

describe("call timeouts", () => {
  it("without timeout_ms: progress keeps a call alive, silence ends it after call_idle_timeout, call_timeout caps it; the session stays", async () => {
    const cfg = home.writeConfig({ expose: "all", call_idle_timeout: "1s", call_timeout: "4s", servers: { slow: SLOW } }, "timeouts.yaml");
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["slow"]);
      // 2.5 s in all, a progress notification every 200 ms: never idle for 1 s.
      const ticking = await gw.call("slow__ticking", { ms: 2500, every: 200 });
      expect(ticking.isError).toBeFalsy();
      expect(text(ticking)).toMatch(/^ticked \d+$/);

      const silent = await gw.call("slow__silent", { ms: 3000 });
      expect(silent.isError).toBe(true);
      expect(text(silent)).toMatch(/timed out: no answer and no progress for 1s \(call_idle_timeout\)/);
      expect(text(silent)).toMatch(/its connection stays up for other calls/);
      expect(text(silent)).not.toMatch(/re-established/);

      const endless = await gw.call("slow__ticking", { ms: 20_000, every: 200 });
      expect(endless.isError).toBe(true);
      expect(text(endless)).toMatch(/timed out: it ran past call_timeout \(4s\)/);

      const capped = await gw.call("mcphub_call_tool", { tool: "slow__ticking", arguments: { ms: 3000, every: 100 }, timeout_ms: 500 });
      expect(text(capped)).toMatch(/no answer within its timeout of 500ms/);

      // The same session still serves: nothing was reconnected.
      const servers = doc(await gw.call("mcphub_list_servers")).servers as { name: string; state: string }[];
      expect(servers.find((s) => s.name === "slow")?.state).toBe("ready");
      expect(text(await gw.call("slow__echo", { message: "after" }))).toBe("echo: after");
    } finally {
      await gw.close();
    }
  });
});

describe("daemon SIGTERM", () => {
  it("answers an in-flight call with an error at once, then drains and exits 0", async () => {
    // A home of its own: no agent tokens, so the daemon serves loopback clients unscoped.
    const own = tempHome("mcphub-sigterm-");
    const log = join(own.dir, "calls.log");
    const cfg = own.writeConfig({ expose: "all", servers: { slow: SLOW } }, "sigterm.yaml");
    const daemon = await startDaemon(own, cfg, [], { CALL_LOG: log });
    const c = await httpClient(daemon.url);
    await waitReady(c, ["slow"]);
    const pending = c.call("slow__silent", { ms: 600_000 });
    await until(() => (existsSync(log) && readFileSync(log, "utf8").includes("started silent") ? true : undefined), "the call to reach the server");
    const exited = daemon.stop("SIGTERM");
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/interrupted because the gateway is shutting down; the outcome is unknown/);
    expect(await exited).toBe(0);
    expect(daemon.stderr()).toMatch(/stopping: in-flight calls are answered with an error, then drained/);
    await c.close().catch(() => undefined);
    own.cleanup();
  });
});
