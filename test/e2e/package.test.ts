// Issue 15, item 13: the published package. `npm pack` (its prepack builds dist/) on a copy of the
// package, then `npm install -g` of the tarball into a temp prefix with production dependencies
// only: the install prints no warning about our own scripts, `mcphub --help` runs, the shipped
// example config loads from the installed folder, and a real `mcp serve` answers an SDK client.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { FIXTURES, ROOT, tempHome, type TempHome } from "../helpers/gateway.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
let work: string;
let prefix: string;
let installed: string;
let bin: string;
let install: { status: number | null; output: string };
let home: TempHome;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "mcphub-pack-"));
  // A copy of the package (without dist/), so prepack builds in the copy and the tests that run
  // the checkout's own dist/ meanwhile are not disturbed.
  const src = join(work, "src-copy");
  for (const part of ["package.json", "tsconfig.json", "README.md", "mcphub.example.yaml", "bin", "scripts", "src", "docs"]) {
    cpSync(join(ROOT, part), join(src, part), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(src, "node_modules"), "dir");
  const packed = execFileSync(npm, ["pack", "--pack-destination", work, "--silent"], { cwd: src, encoding: "utf8" }).trim().split("\n").pop() ?? "";
  prefix = join(work, "prefix");
  const r = spawnSync(npm, ["install", "-g", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", join(work, packed)], {
    encoding: "utf8",
    env: { ...process.env, npm_config_loglevel: "warn" },
  });
  install = { status: r.status, output: `${r.stdout}\n${r.stderr}` };
  installed = join(prefix, "lib", "node_modules", "mcphub");
  bin = join(prefix, "bin", "mcphub");
  home = tempHome("mcphub-pack-home-");
}, 240_000);

afterAll(() => {
  home?.cleanup();
  rmSync(work, { recursive: true, force: true });
});

describe("the published package", () => {
  it("installs globally with production dependencies only, and no warning about our scripts", () => {
    expect(install.status, install.output).toBe(0);
    expect(install.output).not.toMatch(/install-scripts|mcphub@[\d.]+ \(|prepare|tsc/);
    const deps = readdirSync(join(installed, "node_modules"));
    for (const dev of ["tsx", "typescript", "vitest", "vite"]) expect(deps).not.toContain(dev);
    expect(existsSync(join(installed, "dist", "cli", "main.js"))).toBe(true);
    expect(readdirSync(join(installed, "dist", "cli")).some((f) => f.endsWith(".map"))).toBe(false);
  });

  it("runs: --help, and the shipped example config from the installed folder", () => {
    const help = spawnSync(bin, ["--help"], { encoding: "utf8", env: home.env });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage: mcphub");
    const list = spawnSync(bin, ["--config", join(installed, "mcphub.example.yaml"), "list", "--json"], { encoding: "utf8", env: home.env, cwd: tmpdir() });
    expect(list.stderr).toBe("");
    const servers = JSON.parse(list.stdout) as { name: string; command?: string; args?: string[] }[];
    const files = servers.find((s) => s.name === "files");
    expect(files?.command).toBe("npx");
    // "." is the example's own folder, wherever mcphub was started from.
    expect(files?.args?.at(-1)).toBe(installed);
  });

  it("serves MCP over stdio from the installed package", async () => {
    const cfg = home.writeConfig(YAML.stringify({ expose: "all", servers: { echo: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")] } } }));
    const client = new Client({ name: "pack-test", version: "1" });
    const transport = new StdioClientTransport({ command: bin, args: ["--config", cfg, "mcp", "serve"], env: home.env as Record<string, string>, stderr: "pipe" });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    await client.connect(transport);
    try {
      let text = "";
      for (let i = 0; i < 100 && text === ""; i++) {
        const r = await client.callTool({ name: "echo__echo", arguments: { message: "from the package" } });
        if (!r.isError) text = (r.content as { text: string }[])[0]?.text ?? "";
        else await new Promise((res) => setTimeout(res, 100));
      }
      expect(text).toBe("Echo: from the package");
    } finally {
      await client.close();
    }
    expect(stderr).not.toMatch(/warn|error/i);
  });
});
