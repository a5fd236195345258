// `doctor --probe --json` performs a real MCP handshake: for server-everything it must report
// handshake_ok and exactly the tool count a real SDK Client sees; for a command that does not
// exist it must report the reason, and the command exits non-zero.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { ROOT, cliSandbox, type CliSandbox } from "../helpers/cli.js";

const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

interface CheckJson {
  name: string;
  ok: boolean;
  detail: string;
  handshake_ok?: boolean;
  tool_count?: number;
  latency_ms?: number;
  error?: string;
}

let sb: CliSandbox;
let expectedTools: number;

beforeAll(async () => {
  const client = new Client({ name: "doctor-test", version: "0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "ignore" }));
  try {
    expectedTools = (await client.listTools()).tools.length;
  } finally {
    await client.close();
  }
  sb = cliSandbox();
  writeFileSync(
    sb.config,
    YAML.stringify({
      servers: {
        everything: { command: process.execPath, args: [EVERYTHING, "stdio"] },
        ghost: { command: "definitely-not-a-command-mcphub-test" },
      },
    }),
  );
});
afterAll(() => sb?.cleanup());

describe("doctor --probe", () => {
  it("reports a real handshake with the right tool count, and the reason for a missing command", async () => {
    expect(expectedTools).toBeGreaterThan(0);
    const r = await sb.run(["doctor", "--probe", "--json"]);
    expect(r.code).not.toBe(0); // ghost fails
    const checks = JSON.parse(r.stdout) as CheckJson[];
    const probe = checks.find((c) => c.name === "probe:everything");
    expect(probe).toMatchObject({ ok: true, handshake_ok: true, tool_count: expectedTools });
    expect(probe?.latency_ms).toBeGreaterThanOrEqual(0);
    const ghostProbe = checks.find((c) => c.name === "probe:ghost");
    expect(ghostProbe?.ok).toBe(false);
    expect(ghostProbe?.handshake_ok).toBe(false);
    expect(ghostProbe?.error).toMatch(/definitely-not-a-command-mcphub-test|ENOENT|not found/i);
    expect(checks.find((c) => c.name === "server:ghost")).toMatchObject({ ok: false, detail: expect.stringContaining("not found on PATH") });
    expect(checks.find((c) => c.name === "server:everything")?.ok).toBe(true);
    expect(checks.find((c) => c.name === "vault")?.ok).toBe(true);
    // --json: one JSON document on stdout, the exit code says a check failed (nothing on stderr).
    expect(r.stderr.trim()).toBe("");
  });

  it("--server limits the checks to one server and passes when it is healthy", async () => {
    const r = await sb.run(["doctor", "--probe", "--server", "everything", "--json"]);
    expect(r.code).toBe(0);
    const checks = JSON.parse(r.stdout) as CheckJson[];
    expect(checks.map((c) => c.name)).toEqual(["config", "server:everything", "sandbox:everything", "definitions", "vault", "probe:everything"]);
    expect(checks.find((c) => c.name === "probe:everything")).toMatchObject({ handshake_ok: true, tool_count: expectedTools });
  });
});
