// Issue 10's acceptance over real processes: a warm catalogue cache answers discovery before any
// downstream exists (checked on the gateway's real child pids) and the first call starts the
// server; a cold server that is still starting is waited for or named in servers_pending, never
// hidden behind a bare no_match; idle servers are stopped and restarted on the next call, but
// never while a detached call is in flight; a stale cache is corrected on first connect with
// exactly one list_changed.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { alive, descendants, doc, FIXTURES, MEMORY, startGateway, tempHome, text, until, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";
import { checkResolveContract } from "../helpers/resolve-contract.js";

const node = process.execPath;
const homes: TempHome[] = [];
const gateways: GatewayClient[] = [];

afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
  for (const h of homes.splice(0)) h.cleanup();
});

function home(): TempHome {
  const h = tempHome();
  homes.push(h);
  return h;
}

async function gateway(h: TempHome, cfg: string): Promise<GatewayClient> {
  const gw = await startGateway(h, cfg);
  gateways.push(gw);
  return gw;
}

async function stop(gw: GatewayClient): Promise<void> {
  await gw.close();
  await until(() => !alive(gw.pid), "the gateway to exit");
}

function cacheFile(h: TempHome, server: string): string {
  return join(String(h.env.MCPHUB_DATA_DIR), "catalog", `${server}.json`);
}

type ServerRow = { name: string; state: string; connected: boolean; tools: number; catalog: string; catalog_listed_at?: string };

async function serverRow(gw: GatewayClient, name: string): Promise<ServerRow> {
  const rows = doc(await gw.call("mcphub_list_servers")).servers as ServerRow[];
  const row = rows.find((r) => r.name === name);
  if (!row) throw new Error(`no server ${name}`);
  return row;
}

/** Pids recorded by test/fixtures/lifecycle.mjs, oldest first. */
function starts(log: string): number[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("start "))
    .map((l) => Number(l.slice(6)));
}

describe("catalogue cache and start on first use", () => {
  it("warm start: resolve recommends a memory tool before any downstream exists; the first call starts it", async () => {
    const h = home();
    const cfg = h.writeConfig({
      expose: "lazy",
      servers: {
        memory: {
          command: node,
          args: [MEMORY],
          env: { MEMORY_FILE_PATH: join(h.dir, "memory.jsonl") },
          use_when: ["remember facts about people, projects and preferences across sessions"],
        },
      },
    });
    // First run: no cache, so `auto` starts the server at once to fill it.
    const first = await gateway(h, cfg);
    await waitReady(first, ["memory"]);
    expect((await serverRow(first, "memory")).catalog).toBe("live");
    await until(() => existsSync(cacheFile(h, "memory")), "the catalogue cache file");
    expect(readFileSync(cacheFile(h, "memory")).length).toBeGreaterThan(0);
    await stop(first);

    const gw = await gateway(h, cfg);
    expect(descendants(gw.pid)).toEqual([]);
    const resolved = doc(await gw.call("mcphub_resolve_tool", { query: "remember a fact about a person" }));
    expect(checkResolveContract(resolved)).toEqual([]);
    expect((resolved.recommendation as { server: string }).server).toBe("memory");
    expect(resolved.servers_pending).toBeUndefined();
    const searched = doc(await gw.call("mcphub_search_tools", { query: "knowledge graph entities" }));
    expect((searched.matches as { namespaced: string }[]).some((m) => m.namespaced.startsWith("memory__"))).toBe(true);
    const described = doc(await gw.call("mcphub_describe_tool", { tool: "memory__create_entities" }));
    expect(described.input_schema).toBeTypeOf("object");
    const row = await serverRow(gw, "memory");
    expect(row).toMatchObject({ state: "idle", connected: false, catalog: "cached" });
    expect(row.tools).toBeGreaterThan(0);
    expect(Number.isNaN(Date.parse(String(row.catalog_listed_at)))).toBe(false);
    // Nothing above started a process.
    expect(descendants(gw.pid)).toEqual([]);

    const called = await gw.call("mcphub_call_tool", {
      tool: "memory__create_entities",
      arguments: { entities: [{ name: "Ada", entityType: "person", observations: ["likes tea"] }] },
    });
    expect(called.isError).toBeFalsy();
    expect(text(called)).toContain("Ada");
    expect(descendants(gw.pid).length).toBeGreaterThan(0);
    expect(await serverRow(gw, "memory")).toMatchObject({ state: "ready", connected: true, catalog: "live" });
  });

  it("a live listing identical to the cache changes nothing; a stale cache is corrected with one list_changed", async () => {
    const h = home();
    const catalog = join(h.dir, "catalog.jsonl");
    const line = (tool: string, description: string) => JSON.stringify({ server: "cat", tool, description, inputSchema: { type: "object" } });
    writeFileSync(catalog, [line("alpha", "First tool"), line("beta", "Second tool")].join("\n"));
    const cfg = h.writeConfig({
      expose: "all",
      servers: { cat: { command: node, args: [join(FIXTURES, "catalog-server.mjs"), "--catalog", catalog, "--server", "cat"] } },
    });
    const first = await gateway(h, cfg);
    await waitReady(first, ["cat"]);
    const revision = String(doc(await first.call("mcphub_list_servers")).catalog_revision);
    await until(() => existsSync(cacheFile(h, "cat")), "the catalogue cache file");
    await stop(first);

    const runWithCount = async () => {
      const gw = await gateway(h, cfg);
      let changes = 0;
      gw.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changes++;
      });
      return { gw, changes: () => changes };
    };

    // Same tools as cached: the call starts the server, nothing a client sees changes.
    const same = await runWithCount();
    expect((await same.gw.client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(["cat__alpha", "cat__beta"]));
    expect(descendants(same.gw.pid)).toEqual([]);
    expect(text((await same.gw.client.callTool({ name: "cat__alpha", arguments: {} })) as never)).toContain("called alpha");
    expect((await serverRow(same.gw, "cat")).catalog).toBe("live");
    expect(String(doc(await same.gw.call("mcphub_list_servers")).catalog_revision)).toBe(revision);
    expect(same.changes()).toBe(0);
    await stop(same.gw);

    // The server's tools changed while no gateway ran.
    writeFileSync(catalog, [line("alpha", "First tool"), line("beta", "Second tool"), line("gamma", "Third tool")].join("\n"));
    const stale = await runWithCount();
    const before = (await stale.gw.client.listTools()).tools.map((t) => t.name);
    expect(before).not.toContain("cat__gamma");
    expect(descendants(stale.gw.pid)).toEqual([]);
    await stale.gw.client.callTool({ name: "cat__alpha", arguments: {} });
    await until(() => stale.changes() >= 1, "tools/list_changed");
    expect((await stale.gw.client.listTools()).tools.map((t) => t.name)).toContain("cat__gamma");
    expect(String(doc(await stale.gw.call("mcphub_list_servers")).catalog_revision)).not.toBe(revision);
    expect(stale.changes()).toBe(1);
    // The cache now holds the corrected listing.
    await until(() => readFileSync(cacheFile(h, "cat"), "utf8").includes("gamma"), "the corrected cache");
  });
});

describe("honest readiness while a server is still starting", () => {
  const slowConfig = (h: TempHome, discoveryWait: string) =>
    h.writeConfig({
      expose: "lazy",
      discovery_wait: discoveryWait,
      servers: { slow: { command: node, args: [join(FIXTURES, "slow-start.mjs"), "5000"] } },
    });

  it("a resolve sent at once names the starting server in servers_pending, never a bare no_match", async () => {
    const h = home();
    const gw = await gateway(h, slowConfig(h, "500ms"));
    const resolved = doc(await gw.call("mcphub_resolve_tool", { query: "echo the message back" }));
    expect(checkResolveContract(resolved)).toEqual([]);
    expect(resolved.servers_pending).toEqual(["slow"]);
    expect(resolved.reason_codes).toContain("servers_pending");
    expect(resolved.status).not.toBe("confident");
    expect(String(resolved.hint)).toMatch(/slow is still starting.*retry/);
    const searched = doc(await gw.call("mcphub_search_tools", { query: "echo" }));
    expect(searched.servers_pending).toEqual(["slow"]);
    const listed = doc(await gw.call("mcphub_list_servers"));
    expect(listed.servers_pending).toEqual(["slow"]);
    expect((listed.servers as ServerRow[])[0]).toMatchObject({ name: "slow", state: "connecting", catalog: "none" });

    await waitReady(gw, ["slow"]);
    const later = doc(await gw.call("mcphub_resolve_tool", { query: "echo the message back" }));
    expect(checkResolveContract(later)).toEqual([]);
    expect((later.recommendation as { namespaced: string }).namespaced).toBe("slow__echo");
    expect(later.servers_pending).toBeUndefined();
    expect(later.reason_codes).not.toContain("servers_pending");
  });

  it("with a long enough discovery_wait the resolve waits for the server and answers correctly", async () => {
    const h = home();
    const gw = await gateway(h, slowConfig(h, "60s"));
    const resolved = doc(await gw.call("mcphub_resolve_tool", { query: "echo the message back" }));
    expect(checkResolveContract(resolved)).toEqual([]);
    expect((resolved.recommendation as { namespaced: string }).namespaced).toBe("slow__echo");
    expect(resolved.servers_pending).toBeUndefined();
    // It answered after the server became ready, not before.
    expect((await serverRow(gw, "slow")).state).toBe("ready");
  });
});

describe("idle stopping", () => {
  it("stops a server after idle_timeout, restarts it on the next call, and never stops one with a detached call in flight", async () => {
    const h = home();
    const logA = join(h.dir, "a.log");
    const logB = join(h.dir, "b.log");
    const release = join(h.dir, "release");
    const cfg = h.writeConfig({
      expose: "lazy",
      idle_timeout: "2s",
      servers: {
        a: { command: node, args: [join(FIXTURES, "lifecycle.mjs")], env: { START_LOG: logA } },
        b: { command: node, args: [join(FIXTURES, "lifecycle.mjs")], env: { START_LOG: logB } },
      },
    });
    const gw = await gateway(h, cfg);
    expect(text(await gw.call("mcphub_call_tool", { tool: "a__echo", arguments: { message: "one" } }))).toContain("echo: one");
    const [a1] = starts(logA);
    expect(a1).toBeDefined();
    expect(descendants(gw.pid)).toContain(a1);
    await until(() => !alive(a1 as number), "server a to be stopped when idle", 400);
    expect(await serverRow(gw, "a")).toMatchObject({ state: "idle", catalog: "cached" });

    // The next call starts it again; this one is detached and holds a until it is released.
    const accepted = doc(await gw.call("mcphub_call_tool", { tool: "a__wait_for", arguments: { path: release }, detach: true }));
    expect(accepted.status).toBe("accepted");
    const a2 = starts(logA)[1];
    expect(a2).toBeDefined();
    expect(a2).not.toBe(a1);
    // b, used while the detached call runs, is stopped meanwhile; a is not.
    expect(text(await gw.call("mcphub_call_tool", { tool: "b__echo", arguments: { message: "b" } }))).toContain("echo: b");
    const bPid = starts(logB).at(-1) as number;
    await until(() => !alive(bPid), "server b to be stopped when idle", 400);
    expect(alive(a2 as number)).toBe(true);
    expect(descendants(gw.pid)).toContain(a2);
    expect(doc(await gw.call("mcphub_poll_result", { callId: accepted.callId })).status).toBe("pending");

    // Once the detached call finishes, a idles out too, and the next call starts it again.
    writeFileSync(release, "");
    await until(async () => text(await gw.call("mcphub_poll_result", { callId: accepted.callId })).includes("saw"), "the detached result");
    await until(() => !alive(a2 as number), "server a to be stopped after the detached call", 400);
    expect(text(await gw.call("mcphub_call_tool", { tool: "a__echo", arguments: { message: "three" } }))).toContain("echo: three");
    expect(starts(logA)).toHaveLength(3);
  });
});
