// Loading from disk in all three formats, the example config, and the small query helpers.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ConfigError,
  enabledServers,
  loadConfig,
  parseConfigText,
  resolveAgent,
  serverKind,
} from "../../../src/config/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcphub-load-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const YAML_TEXT = `# a commented config
expose: lazy
pin: [github__search_code, fs]
response_budget: 16KB
connect_timeout: 10s
servers:
  github:
    url: https://api.example.com/mcp
    transport: sse
    headers:
      Authorization: Bearer vault://gh/TOKEN
    use_when: [work with pull requests]
  fs:
    command: npx
    args: [-y, server-fs, 3000]
    env:
      DEBUG: 1
    cwd: ~/work
    enabled: false
groups:
  dev: [github, fs]
agents:
  la:
    type: localagent
    path: ~/.config/local-agent/config.yaml
    pin: []
    tool_schema_budget: 8KB
`;

const TOML_TEXT = `expose = "lazy"
pin = ["github__search_code", "fs"]
response_budget = "16KB"
connect_timeout = "10s"

[servers.github]
url = "https://api.example.com/mcp"
transport = "sse"
use_when = ["work with pull requests"]
headers = { Authorization = "Bearer vault://gh/TOKEN" }

[servers.fs]
command = "npx"
args = ["-y", "server-fs", 3000]
env = { DEBUG = 1 }
cwd = "~/work"
enabled = false

[groups]
dev = ["github", "fs"]

[agents.la]
type = "localagent"
path = "~/.config/local-agent/config.yaml"
pin = []
tool_schema_budget = "8KB"
`;

const JSON_TEXT = JSON.stringify({
  expose: "lazy",
  pin: ["github__search_code", "fs"],
  response_budget: "16KB",
  connect_timeout: "10s",
  servers: {
    github: {
      url: "https://api.example.com/mcp",
      transport: "sse",
      headers: { Authorization: "Bearer vault://gh/TOKEN" },
      use_when: ["work with pull requests"],
    },
    fs: { command: "npx", args: ["-y", "server-fs", 3000], env: { DEBUG: 1 }, cwd: "~/work", enabled: false },
  },
  groups: { dev: ["github", "fs"] },
  agents: { la: { type: "localagent", path: "~/.config/local-agent/config.yaml", pin: [], tool_schema_budget: "8KB" } },
});

describe("loadConfig", () => {
  it("loads the same config from .yaml, .toml and .json", async () => {
    const loaded = [];
    for (const [name, text] of [
      ["mcphub.yaml", YAML_TEXT],
      ["mcphub.toml", TOML_TEXT],
      ["mcphub.json", JSON_TEXT],
    ] as const) {
      writeFileSync(join(dir, name), text);
      loaded.push(await loadConfig({ configPath: name, env: {}, cwd: dir, home: dir }));
    }
    expect(loaded.map((l) => l.format)).toEqual(["yaml", "toml", "json"]);
    const [y, t, j] = loaded.map((l) => l.config);
    expect(t).toEqual(y);
    expect(j).toEqual(y);
    expect(y).toMatchObject({
      expose: "lazy",
      response_budget: 16 * 1024,
      connect_timeout: 10_000,
      call_timeout: 30 * 60_000,
      servers: { fs: { args: ["-y", "server-fs", "3000"], env: { DEBUG: "1" }, cwd: "~/work", enabled: false } },
      agents: { la: { type: "local-agent", pin: [], tool_schema_budget: 8192, mode: "gateway" } },
    });
  });

  it("keeps the raw data as written and ~ unexpanded", async () => {
    writeFileSync(join(dir, "mcphub.yaml"), YAML_TEXT);
    const l = await loadConfig({ env: {}, cwd: dir, home: join(dir, "home") });
    expect(l.path).toBe(join(dir, "mcphub.yaml"));
    expect(l.raw).toMatchObject({ response_budget: "16KB", servers: { fs: { cwd: "~/work" } } });
  });

  it("finds the config through $MCPHUB_CONFIG", async () => {
    writeFileSync(join(dir, "via-env.json"), "{}");
    const l = await loadConfig({ env: { MCPHUB_CONFIG: join(dir, "via-env.json") }, cwd: "/", home: dir });
    expect(l).toMatchObject({ format: "json", path: join(dir, "via-env.json") });
  });

  it("says how to create a missing config", async () => {
    const p = join(dir, "none.yaml");
    await expect(loadConfig({ configPath: p, env: {}, cwd: dir, home: dir })).rejects.toThrow(
      new ConfigError([{ path: "", message: `no config at ${p} — run \`mcphub init\` to create one` }]),
    );
  });

  it("labels messages with the path relative to the working directory", async () => {
    writeFileSync(join(dir, "mcphub.yaml"), "servers:\n  github:\n    url: ftp://x\n");
    const err = await loadConfig({ env: {}, cwd: dir, home: "/nonexistent" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toBe("mcphub.yaml: servers.github.url: url must start with http:// or https://");
  });

  it("accepts an empty YAML file", async () => {
    writeFileSync(join(dir, "mcphub.yaml"), "");
    const l = await loadConfig({ env: {}, cwd: dir, home: dir });
    expect(l.config.servers).toEqual({});
    expect(l.raw).toBeNull();
  });

  it("validates mcphub.example.yaml, the README quick start config", async () => {
    const repo = resolve(import.meta.dirname, "../../..");
    const l = await loadConfig({ configPath: "mcphub.example.yaml", env: {}, cwd: repo, home: dir });
    const c = l.config;
    expect(c.expose).toBe("lazy");
    expect(enabledServers(c).map(([name]) => name)).toEqual(["everything", "files", "memory"]);
    expect(c.servers["remote-everything"]).toMatchObject({ url: "http://127.0.0.1:3001/mcp", enabled: false });
    expect(c.agents["local-agent"]).toMatchObject({ type: "local-agent", pin: [], tool_schema_budget: 8 * 1024 });
    expect(c.agents.claude?.type).toBe("claude");
    // Every stdio server is `npx -y PACKAGE` run in the example's own folder, where the package
    // really is installed (so npx needs no network in a checkout).
    const { existsSync } = await import("node:fs");
    for (const [, s] of enabledServers(c)) {
      expect(s.command).toBe("npx");
      expect(s.cwd).toBe(repo);
      const pkg = s.args?.[1] ?? "";
      expect(existsSync(join(repo, "node_modules", pkg, "package.json")), pkg).toBe(true);
    }
  });
});

describe("query helpers", () => {
  const c = parseConfigText(
    "servers:\n  b:\n    command: x\n  a:\n    url: http://127.0.0.1:1/mcp\n  off:\n    command: y\n    enabled: false\nagents:\n  zed:\n    type: claude\n  amp:\n    type: codex\n",
    "yaml",
  );

  it("lists enabled servers sorted by name", () => {
    expect(enabledServers(c).map(([n]) => n)).toEqual(["a", "b"]);
  });

  it("tells stdio from remote", () => {
    expect(serverKind(c.servers.a!)).toBe("remote");
    expect(serverKind(c.servers.b!)).toBe("stdio");
  });

  it("resolves an agent or names the configured ones", () => {
    expect(resolveAgent(c, "zed").type).toBe("claude");
    expect(() => resolveAgent(c, "x")).toThrow('--agent "x": no such agent in config (configured: amp, zed)');
    expect(() => resolveAgent(c, "constructor")).toThrow(ConfigError);
    expect(() => resolveAgent(parseConfigText("", "yaml"), "x")).toThrow('--agent "x": no such agent in config (no agents are configured)');
  });
});
