// The server, group and pin commands through the real CLI process: what they write to the
// config, and that every bad input prints one line, exits non-zero and leaves the config
// byte-for-byte as it was.
import { readFileSync, writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import YAML from "yaml";
import { cliSandbox, type CliSandbox } from "../helpers/cli.js";

const CONFIG = `# my mcphub config
expose: lazy
pin: [memory__read_graph]
servers:
  memory:
    command: npx
    args: [-y, "@modelcontextprotocol/server-memory"]  # the memory server
  docs:
    url: http://127.0.0.1:9/mcp
    enabled: false
groups:
  coding: [memory, docs]
agents:
  claude:
    type: claude
    servers: [memory, docs]
    pin: [docs__search]
`;

let sb: CliSandbox;
beforeEach(() => {
  sb = cliSandbox();
  writeFileSync(sb.config, CONFIG);
});
afterEach(() => sb.cleanup());

const doc = () => YAML.parse(readFileSync(sb.config, "utf8")) as {
  servers: Record<string, Record<string, unknown>>;
  pin?: string[];
  groups: Record<string, string[]>;
  agents: Record<string, Record<string, unknown>>;
};

describe("add", () => {
  it("passes everything after -- verbatim (Cortex registers itself this way)", async () => {
    const r = await sb.run(["add", "cortex", "cortex", "serve", "--", "--profile", "all"]);
    // Only the note that cortex is not installed on this machine.
    expect(r.stderr.trim()).toBe('mcphub: warning: command "cortex" was not found on PATH; the server will fail to start until it is installed (or give its full path)');
    expect(r.code).toBe(0);
    expect(doc().servers.cortex).toEqual({ command: "cortex", args: ["serve", "--profile", "all"] });
    // Comments elsewhere survive the edit.
    expect(readFileSync(sb.config, "utf8")).toContain("# the memory server");
  });

  it("adds remote servers with flags, and replaces only with --force", async () => {
    const r = await sb.run(["add", "gh", "--url", "https://example.com/mcp", "--transport", "sse", "--tag", "code", "--tag", "git", "--description", "GitHub", "--use-when", "working on pull requests", "--disabled"]);
    expect(r.code).toBe(0);
    expect(doc().servers.gh).toEqual({
      url: "https://example.com/mcp",
      transport: "sse",
      tags: ["code", "git"],
      description: "GitHub",
      use_when: ["working on pull requests"],
      enabled: false,
    });
    const again = await sb.run(["add", "gh", "gh-mcp"]);
    expect(again.code).not.toBe(0);
    expect(again.stderr.trim()).toBe('mcphub: server "gh" already exists; pass --force to replace it');
    const forced = await sb.run(["add", "gh", "--env", "GH_HOST=github.com", "--force", "gh-mcp"]);
    expect(forced.code).toBe(0);
    expect(doc().servers.gh).toEqual({ command: "gh-mcp", env: { GH_HOST: "github.com" } });
  });
});

describe("remove, enable, disable, use, pin, unpin", () => {
  it("remove prunes pins, groups and agent lists that name the server", async () => {
    const r = await sb.run(["remove", "docs"]);
    expect(r.code).toBe(0);
    const d = doc();
    expect(d.servers.docs).toBeUndefined();
    expect(d.groups.coding).toEqual(["memory"]);
    expect(d.agents.claude?.servers).toEqual(["memory"]);
    expect(d.agents.claude?.pin).toEqual([]);
    expect(d.pin).toEqual(["memory__read_graph"]);
    // Removing the last server empties the config: running gateways hold that until confirmed.
    const last = await sb.run(["remove", "memory"]);
    expect(last.code).toBe(0);
    expect(last.stdout).toMatch(/This edit would remove every server \(memory\), so running gateways \(mcp serve, up\) hold it until it is confirmed: send them SIGHUP/);
  });

  it("enable / disable / use --only switch servers", async () => {
    expect((await sb.run(["enable", "docs"])).code).toBe(0);
    expect(doc().servers.docs?.enabled).toBe(true);
    expect((await sb.run(["disable", "memory", "docs"])).code).toBe(0);
    expect(doc().servers.memory?.enabled).toBe(false);
    await sb.run(["add", "extra", "extra-mcp"]);
    writeFileSync(sb.config, readFileSync(sb.config, "utf8").replace("coding: [memory, docs]", "coding: [memory]"));
    const use = await sb.run(["use", "coding", "--only"]);
    expect(use.code).toBe(0);
    expect(doc().servers.memory?.enabled).toBe(true);
    expect(doc().servers.extra?.enabled).toBe(false);
    const groups = await sb.run(["--json", "groups"]);
    expect(JSON.parse(groups.stdout)).toEqual([{ group: "coding", members: ["memory"], enabled: 1, total: 1 }]);
  });

  it("pin adds sorted, deduped pins; unpin by server removes all of its pins", async () => {
    expect((await sb.run(["pin", "memory__create_entities", "memory__read_graph"])).code).toBe(0);
    expect(doc().pin).toEqual(["memory__create_entities", "memory__read_graph"]);
    const list = await sb.run(["pin", "--json"]);
    expect(JSON.parse(list.stdout)).toEqual({ pin: ["memory__create_entities", "memory__read_graph"] });
    expect((await sb.run(["unpin", "memory"])).code).toBe(0);
    expect(doc().pin).toEqual([]);
  });

  it("list --json shows servers without env values", async () => {
    await sb.run(["add", "s", "--env", "TOKEN=hunter2", "s-mcp"]);
    const r = await sb.run(["list", "--json"]);
    expect(r.stdout).not.toContain("hunter2");
    const s = (JSON.parse(r.stdout) as { name: string; env_keys?: string[] }[]).find((x) => x.name === "s");
    expect(s?.env_keys).toEqual(["TOKEN"]);
  });
});

describe("bad input: one line, non-zero exit, config untouched", () => {
  const cases: [string, string[], RegExp][] = [
    ["unknown command", ["frobnicate"], /unknown command 'frobnicate'/],
    ["unknown flag", ["list", "--bogus"], /unknown option '--bogus'/],
    ["unknown server (enable)", ["enable", "nope"], /unknown server "nope"; configured servers: docs, memory/],
    ["unknown server (remove)", ["remove", "nope"], /unknown server "nope"/],
    ["unknown server (pin)", ["pin", "nope__tool"], /unknown server "nope"/],
    ["unknown agent (sync)", ["sync", "ghost"], /unknown agent "ghost"; configured agents: claude/],
    ["unknown agent (offload)", ["offload", "ghost", "--write"], /unknown agent "ghost"/],
    ["unknown group", ["use", "nogroup"], /unknown group "nogroup"; groups: coding/],
    ["unknown plan", ["sync", "--rollback", "plan_0_claude"], /unknown plan "plan_0_claude"/],
    ["invalid url", ["add", "x", "--url", "ftp://x"], /servers\.x\.url/],
    ["invalid server name", ["add", "bad__name", "cmd"], /servers\.bad__name/],
    ["reserved name", ["add", "mcphub", "cmd"], /reserved/],
    ["missing command", ["add", "x"], /missing the server command/],
    ["command and url", ["add", "x", "--url", "http://127.0.0.1:1/mcp", "cmd"], /not both/],
    ["bad transport", ["add", "x", "--url", "http://127.0.0.1:1/mcp", "--transport", "ws"], /--transport "ws" must be http or sse/],
    ["bad env", ["add", "x", "--env", "NOEQUALS", "cmd"], /--env "NOEQUALS" must be KEY=VALUE/],
    ["a secret after the command", ["add", "x", "cmd", "--env", "API_TOKEN=abc"], /refusing "--env API_TOKEN=…" after the command/],
    ["existing server", ["add", "memory", "cmd"], /already exists/],
    ["bad --top", ["pin", "--top", "zero"], /--top "zero" must be a positive whole number/],
    ["bad --since", ["pin", "--top", "3", "--since", "soon"], /--since "soon" is not a duration/],
    ["unmatched unpin", ["unpin", "nothing__here"], /no pin matched nothing__here/],
    ["unknown doctor server", ["doctor", "--server", "nope"], /unknown server "nope"/],
    ["bad init format", ["init", "--format", "xml", "--force"], /--format "xml" must be yaml, toml or json/],
    ["init over existing config", ["init"], /already exists/],
  ];
  it.each(cases)("%s", async (_label, args, pattern) => {
    const before = readFileSync(sb.config);
    const r = await sb.run(args);
    expect(r.code).not.toBe(0);
    const lines = r.stderr.split("\n").filter((l) => l.trim() !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(readFileSync(sb.config)).toEqual(before);
  });
});
