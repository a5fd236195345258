// Config hot reload over real processes: the daemon (`mcphub up`) and a stdio gateway follow
// their config file. A server appended to the YAML is listed and callable without a restart while
// the others keep their processes; a syntax error keeps the old config serving and logs one line;
// a new agent's token works at once; a save by rename (what `mcphub add` and editors do) and
// SIGHUP are picked up; a stdio gateway announces a pin change with list_changed.
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpClient, startDaemon, type Daemon } from "../helpers/daemon.js";
import { alive, doc, FIXTURES, runMcphub, startGateway, tempHome, text, until, waitReady, type TempHome } from "../helpers/gateway.js";

const node = process.execPath;
const lifecycle = join(FIXTURES, "lifecycle.mjs");

/** YAML with `servers:` last, so a server can be appended to the file as plain text. */
function yaml(agents: string[], servers: Record<string, string>): string {
  const lines = ["expose: lazy", "agents:"];
  for (const a of agents) lines.push(`  ${a}:`, "    type: claude");
  lines.push("servers:");
  for (const [name, log] of Object.entries(servers)) lines.push(...serverLines(name, log));
  return `${lines.join("\n")}\n`;
}

function serverLines(name: string, log: string): string[] {
  return [`  ${name}:`, `    command: ${JSON.stringify(node)}`, `    args: [${JSON.stringify(lifecycle)}]`, `    env: { START_LOG: ${JSON.stringify(log)} }`];
}

function starts(log: string): number[] {
  try {
    return readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("start "))
      .map((l) => Number(l.slice(6)));
  } catch {
    return [];
  }
}

async function serverNames(call: (n: string, a?: Record<string, unknown>) => Promise<unknown>): Promise<string[]> {
  const d = doc((await call("mcphub_list_servers")) as never);
  return (d.servers as { name: string }[]).map((s) => s.name);
}

describe("hot reload of the daemon", () => {
  let home: TempHome;
  let cfg: string;
  let daemon: Daemon;
  let token: string;
  const logA = () => join(home.dir, "a.log");

  beforeAll(async () => {
    home = tempHome();
    cfg = join(home.dir, "mcphub.yaml");
    writeFileSync(cfg, yaml(["alpha"], { a: logA() }));
    const r = await runMcphub(home, ["--config", cfg, "token", "create", "alpha", "--json"]);
    expect(r.code).toBe(0);
    token = String((JSON.parse(r.stdout) as { token: string }).token);
    daemon = await startDaemon(home, cfg);
  });
  afterAll(async () => {
    await daemon?.stop();
    home?.cleanup();
  });

  it("a server appended to the YAML is listed and callable without a restart; the others keep their process", async () => {
    const c = await httpClient(daemon.url, token);
    try {
      expect(text(await c.caller.call("mcphub_call_tool", { tool: "a__echo", arguments: { message: "before" } }))).toContain("echo: before");
      const [aPid] = starts(logA());
      expect(aPid).toBeDefined();
      appendFileSync(cfg, `${serverLines("b", join(home.dir, "b.log")).join("\n")}\n`);
      await until(async () => (await serverNames(c.caller.call)).includes("b"), "server b to be listed");
      expect(text(await c.caller.call("mcphub_call_tool", { tool: "b__echo", arguments: { message: "new" } }))).toContain("echo: new");
      // a was not restarted by the reload.
      expect(starts(logA())).toEqual([aPid]);
      expect(alive(aPid as number)).toBe(true);
      expect(daemon.stderr()).toMatch(/config reloaded: added b/);
    } finally {
      await c.close();
    }
  });

  it("a syntax error keeps the old config serving and logs one error line", async () => {
    const good = readFileSync(cfg, "utf8");
    writeFileSync(cfg, `${good}  broken: [unclosed\n`);
    await until(() => /config reload failed/.test(daemon.stderr()), "the reload error line");
    const lines = daemon.stderr().split("\n").filter((l) => l.includes("config reload failed"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/mcphub\.yaml:\d+:\d+: YAML syntax error: .*; keeping the running config/);
    const c = await httpClient(daemon.url, token);
    try {
      expect((await serverNames(c.caller.call)).sort()).toEqual(["a", "b"]);
      expect(text(await c.caller.call("mcphub_call_tool", { tool: "b__echo", arguments: { message: "still" } }))).toContain("echo: still");
    } finally {
      await c.close();
    }
    writeFileSync(cfg, good);
  });

  it("a new agent's token works without a restart", async () => {
    writeFileSync(cfg, yaml(["alpha", "beta"], { a: logA(), b: join(home.dir, "b.log") }));
    const r = await runMcphub(home, ["--config", cfg, "token", "create", "beta", "--json"]);
    expect(r.code).toBe(0);
    const betaToken = String((JSON.parse(r.stdout) as { token: string }).token);
    let names: string[] = [];
    await until(async () => {
      try {
        const c = await httpClient(daemon.url, betaToken);
        names = await serverNames(c.caller.call);
        await c.close();
        return true;
      } catch {
        return false;
      }
    }, "beta's token to be accepted");
    expect(names.sort()).toEqual(["a", "b"]);
  });

  it("follows a save by rename (`mcphub add`), says so, and reloads on SIGHUP", async () => {
    const add = await runMcphub(home, ["--config", cfg, "add", "c", node, lifecycle]);
    expect(add.code).toBe(0);
    expect(add.stdout).toMatch(/Running gateways .*pick this up/);
    expect(add.stdout).not.toMatch(/Run `mcphub sync` to apply/);
    const c = await httpClient(daemon.url, token);
    try {
      await until(async () => (await serverNames(c.caller.call)).includes("c"), "server c to be listed");
      daemon.child.kill("SIGHUP");
      await until(() => /config reloaded \(SIGHUP\): no changes/.test(daemon.stderr()), "the SIGHUP reload line");
      expect(text(await c.caller.call("mcphub_call_tool", { tool: "c__echo", arguments: { message: "c" } }))).toContain("echo: c");
    } finally {
      await c.close();
    }
    const removed = await runMcphub(home, ["--config", cfg, "remove", "c"]);
    expect(removed.code).toBe(0);
    const c2 = await httpClient(daemon.url, token);
    try {
      await until(async () => !(await serverNames(c2.caller.call)).includes("c"), "server c to be gone");
    } finally {
      await c2.close();
    }
  });
});

describe("hot reload of a stdio gateway", () => {
  it("applies a pin change with one list_changed, a use_when change to routing, and survives SIGHUP", async () => {
    const home = tempHome();
    try {
      const cfg = join(home.dir, "mcphub.yaml");
      writeFileSync(cfg, yaml([], { a: join(home.dir, "a.log") }).replace("agents:\n", ""));
      const gw = await startGateway(home, cfg, { env: { MCPHUB_LOG_LEVEL: "info" } });
      try {
        let changes = 0;
        gw.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          changes++;
        });
        const before = (await gw.client.listTools()).tools.map((t) => t.name);
        expect(before).not.toContain("a__echo");
        writeFileSync(cfg, `pin: [a__echo]\n${readFileSync(cfg, "utf8")}`);
        await until(() => changes >= 1, "tools/list_changed after the pin");
        expect((await gw.client.listTools()).tools.map((t) => t.name)).toContain("a__echo");
        // A routing hint is applied to the running catalogue: same tools, new revision.
        await waitReady(gw, ["a"]);
        const revision = doc(await gw.call("mcphub_list_servers")).catalog_revision;
        writeFileSync(cfg, readFileSync(cfg, "utf8").replace("    command:", "    use_when: [repeat a message back]\n    command:"));
        await until(async () => doc(await gw.call("mcphub_list_servers")).catalog_revision !== revision, "a new catalog_revision");
        const resolved = doc(await gw.call("mcphub_resolve_tool", { query: "repeat a message back" }));
        expect((resolved.recommendation as { server: string }).server).toBe("a");
        process.kill(gw.pid, "SIGHUP");
        await until(() => /config reloaded \(SIGHUP\): no changes/.test(gw.stderr()), "the SIGHUP reload line");
        expect(doc(await gw.call("mcphub_list_servers")).pinned).toEqual(["a__echo"]);
        expect(alive(gw.pid)).toBe(true);
        expect(changes).toBe(1);
      } finally {
        await gw.close();
      }
    } finally {
      home.cleanup();
    }
  });
});
