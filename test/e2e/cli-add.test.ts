// Issue 15, item 9, through the real CLI: `mcphub add NAME COMMAND ARGS...` gives everything after
// COMMAND to the server (options included), warns about a command that is not installed, and
// `mcphub pin` warns about a pin that names no tool of its server.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import YAML from "yaml";
import { cliSandbox, type CliSandbox } from "../helpers/cli.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures");

let sb: CliSandbox;
beforeEach(() => {
  sb = cliSandbox("mcphub-add-");
  writeFileSync(sb.config, "servers: {}\n");
});
afterEach(() => sb.cleanup());

const servers = () => (YAML.parse(readFileSync(sb.config, "utf8")) as { servers: Record<string, Record<string, unknown>> }).servers;

describe("mcphub add", () => {
  it("passes the options after the command to the server: npx -y PKG", async () => {
    const r = await sb.run(["add", "memory", "npx", "-y", "@modelcontextprotocol/server-memory"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(servers().memory).toEqual({ command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] });
  });

  it("keeps mcphub's options before the command, the server's after it; the old -- form still works", async () => {
    const r = await sb.run(["add", "notes", "--env", "A=1", "-t", "mine", process.execPath, "serve", "--verbose", "-t", "5", "--", "--x"]);
    expect(r.code).toBe(0);
    expect(servers().notes).toEqual({ command: process.execPath, args: ["serve", "--verbose", "-t", "5", "--x"], env: { A: "1" }, tags: ["mine"] });
    const old = await sb.run(["add", "cortex", process.execPath, "serve", "--", "--profile", "all"]);
    expect(old.code).toBe(0);
    expect(servers().cortex?.args).toEqual(["serve", "--profile", "all"]);
    const remote = await sb.run(["add", "docs", "--url", "https://docs.example.com/mcp", "--tag", "d"]);
    expect(remote.code).toBe(0);
    expect(servers().docs).toEqual({ url: "https://docs.example.com/mcp", tags: ["d"] });
  });

  it("warns (and still adds) when the command is not installed, or when mcphub options follow it", async () => {
    const r = await sb.run(["add", "ghost", "no-such-mcp-server-xyz", "serve", "--env", "B=2"]);
    expect(r.code).toBe(0);
    expect(servers().ghost).toEqual({ command: "no-such-mcp-server-xyz", args: ["serve", "--env", "B=2"] });
    expect(r.stderr).toContain('mcphub: warning: command "no-such-mcp-server-xyz" was not found on PATH');
    expect(r.stderr).toContain('mcphub: warning: "--env" comes after the command, so it is passed to the server');
    const rel = await sb.run(["add", "local", "./bin/missing-server"]);
    expect(rel.stderr).toContain(`command "${join(sb.dir, "bin", "missing-server")}" does not exist or is not executable`);
  });
});

describe("mcphub pin", () => {
  it("warns when an exact pin names no tool of its server, with a suggestion", async () => {
    writeFileSync(sb.config, YAML.stringify({ servers: { echo: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")] } } }));
    const typo = await sb.run(["pin", "echo__ehco"]);
    expect(typo.code).toBe(0);
    expect(typo.stdout).toContain("Pinned echo__ehco.");
    expect(typo.stderr).toMatch(/mcphub: warning: pin echo__ehco names no tool of server "echo"; did you mean echo__echo\? \(it has 1 tools: echo\)/);
    const good = await sb.run(["pin", "echo__echo"]);
    expect(good.stderr).toBe("");
    const skipped = await sb.run(["pin", "echo__nothing", "--no-check"]);
    expect(skipped.stderr).toBe("");
  });
});
