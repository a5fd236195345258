// Every adapter against a realistic harness file: sync adds only the gateway entry, keeps
// unrelated keys and the hand-added server, a second sync is a byte-for-byte no-op, and
// rollback restores the original bytes.
import { mkdtemp, readFile, rm, writeFile, mkdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import {
  allAdapters,
  openDocument,
  planSync,
  rollbackPlan,
  writePlan,
  type HarnessAdapter,
  type SyncContext,
} from "../../../src/harness/index.js";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "harness");
const EXT: Record<string, string> = { json: "json", yaml: "yaml", toml: "toml" };
const fixtureName = (a: HarnessAdapter) => (a.type === "kilo" ? "kilo.jsonc" : `${a.type}.${EXT[a.format]}`);

/** Strings that sit outside the MCP section of each fixture and must survive. */
const KEEP: Record<string, string[]> = {
  "local-agent": ["# Local Agent configuration", "num_ctx: 16384 # keep the context small", "local_only: true", "timeout: 30s", "# my notes server", "    args: [serve]\n", '    env: ["NOTES_DIR=/tmp/notes"]\n'],
  claude: ['"numStartups": 12', '"/home/me/repo"', '"autoUpdates": false'],
  "claude-desktop": ['"globalShortcut": "Ctrl+Space"'],
  cursor: ['"docs"'],
  vscode: ["// VS Code MCP servers (workspace)", '"inputs"'],
  codex: ['model = "o3"', "startup_timeout_sec = 20", "notifications = true"],
  opencode: ['"$schema"', '"enabled": true'],
  gemini: ['"selectedAuthType"', '"trust": false', '"httpUrl"'],
  copilot: ['"tools"'],
  qwen: ['"Qwen Dark"'],
  crush: ['"gopls"', '"$schema"'],
  kilo: ["// Kilo Code CLI configuration", "/* MCP servers */", "// added by hand"],
  kimi: ['default_model = "kimi-k2"', "max_steps_per_run = 100"],
  hermes: ["# Hermes Agent", "timeout: 120 # seconds", "backend: local", "    args: [serve]\n"],
  forge: ['"disable": false'],
};

const SERVERS = {
  memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: { MEMORY_FILE: "/tmp/m.json" } },
  remote: { url: "http://127.0.0.1:9/mcp", transport: "sse", headers: { "X-Team": "a" } },
  off: { command: "off-mcp", enabled: false },
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcphub-harness-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function ctxFor(): SyncContext {
  return {
    configPath: join(dir, "cfg", "mcphub.yaml"),
    dataDir: join(dir, "data"),
    home: join(dir, "home"),
    self: { command: "/opt/node/bin/node", args: ["/opt/mcphub/bin/mcphub.js"] },
  };
}

describe.each(allAdapters().map((a) => [a.type, a] as const))("adapter %s", (type, adapter) => {
  it("syncs only the gateway entry, idempotently, and rolls back byte for byte", async () => {
    const original = await readFile(join(FIXTURES, fixtureName(adapter)));
    const path = join(dir, "harness", fixtureName(adapter));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, original);
    const config = configSchema.parse({
      servers: { memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] } },
      agents: { work: { type, path, pin: [] } },
    });
    const ctx = ctxFor();

    const plan = await planSync(config, "work", ctx);
    expect(plan.actions).toEqual([{ action: "add", name: "mcphub", detail: expect.stringMatching(/^command "\/opt\/node\/bin\/node"; args \[/) }]);
    const res = await writePlan(config, plan, ctx);
    expect(res.written).toBe(true);
    expect(res.backup).toMatch(/\.bak-\d{8}-\d{6}(-\d+)?$/);
    expect(await readFile(res.backup as string)).toEqual(original);

    const after = await readFile(path, "utf8");
    for (const s of KEEP[type] ?? []) expect(after, `${type} keeps ${s}`).toContain(s);
    const entries = openDocument(adapter, path, after).entries();
    expect([...entries.keys()]).toContain("notes");
    const gateway = adapter.codec.decode("mcphub", entries.get("mcphub") ?? null);
    expect(gateway).toEqual({
      name: "mcphub",
      command: "/opt/node/bin/node",
      args: ["/opt/mcphub/bin/mcphub.js", "--config", ctx.configPath, "mcp", "serve", "--agent", "work"],
    });
    // The hand-added entry is untouched (it decodes exactly as before).
    const before = openDocument(adapter, path, original.toString("utf8")).entries();
    expect(entries.get("notes")).toEqual(before.get("notes"));

    const mtime = (await stat(path)).mtimeMs;
    const again = await planSync(config, "work", ctx);
    expect(again.actions).toEqual([{ action: "unchanged", name: "mcphub" }]);
    expect((await writePlan(config, again, ctx)).written).toBe(false);
    expect(await readFile(path, "utf8")).toBe(after);
    expect((await stat(path)).mtimeMs).toBe(mtime);

    const rb = await rollbackPlan(plan.planId, ctx);
    expect(rb.restored).toBe("backup");
    expect(await readFile(path)).toEqual(original);
  });

  it("removes only entries it owns and updates its own entry in place", async () => {
    const original = await readFile(join(FIXTURES, fixtureName(adapter)));
    const path = join(dir, "harness", fixtureName(adapter));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, original);
    const ctx = ctxFor();
    const direct = configSchema.parse({
      servers: SERVERS,
      agents: { work: { type, path, mode: "direct" } },
    });
    const p1 = await planSync(direct, "work", ctx);
    expect(p1.actions.map(({ action, name }) => ({ action, name }))).toEqual([
      { action: "add", name: "memory" },
      { action: "add", name: "remote" },
    ]);
    await writePlan(direct, p1, ctx);
    const entries = openDocument(adapter, path, await readFile(path, "utf8")).entries();
    expect(adapter.codec.decode("memory", entries.get("memory") ?? null)).toEqual({
      name: "memory",
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-memory"],
      env: { MEMORY_FILE: "/tmp/m.json" },
    });
    const remote = adapter.codec.decode("remote", entries.get("remote") ?? null);
    expect(remote?.url).toBe("http://127.0.0.1:9/mcp");
    expect(remote?.headers).toEqual({ "X-Team": "a" });

    // Switch to gateway mode: the two owned direct entries go, "notes" (hand-added) stays.
    const gateway = configSchema.parse({ servers: SERVERS, agents: { work: { type, path } } });
    const p2 = await planSync(gateway, "work", ctx);
    expect(p2.actions.map(({ action, name }) => ({ action, name }))).toEqual([
      { action: "add", name: "mcphub" },
      { action: "remove", name: "memory" },
      { action: "remove", name: "remote" },
    ]);
    await writePlan(gateway, p2, ctx);
    const names = [...openDocument(adapter, path, await readFile(path, "utf8")).entries().keys()];
    expect(names).toContain("notes");
    expect(names).toContain("mcphub");
    expect(names).not.toContain("memory");

    // Scoping the agent changes args: an update with a readable detail.
    const scoped = configSchema.parse({ servers: SERVERS, agents: { work: { type, path, servers: ["memory"] } } });
    const p3 = await planSync(scoped, "work", ctx);
    expect(p3.actions).toHaveLength(1);
    expect(p3.actions[0]?.action).toBe("update");
    expect(p3.actions[0]?.detail).toContain("--agent");
    await writePlan(scoped, p3, ctx);
    expect((await planSync(scoped, "work", ctx)).actions).toEqual([{ action: "unchanged", name: "mcphub" }]);

    // The first plan cannot be rolled back over the later ones; undoing them newest first
    // recreates the original bytes.
    await expect(rollbackPlan(p1.planId, ctx)).rejects.toThrow(/changed after plan/);
    for (const p of [p3, p2, p1]) await rollbackPlan(p.planId, ctx);
    expect(await readFile(path)).toEqual(original);
  });
});

