// Issue 15, items 4 and 5: detached calls are limited per agent (one agent cannot starve another);
// a call without timeout_ms gets the documented default (an idle timeout that progress resets,
// capped by call_timeout) and a timeout says what really happens to the session; on SIGTERM the
// daemon answers in-flight calls with an error at once, then drains and exits.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_DETACHED } from "../../src/config/schema.js";
import { detachedRefusal } from "../../src/gateway/call/index.js";
import { createTokens } from "../helpers/daemon.js";
import { doc, FIXTURES, runMcphub, startGateway, tempHome, text, waitReady, type TempHome } from "../helpers/gateway.js";
import { httpClient, startDaemon, until } from "../helpers/mcp-daemon.js";

const SLOW = { command: process.execPath, args: [join(FIXTURES, "slow-tools.mjs")] };

let home: TempHome;
beforeAll(() => {
  home = tempHome("mcphub-calls-");
});
afterAll(() => home.cleanup());

describe("detached calls are fair between agents", () => {
  const limits = { ...DEFAULT_DETACHED };
  const running = (agents: number, each: number) => Array.from({ length: agents * each }, (_, i) => `agent${Math.floor(i / each)}`);

  it("admits per agent, each agent's reserved share always, and the rest from the shared pool", () => {
    expect(detachedRefusal(running(1, 8), "agent0", limits)).toMatch(/\(8 of 8\) for this agent/);
    expect(detachedRefusal(running(1, 8), "agent1", limits)).toBeUndefined();
    // 4 agents × 8 fill the shared pool (4 × 6 beyond their 2 reserved): a fifth still gets 2.
    const full = running(4, 8);
    expect(detachedRefusal(full, "late", limits)).toBeUndefined();
    expect(detachedRefusal([...full, "late"], "late", limits)).toBeUndefined();
    expect(detachedRefusal([...full, "late", "late"], "late", limits)).toBe(
      "too many detached calls in flight: this agent has 2 (each agent is guaranteed 2), and the 24 shared slots for calls beyond that are all in use; poll the existing callIds or wait for one to finish",
    );
    // However many agents hold hung calls, a new one is never refused its reserved share.
    expect(detachedRefusal(running(50, 8), "agent-new", limits)).toBeUndefined();
  });

  it("4 agents with 8 hung detached calls each; a fifth agent's detached calls still run and complete (daemon)", async () => {
    const agents = ["a1", "a2", "a3", "a4", "fifth"];
    const cfg = home.writeConfig({ servers: { slow: { ...SLOW, start: "eager" } }, agents: Object.fromEntries(agents.map((a) => [a, {}])) }, "fair.yaml");
    const tokens = await createTokens(home, cfg, agents);
    const daemon = await startDaemon(home, cfg);
    const clients = await Promise.all(agents.map((a) => httpClient(daemon.url, tokens[a])));
    const [fifth] = clients.slice(4) as [Awaited<ReturnType<typeof httpClient>>];
    try {
      await waitReady(fifth, ["slow"]);
      const detach = (c: typeof fifth, ms: number) => c.call("mcphub_call_tool", { tool: "slow__silent", arguments: { ms }, detach: true });
      for (const c of clients.slice(0, 4)) {
        for (let i = 0; i < DEFAULT_DETACHED.per_agent; i++) expect(doc(await detach(c, 600_000)).status).toBe("accepted");
        const ninth = await detach(c, 600_000);
        expect(text(ninth)).toMatch(/too many detached calls in flight \(8 of 8\) for this agent/);
      }
      // 32 hung calls: the fifth agent's calls are admitted and finish, round after round. Each
      // runs 3 s, so both are still running when the third is offered.
      for (let round = 0; round < 2; round++) {
        const ids: string[] = [];
        for (let i = 0; i < DEFAULT_DETACHED.reserved; i++) {
          const accepted = await detach(fifth, 3000);
          expect(accepted.isError, text(accepted)).toBeFalsy();
          ids.push(String(doc(accepted).callId));
        }
        // Past its reserved share the shared pool is full: refused with the rule in one line.
        const extra = await detach(fifth, 3000);
        expect(text(extra)).toMatch(/this agent has 2 \(each agent is guaranteed 2\), and the 24 shared slots for calls beyond that are all in use/);
        for (const id of ids) {
          const done = await until(async () => {
            const r = await fifth.call("mcphub_poll_result", { callId: id });
            return text(r).includes("slept 3000") ? r : undefined;
          }, `detached call ${id} to finish`);
          expect(text(done)).toBe("slept 3000");
        }
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
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
