// The sandbox from the command line, through the real CLI: `mcphub add --sandbox ...` writes the
// setting (paths made absolute as typed), refuses what cannot work, and `mcphub doctor` shows each
// server's sandbox, checked for real, or the cause and fix that would fail its start.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import YAML from "yaml";
import { cliSandbox, type CliSandbox } from "../helpers/cli.js";
import { sandboxUnavailable } from "../helpers/sandbox.js";

const unavailable = await sandboxUnavailable();
const FIXTURES = join(import.meta.dirname, "..", "fixtures");

let sb: CliSandbox;
beforeEach(() => {
  sb = cliSandbox("mcphub-sbx-cli-");
  writeFileSync(sb.config, "servers: {}\n");
});
afterEach(() => sb.cleanup());

const servers = () => (YAML.parse(readFileSync(sb.config, "utf8")) as { servers: Record<string, Record<string, unknown>> }).servers;

interface CheckJson {
  name: string;
  ok: boolean;
  detail: string;
  warning?: string;
  handshake_ok?: boolean;
}

describe("mcphub add --sandbox", () => {
  it("writes the settings; relative paths are taken from where the command is typed", async () => {
    mkdirSync(join(sb.dir, "out"));
    const r = await sb.run(["add", "files", "--sandbox", "network=loopback,write=out", "--sandbox", "read=~/docs", "--sandbox", "env=GITHUB_*", "npx", "-y", "@modelcontextprotocol/server-filesystem"]);
    expect(r.code, r.stderr).toBe(0);
    expect(servers().files).toEqual({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem"],
      sandbox: { network: "loopback", write: [join(sb.dir, "out")], read: ["~/docs"], env: ["GITHUB_*"] },
    });
    expect((await sb.run(["add", "plain", "--sandbox", "off", process.execPath])).code).toBe(0);
    expect((await sb.run(["add", "boxed", "--sandbox", "on", process.execPath])).code).toBe(0);
    expect(servers().plain?.sandbox).toBe("off");
    expect(servers().boxed?.sandbox).toBe("on");
  });

  it("refuses what cannot work, precisely, and writes nothing", async () => {
    const before = readFileSync(sb.config, "utf8");
    const bad = await sb.run(["add", "a", "--sandbox", "network=everything", process.execPath]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('servers.a.sandbox.network: network must be "none", "loopback" or "full" (got "everything")');
    const typo = await sb.run(["add", "a", "--sandbox", "netwrk=none", process.execPath]);
    expect(typo.stderr).toContain('--sandbox "netwrk=none": unknown setting "netwrk"; use off, on, or network=none|loopback|full, read=PATH, write=PATH, env=NAME');
    const mixed = await sb.run(["add", "a", "--sandbox", "off,network=none", process.execPath]);
    expect(mixed.stderr).toContain("--sandbox off cannot be combined with sandbox settings");
    const remote = await sb.run(["add", "r", "--url", "https://x.example.com/mcp", "--sandbox", "network=none"]);
    expect(remote.stderr).toContain("--sandbox applies only to stdio servers");
    expect(readFileSync(sb.config, "utf8")).toBe(before);
  });
});

describe.skipIf(unavailable !== undefined)("mcphub doctor shows each server's sandbox", () => {
  it("the summary for a sandboxed server, off said plainly, the cause for one that cannot start", async () => {
    mkdirSync(join(sb.dir, "out"));
    writeFileSync(
      sb.config,
      YAML.stringify({
        servers: {
          boxed: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")], sandbox: { network: "none", write: [join(sb.dir, "out")] } },
          open: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")] },
          broken: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")], sandbox: { read: [join(sb.dir, "missing")] } },
          remote: { url: "http://127.0.0.1:9/mcp", enabled: false },
        },
      }),
    );
    const r = await sb.run(["doctor", "--probe", "--json"]);
    const checks = JSON.parse(r.stdout) as CheckJson[];
    const byName = new Map(checks.map((c) => [c.name, c]));
    expect(byName.get("sandbox:boxed")).toMatchObject({ ok: true });
    expect(byName.get("sandbox:boxed")?.detail).toMatch(new RegExp(`^bubblewrap \\d+\\.\\d+(\\.\\d+)?: network none; write ${join(sb.dir, "out").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}; runtime `));
    expect(byName.get("sandbox:open")).toEqual({ name: "sandbox:open", ok: true, detail: "off: it runs with your full rights (docs/sandbox.md)" });
    expect(byName.get("sandbox:broken")).toEqual({
      name: "sandbox:broken",
      ok: false,
      detail: `sandbox: sandbox.read lists ${join(sb.dir, "missing")}, which does not exist; create it or remove it from sandbox.read, or set sandbox: off for this server (it then runs with your full rights)`,
    });
    expect(byName.has("sandbox:remote")).toBe(false);
    // The probe starts the sandboxed server for real; the broken one fails with the same reason.
    expect(byName.get("probe:boxed")).toMatchObject({ ok: true, handshake_ok: true });
    expect(byName.get("probe:broken")?.detail).toContain(`sandbox.read lists ${join(sb.dir, "missing")}, which does not exist`);
    expect(r.code).not.toBe(0);
  });
});
