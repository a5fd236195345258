// The gateway core end to end: a real SDK Client spawns `mcphub mcp serve` as a process, with
// real downstream servers over stdio, SSE and streamable HTTP, and fixtures of our own.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServerEverything, type RunningServer } from "../helpers/servers.js";
import {
  doc,
  EVERYTHING,
  FIXTURES,
  MEMORY,
  startGateway,
  tempHome,
  text,
  waitReady,
  type GatewayClient,
  type TempHome,
} from "../helpers/gateway.js";

const node = process.execPath;

describe("gateway core over every transport", () => {
  let home: TempHome;
  let sse: RunningServer;
  let http: RunningServer;
  let servers: Record<string, unknown>;

  beforeAll(async () => {
    home = tempHome();
    [sse, http] = await Promise.all([startServerEverything("sse"), startServerEverything("streamableHttp")]);
    servers = {
      ev_stdio: { command: node, args: [EVERYTHING, "stdio"], description: "server-everything over stdio" },
      ev_sse: { url: sse.url, transport: "sse" },
      ev_http: { url: http.url },
      memory: { command: node, args: [MEMORY], env: { MEMORY_FILE_PATH: join(home.dir, "memory.jsonl") } },
    };
  });
  afterAll(async () => {
    await Promise.all([sse?.close(), http?.close()]);
    home?.cleanup();
  });

  it("expose all mounts every tool as server__tool and echo works on each transport", async () => {
    const cfg = home.writeConfig({ expose: "all", servers }, "all.yaml");
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["ev_stdio", "ev_sse", "ev_http", "memory"]);
      const { tools } = await gw.client.listTools();
      const names = tools.map((t) => t.name);
      for (const server of ["ev_stdio", "ev_sse", "ev_http", "memory"]) {
        expect(names.some((n) => n.startsWith(`${server}__`))).toBe(true);
      }
      for (const t of tools.filter((t) => !t.name.startsWith("mcphub_"))) {
        expect(t.name).toMatch(/^[A-Za-z0-9_.-]+__[^_]/);
        expect(t.description?.endsWith(`[${t.name.split("__")[0]}]`)).toBe(true);
      }
      const echo = tools.find((t) => t.name === "ev_stdio__echo");
      expect(echo?.inputSchema).toMatchObject({ type: "object" });
      expect(names).toContain("memory__create_entities");
      for (const server of ["ev_stdio", "ev_sse", "ev_http"]) {
        const r = await gw.call(`${server}__echo`, { message: `hi ${server}` });
        expect(text(r)).toContain(`hi ${server}`);
      }
      // Resources and prompts are re-exported, namespaced by server.
      const { resources } = await gw.client.listResources();
      const res = resources.find((r) => r.uri.startsWith("mcphub://ev_stdio/"));
      expect(res?.description?.startsWith("[ev_stdio]")).toBe(true);
      const read = await gw.client.readResource({ uri: res?.uri ?? "" });
      expect(read.contents[0]?.uri).toBe(res?.uri);
      const { prompts } = await gw.client.listPrompts();
      const prompt = prompts.find((p) => p.name.startsWith("ev_stdio__") && !(p.arguments ?? []).some((a) => a.required));
      expect(prompt).toBeDefined();
      const got = await gw.client.getPrompt({ name: prompt?.name ?? "" });
      expect(got.messages.length).toBeGreaterThan(0);
    } finally {
      await gw.close();
    }
  });

  it("lazy mode lists exactly eight tools and call_tool reaches each transport", async () => {
    const cfg = home.writeConfig({ expose: "lazy", servers }, "lazy.yaml");
    const gw = await startGateway(home, cfg);
    try {
      const { tools } = await gw.client.listTools();
      expect(tools.map((t) => t.name)).toEqual([
        "mcphub_list_servers",
        "mcphub_search_tools",
        "mcphub_describe_tool",
        "mcphub_resolve_tool",
        "mcphub_call_tool",
        "mcphub_get_result",
        "mcphub_poll_result",
        "mcphub_stats",
      ]);
      expect(Buffer.byteLength(JSON.stringify({ tools }))).toBeLessThan(4096);
      await waitReady(gw, ["ev_stdio", "ev_sse", "ev_http", "memory"]);
      for (const server of ["ev_stdio", "ev_sse", "ev_http"]) {
        const r = await gw.call("mcphub_call_tool", { tool: `${server}__echo`, arguments: { message: `lazy ${server}` } });
        expect(r.isError).toBeFalsy();
        expect(text(r)).toContain(`lazy ${server}`);
        // server + tool routing works too, and clean/host-prefixed management names are accepted.
        const r2 = await gw.call("call_tool", { server, tool: "echo", arguments: { message: "clean" } });
        expect(text(r2)).toContain("clean");
      }
      const listed = doc(await gw.call("mcphub__list_servers"));
      expect(listed.contract_version).toBe(1);
      expect(String(listed.catalog_revision)).toMatch(/^catalog-v1-[0-9a-f]{24}$/);
      expect(listed.management_tools).toBe(8);
      const memory = (listed.servers as { name: string; state: string; connected: boolean; tools: number; catalog: string }[]).find((s) => s.name === "memory");
      // Unused here, memory may still be idle with the catalogue an earlier test cached.
      expect(memory).toMatchObject(memory?.connected ? { state: "ready", catalog: "live" } : { state: "idle", catalog: "cached" });
      expect(memory?.tools).toBeGreaterThan(0);
    } finally {
      await gw.close();
    }
  });

  it("progress notifications from the downstream reach the caller (stdio and HTTP downstreams)", async () => {
    const cfg = home.writeConfig({ expose: "lazy", servers }, "progress.yaml");
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["ev_stdio", "ev_http"]);
      for (const server of ["ev_stdio", "ev_http"]) {
        const seen: number[] = [];
        const r = await gw.client.callTool(
          { name: "mcphub_call_tool", arguments: { tool: `${server}__trigger-long-running-operation`, arguments: { duration: 1, steps: 3 } } },
          undefined,
          { onprogress: (p) => seen.push(p.progress) },
        );
        expect(r.isError).toBeFalsy();
        expect(seen.length).toBeGreaterThan(0);
      }
    } finally {
      await gw.close();
    }
  });
});

describe("gateway core: startup, faults, validation, names", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
  });
  afterAll(() => home?.cleanup());

  it("answers initialize and tools/list while a downstream is still starting", async () => {
    const cfg = home.writeConfig(
      {
        expose: "lazy",
        // list_servers answers at once instead of waiting for the pending server.
        discovery_wait: 0,
        servers: { slow: { command: node, args: [join(FIXTURES, "slow-start.mjs")], env: { SLOW_START_MS: "5000" } } },
      },
      "slow.yaml",
    );
    const gw = await startGateway(home, cfg);
    try {
      const { tools } = await gw.client.listTools();
      expect(tools).toHaveLength(8);
      // The order of events: initialize and tools/list were answered while the downstream was
      // still in its 5 s startup, and only later did it become ready.
      const listed = doc(await gw.call("mcphub_list_servers"));
      expect((listed.servers as { state: string }[])[0]?.state).toBe("connecting");
      expect(listed.total_tools).toBe(0);
      expect(listed.servers_pending).toEqual(["slow"]);
      await waitReady(gw, ["slow"]);
      const after = doc(await gw.call("mcphub_list_servers"));
      expect(after.total_tools).toBeGreaterThan(0);
    } finally {
      await gw.close();
    }
  });

  it("a downstream that exits mid-call yields outcome unknown, no replay, and the next call works", async () => {
    const calls = join(home.dir, "crash-calls.log");
    const cfg = home.writeConfig(
      {
        expose: "lazy",
        servers: { crashy: { command: node, args: [join(FIXTURES, "crash-mid-call.mjs")], env: { CRASH_LOG: calls } } },
      },
      "crash.yaml",
    );
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["crashy"]);
      const r = await gw.call("mcphub_call_tool", { tool: "crashy__crash", arguments: {} });
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/outcome (is )?unknown/i);
      expect(text(r)).toMatch(/not (been )?retried|not replayed|was not retried/i);
      // Wait for the reconnect, then the next call succeeds.
      let ok = false;
      for (let i = 0; i < 400 && !ok; i++) {
        const e = await gw.call("mcphub_call_tool", { tool: "crashy__echo", arguments: { message: "after" } });
        ok = !e.isError && text(e).includes("after");
        if (!ok) await new Promise((res) => setTimeout(res, 50));
      }
      expect(ok).toBe(true);
      const seen = readFileSync(calls, "utf8").trim().split("\n").filter((l) => l.includes("crash"));
      expect(seen).toHaveLength(1);
    } finally {
      await gw.close();
    }
  });

  it("client cancellation reaches the downstream", async () => {
    const cancelled = join(home.dir, "cancelled.log");
    const cfg = home.writeConfig(
      {
        expose: "all",
        servers: { pc: { command: node, args: [join(FIXTURES, "progress-cancel.mjs")], env: { CANCEL_LOG: cancelled } } },
      },
      "cancel.yaml",
    );
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["pc"]);
      const controller = new AbortController();
      let progressed = 0;
      const pending = gw.client
        .callTool({ name: "pc__slow", arguments: { steps: 200 } }, undefined, {
          signal: controller.signal,
          onprogress: () => {
            progressed++;
            if (progressed === 2) controller.abort("user cancelled");
          },
        })
        .catch((err: unknown) => err);
      await pending;
      for (let i = 0; i < 200 && !existsSync(cancelled); i++) await new Promise((res) => setTimeout(res, 25));
      expect(existsSync(cancelled)).toBe(true);
      expect(progressed).toBeGreaterThanOrEqual(2);
    } finally {
      await gw.close();
    }
  });

  it("invalid arguments are answered by the gateway and never reach the downstream", async () => {
    const log = join(home.dir, "recorder.log");
    const cfg = home.writeConfig(
      { expose: "lazy", servers: { rec: { command: node, args: [join(FIXTURES, "recorder.mjs")], env: { RECORDER_LOG: log } } } },
      "invalid.yaml",
    );
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["rec"]);
      const r = await gw.call("mcphub_call_tool", { tool: "rec__store", arguments: { key: "k", ttl: "soon", extra: 1 } });
      expect(r.isError).toBeFalsy();
      const d = doc(r);
      expect(d.status).toBe("invalid_arguments");
      expect(d.missing).toEqual(["value"]);
      expect((d.invalid as { field: string }[]).map((i) => i.field)).toEqual(["extra", "ttl"]);
      expect(String(d.hint)).toMatch(/describe_tool/);
      expect(existsSync(log)).toBe(false);
      const ok = await gw.call("mcphub_call_tool", { tool: "rec__store", arguments: { key: "k", value: "v" } });
      expect(text(ok)).toBe("stored k");
      expect(readFileSync(log, "utf8").trim().split("\n")).toHaveLength(1);
    } finally {
      await gw.close();
    }
  });

  it("names: de-stuttering, the collision plan, and every advertised name is callable", async () => {
    const named = join(FIXTURES, "named-tools.mjs");
    const cfg = home.writeConfig(
      {
        expose: "all",
        servers: {
          bob: { command: node, args: [named, "bob_context", "bob-plan"] },
          amy: { command: node, args: [named, "context", "amy-context"] },
        },
      },
      "names.yaml",
    );
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["bob", "amy"]);
      const names = (await gw.client.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith("mcphub_"));
      expect(names.sort()).toEqual(["amy__amy-context", "amy__context", "bob__context", "bob__plan"]);
      const expectWire: Record<string, string> = {
        "amy__amy-context": "amy-context",
        amy__context: "context",
        bob__context: "bob_context",
        bob__plan: "bob-plan",
      };
      for (const name of names) {
        const mounted = JSON.parse(text(await gw.call(name, {}))) as { wire: string };
        expect(mounted.wire).toBe(expectWire[name]);
        const lazy = JSON.parse(text(await gw.call("mcphub_call_tool", { tool: name, arguments: {} }))) as { wire: string };
        expect(lazy.wire).toBe(expectWire[name]);
      }
      // Inbound: wire names and legacy stutter forms resolve through the same plan.
      for (const [tool, wire] of [
        ["bob__bob_context", "bob_context"],
        ["bob__bob-plan", "bob-plan"],
        ["bob__bob_plan", "bob-plan"],
      ] as const) {
        const r = JSON.parse(text(await gw.call("mcphub_call_tool", { tool, arguments: {} }))) as { wire: string };
        expect(r.wire).toBe(wire);
      }
      const described = doc(await gw.call("mcphub_describe_tool", { tool: "bob__plan" }));
      expect(described).toMatchObject({ server: "bob", tool: "plan", downstream: "bob-plan", namespaced: "bob__plan" });
    } finally {
      await gw.close();
    }
  });

  it("emits tools/list_changed only when the advertised list really changes", async () => {
    const fixture = { command: node, args: [join(FIXTURES, "list-changed.mjs")] };
    const lazy = home.writeConfig({ expose: "lazy", servers: { lc: fixture } }, "lc-lazy.yaml");
    const all = home.writeConfig({ expose: "all", servers: { lc: fixture } }, "lc-all.yaml");
    for (const [cfg, expectChange] of [
      [all, true],
      [lazy, false],
    ] as const) {
      const gw = await startGateway(home, cfg);
      try {
        await waitReady(gw, ["lc"]);
        let changes = 0;
        gw.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          changes++;
        });
        const before = (await gw.client.listTools()).tools.length;
        await gw.call("mcphub_call_tool", { tool: "lc__add_tool", arguments: { count: 5 } });
        // The catalogue sees the new tools (through the downstream's own list_changed) ...
        for (let i = 0; i < 200; i++) {
          const d = doc(await gw.call("mcphub_search_tools", { query: "lc__added_5" }));
          if ((d.matches as { namespaced: string }[])[0]?.namespaced === "lc__added_5") break;
          await new Promise((r) => setTimeout(r, 25));
        }
        // ... and a ping round trip flushes any notification sent before it.
        await gw.client.ping();
        const after = (await gw.client.listTools()).tools.length;
        if (expectChange) {
          expect(changes).toBeGreaterThan(0);
          expect(after).toBe(before + 5);
        } else {
          expect(changes).toBe(0);
          expect(after).toBe(8);
        }
      } finally {
        await gw.close();
      }
    }
  });

  it("an unknown tool is a protocol error; an unknown --agent is a clear startup error", async () => {
    const cfg = home.writeConfig({ expose: "lazy", servers: {} }, "empty.yaml");
    const gw = await startGateway(home, cfg);
    try {
      await expect(gw.client.callTool({ name: "mcphub_not_a_tool", arguments: {} })).rejects.toThrow(/unknown tool/);
    } finally {
      await gw.close();
    }
    await expect(startGateway(home, cfg, { agent: "ghost" })).rejects.toThrow();
  });
});

export type { GatewayClient };
