// Issue 24: the surprises of an operator's first day, one test each, through the real CLI in a
// fresh HOME: the --help example works first time and init says what is enabled (1), a gateway
// with no server is not presented as healthy (1), on a terminal `sync --write` asks before it
// removes the entries the gateway now serves (2), imported secrets go to the vault (4), relative
// paths typed at `add` mean the shell's folder (5), a later sync reuses the agent's token (8),
// option typos get a did-you-mean and `add x cmd --help` is not silently passed on (9).
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import YAML from "yaml";
import { cliCommand, cliSandbox, type CliSandbox } from "../helpers/cli.js";

let sb: CliSandbox;
beforeEach(() => {
  sb = cliSandbox("mcphub-firstday-");
  mkdirSync(sb.home, { recursive: true });
});
afterEach(() => sb.cleanup());

/** These tests run the CLI several times each; on a loaded 2-core machine one run takes seconds. */
const LONG = 180_000;

const config = () => YAML.parse(readFileSync(sb.config, "utf8")) as { servers: Record<string, Record<string, unknown>>; agents: Record<string, unknown> };

describe("item 1: init, then the --help example", () => {
  it("init says what is enabled; add as printed in --help works first time; sync --write wires the harness", async () => {
    const help = await sb.run(["--help"]);
    const example = /mcphub (add memory .*)$/m.exec(help.stdout)?.[1]?.split(" ") ?? [];
    expect(example).toEqual(["add", "memory", "npx", "-y", "@modelcontextprotocol/server-memory"]);
    mkdirSync(join(sb.home, ".cursor"));
    const init = await sb.run(["init"]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain("servers  none yet, so nothing is enabled");
    expect(init.stdout).toContain("agents   cursor (~/.cursor/mcp.json): gateway mode");
    expect(init.stdout).toContain("mcphub add memory npx -y @modelcontextprotocol/server-memory");

    // Nothing enabled: status and doctor say so instead of looking healthy.
    const empty = await sb.run(["status"]);
    expect(empty.stdout).toContain("servers  none enabled: the gateway serves only its management tools");
    expect(empty.stdout).toContain("unused   (no server is enabled)");
    expect(empty.stdout).not.toContain("every enabled server has been called");
    const doc = await sb.run(["doctor"]);
    expect(doc.code).toBe(1);
    expect(doc.stdout).toMatch(/FAIL {2}servers +no server is enabled/);
    const early = await sb.run(["sync"]);
    expect(early.stderr).toContain("mcphub: warning: no server is enabled");

    const add = await sb.run(example);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain("Added stdio server memory.");
    expect(config().servers.memory).toEqual({ command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] });

    const sync = await sb.run(["sync", "--write"]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stderr).toBe("");
    const cursor = JSON.parse(readFileSync(join(sb.home, ".cursor", "mcp.json"), "utf8")) as { mcpServers: Record<string, { args: string[] }> };
    expect(cursor.mcpServers.mcphub?.args.slice(-2)).toEqual(["mcp", "serve"]);
    const st = await sb.run(["status"]);
    expect(st.stdout).toContain("servers  1 enabled of 1");
  }, LONG);

  it("with no harness on the machine, Claude Code is assumed and said so", async () => {
    const init = await sb.run(["init"]);
    expect(init.stdout).toContain("agents   claude (~/.claude.json): gateway mode (no harness was found here, so Claude Code is assumed");
    expect(config().agents).toEqual({ claude: { type: "claude", mode: "gateway" } });
  }, LONG);
});

const hasScript = spawnSync("script", ["--version"]).status === 0;

describe.skipIf(!hasScript)("item 2: on a terminal, sync --write offers the offload", () => {
  const quote = (v: string) => `'${v.replace(/'/g, "'\\''")}'`;
  /** `sync --write` in a pseudo-terminal made by `script`, the answer typed on its stdin. */
  const onTerminal = (answer: string) => {
    const line = [process.execPath, ...cliCommand(), "sync", "--write"].map(quote).join(" ");
    const r = spawnSync("script", ["-qec", line, "/dev/null"], { cwd: sb.dir, env: { ...sb.env, NO_COLOR: "1" }, input: answer, encoding: "utf8", timeout: 120_000 });
    return r.stdout.replace(/\r\n/g, "\n");
  };
  const claudeEntries = () => Object.keys((JSON.parse(readFileSync(join(sb.home, ".claude.json"), "utf8")) as { mcpServers: object }).mcpServers);

  it("asks; Enter keeps the duplicates and says how to remove them, y removes them in the same write", async () => {
    copyFileSync(join(import.meta.dirname, "..", "fixtures", "newcomer", "claude.json"), join(sb.home, ".claude.json"));
    const imported = await sb.run(["init", "--from-agents"]);
    expect(imported.code, imported.stderr).toBe(0);

    const kept = onTerminal("\n");
    expect(kept).toContain("2 harness entries are served by the gateway too (claude: memory, claude: github). Remove them from the harness files in this write? [y/N]");
    expect(kept).toContain("Remove them with `mcphub sync --write --yes`");
    expect(claudeEntries().sort()).toEqual(["github", "mcphub", "memory"]);

    const removed = onTerminal("y\n");
    expect(removed).toContain("Remove them from the harness files in this write? [y/N]");
    expect(removed).toMatch(/- remove +memory/);
    expect(claudeEntries()).toEqual(["mcphub"]);
  }, LONG);
});

describe("item 4: literal secrets found in harness files go into the vault", () => {
  it("an Authorization header and a token-looking env value become vault references; the summary says where", async () => {
    const token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    writeFileSync(
      join(sb.home, ".claude.json"),
      JSON.stringify({
        mcpServers: {
          github: { type: "http", url: "https://api.githubcopilot.com/mcp/", headers: { Authorization: `Bearer ${token}`, "X-Trace": "on" } },
          search: { command: "npx", args: ["-y", "brave-search"], env: { BRAVE_API_KEY: "BSA-live-9f8e7d6c5b4a", REGION: "eu" } },
          cli: { command: "tool-mcp", args: ["--token", token] },
        },
      }),
    );
    const r = await sb.run(["init", "--from-agents"]);
    expect(r.code, r.stderr).toBe(0);
    const text = readFileSync(sb.config, "utf8");
    expect(text).not.toContain(token);
    expect(text).not.toContain("BSA-live-9f8e7d6c5b4a");
    const cfg = config();
    expect(cfg.servers.github).toEqual({ url: "https://api.githubcopilot.com/mcp/", headers: { Authorization: "vault://github/Authorization", "X-Trace": "on" } });
    expect(cfg.servers.search).toEqual({ command: "npx", args: ["-y", "brave-search"], env: { REGION: "eu" }, vault: "search", vault_only: ["BRAVE_API_KEY"] });
    expect(r.stdout).toContain("secret: header Authorization of github (claude): moved into the vault as github/Authorization");
    expect(r.stdout).toContain("secret: env BRAVE_API_KEY of search (claude): moved into the vault as search/BRAVE_API_KEY");
    // A token on a command line cannot come from the vault: that server is not imported (the
    // harness keeps it), and the summary says why.
    expect(cfg.servers.cli).toBeUndefined();
    expect(r.stdout).toContain("skipped: cli (claude) passes what looks like a token on its command line (args[1]), which mcphub cannot take from the vault; not imported");
    const list = await sb.run(["vault", "list"]);
    expect(list.stdout.trim().split("\n").sort()).toEqual(["github/Authorization", "search/BRAVE_API_KEY"]);
    // The config still validates and the gateway would resolve the reference.
    expect((await sb.run(["list"])).code).toBe(0);
  }, LONG);
});

describe("item 5: a relative path typed at `add` means the shell's folder", () => {
  it("stores `.` as the folder add ran in, and says so", async () => {
    writeFileSync(sb.config, "servers: {}\n");
    const project = join(sb.dir, "project");
    mkdirSync(project);
    const r = await sb.run(["add", "here", "npx", "-y", "@modelcontextprotocol/server-filesystem", "."], { cwd: project });
    expect(r.code, r.stderr).toBe(0);
    expect(config().servers.here).toEqual({ command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", project] });
    expect(r.stdout).toContain(`Stored args[2] "." as ${project} (a relative path typed here means the current folder).`);
    const cmd = await sb.run(["add", "local", "./bin/server", "../data"], { cwd: project });
    expect(config().servers.local).toEqual({ command: join(project, "bin", "server"), args: [join(sb.dir, "data")] });
    expect(cmd.stdout).toContain(`Stored command "./bin/server" as ${join(project, "bin", "server")}, args[0] "../data" as ${join(sb.dir, "data")}`);
  }, LONG);
});

describe("item 8: a later sync reuses the agent's token", () => {
  it("a token already in the harness file (pasted from `token create`) is reused, not a second one minted", async () => {
    writeFileSync(sb.config, YAML.stringify({ listen: "127.0.0.1:9820", servers: {}, agents: { claude: { type: "claude" } } }));
    const created = await sb.run(["token", "create", "claude"]);
    const token = created.stdout.trim();
    writeFileSync(join(sb.home, ".claude.json"), JSON.stringify({ mcpServers: { mcphub: { type: "http", url: "http://127.0.0.1:9820/mcp", headers: { Authorization: `Bearer ${token}` } } } }, null, 2));
    const sync = await sb.run(["sync", "--write"]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toContain("= unchanged mcphub");
    const tokens = JSON.parse((await sb.run(["token", "list", "--json"])).stdout) as { agent: string }[];
    expect(tokens).toHaveLength(1);

    // Nothing was written, so sync keeps no bookkeeping of that token: an address change still
    // reuses it, because the token in the file is this agent's.
    expect(existsSync(join(sb.dataDir, "state.json"))).toBe(false);
    writeFileSync(sb.config, YAML.stringify({ listen: "127.0.0.1:9821", servers: {}, agents: { claude: { type: "claude" } } }));
    const moved = await sb.run(["sync", "--write"]);
    expect(moved.stdout).toContain("~ update    mcphub");
    expect(JSON.parse((await sb.run(["token", "list", "--json"])).stdout)).toHaveLength(1);
    const entry = (JSON.parse(readFileSync(join(sb.home, ".claude.json"), "utf8")) as { mcpServers: { mcphub: { url: string; headers: { Authorization: string } } } }).mcpServers.mcphub;
    expect(entry).toEqual({ type: "http", url: "http://127.0.0.1:9821/mcp", headers: { Authorization: `Bearer ${token}` } });
  }, LONG);

  it("a live token sync cannot read back is named, with the revoke command, when a new one is minted", async () => {
    writeFileSync(sb.config, YAML.stringify({ listen: "127.0.0.1:9820", servers: {}, agents: { claude: { type: "claude" } } }));
    await sb.run(["token", "create", "claude"]);
    const id = (JSON.parse((await sb.run(["token", "list", "--json"])).stdout) as { id: string }[])[0]?.id as string;
    const dry = await sb.run(["sync"]);
    expect(dry.stdout).toContain(`note: agent claude has a live token (${id}) that sync cannot read back (only hashes are stored); --write creates another. Revoke an unused one with \`mcphub token revoke ${id}\`.`);
  }, LONG);
});

describe("item 9: typos and help", () => {
  it("an unknown option gets a did-you-mean on the same line", async () => {
    writeFileSync(sb.config, "servers: {}\n");
    const r = await sb.run(["mcp", "serve", "--agnet", "claude"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim()).toBe("error: unknown option '--agnet' (did you mean --agent?)");
    const j = await sb.run(["--json", "sync", "--wrte"]);
    expect(JSON.parse(j.stdout)).toEqual({ error: "unknown option '--wrte' (did you mean --write?)" });
  }, LONG);

  it("`add x cmd --help` is refused with the way to either; `add x -- cmd --help` passes it on", async () => {
    writeFileSync(sb.config, "servers: {}\n");
    const r = await sb.run(["add", "x", "some-server", "--help"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"--help" after the command would be passed to the server (some-server --help), not shown by mcphub');
    expect(config().servers).toEqual({});
    const ok = await sb.run(["add", "x", "--", "some-server", "--help"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(config().servers.x).toEqual({ command: "some-server", args: ["--help"] });
    const help = await sb.run(["add", "--help"]);
    expect(help.stdout).toContain("A -h/--help after COMMAND is refused unless you write -- before COMMAND");
  }, LONG);
});
