// `doctor --probe --json` performs a real MCP handshake: for server-everything it must report
// handshake_ok and exactly the tool count the gateway shows (server-everything lists more tools to
// a client that declares sampling, elicitation and roots, as the gateway does: 17, not 13); for a
// command that does not exist it must report the reason, and the command exits non-zero. The probe
// fills the catalogue cache, so a gateway started afterwards answers from it without starting the
// server.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { readFileSync } from "node:fs";
import { ROOT, cliCommand, cliSandbox, type CliSandbox } from "../helpers/cli.js";

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

/** The tools of `server` as the gateway (`mcp serve`, expose: all) shows them. */
async function gatewayTools(cfg: string, server: string, env: NodeJS.ProcessEnv): Promise<{ tools: number; listServers: { name: string; state: string; catalog?: string; tools?: number }[] }> {
  const client = new Client({ name: "doctor-test", version: "0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [...cliCommand(), "--config", cfg, "mcp", "serve"], env: env as Record<string, string>, stderr: "ignore" }));
  try {
    const list = (await client.callTool({ name: "mcphub_list_servers", arguments: {} })) as { structuredContent?: { servers: { name: string; state: string; catalog?: string; tools?: number }[] } };
    const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith(`${server}__`));
    return { tools: names.length, listServers: list.structuredContent?.servers ?? [] };
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  const probe = cliSandbox();
  writeFileSync(probe.config, YAML.stringify({ expose: "all", servers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"], start: "eager" } } }));
  try {
    expectedTools = (await gatewayTools(probe.config, "everything", probe.env)).tools;
  } finally {
    probe.cleanup();
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
    expect(checks.find((c) => c.name === "probe:everything")).toMatchObject({ handshake_ok: true, tool_count: expectedTools, detail: expect.stringContaining("; catalogue cached") });
  });

  it("the gateway shows the tool count the probe reported, and answers from the cache the probe filled", async () => {
    expect(expectedTools).toBeGreaterThan(13); // the sampling/elicitation/roots tools are there
    const cached = JSON.parse(readFileSync(join(sb.dataDir, "catalog", "everything.json"), "utf8")) as { tools: unknown[] };
    expect(cached.tools).toHaveLength(expectedTools);
    writeFileSync(sb.config, YAML.stringify({ expose: "all", servers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } } }));
    const seen = await gatewayTools(sb.config, "everything", sb.env);
    expect(seen.tools).toBe(expectedTools);
    // start: auto with a cache: listed from it, not started.
    expect(seen.listServers.find((s) => s.name === "everything")).toMatchObject({ state: "idle", catalog: "cached" });
  });
});
