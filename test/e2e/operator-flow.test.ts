// The operator's path end to end: init, add server-memory, sync --write into a local-agent
// config, then start exactly the command sync wrote and call a memory tool through it with a
// real SDK client.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { MEMORY, runMcphub, tempHome, text, type TempHome } from "../helpers/gateway.js";

describe("init → add → sync --write → the harness runs the written command", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
  });
  afterAll(() => home?.cleanup());

  it("a local-agent harness reaches server-memory through the entry sync wrote", async () => {
    const laDir = join(home.dir, ".config", "local-agent");
    mkdirSync(laDir, { recursive: true });
    const laConfig = join(laDir, "config.yaml");
    // A harness file with settings of its own and no servers yet.
    writeFileSync(laConfig, "# local-agent settings\nmodel: qwen3:8b\nprivacy:\n  local_only: true\nservers: []\n");
    const cfg = join(home.dir, ".config", "mcphub", "mcphub.yaml");
    const run = (args: string[]) => runMcphub(home, ["--config", cfg, ...args]);

    const init = await run(["init", "--from-agents"]);
    expect(init.code, init.stderr).toBe(0);
    const added = await run(["add", "memory", process.execPath, MEMORY, "--env", `MEMORY_FILE_PATH=${join(home.dir, "memory.jsonl")}`, "--force"]);
    expect(added.code, added.stderr).toBe(0);
    const dry = await run(["sync", "local-agent"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(readFileSync(laConfig, "utf8")).not.toContain("mcphub");
    const write = await run(["sync", "local-agent", "--write"]);
    expect(write.code, write.stderr).toBe(0);

    const written = YAML.parse(readFileSync(laConfig, "utf8")) as {
      model: string;
      servers: { name: string; command: string; args?: string[]; env?: string[] }[];
    };
    expect(written.model).toBe("qwen3:8b");
    const entry = written.servers.find((s) => s.name === "mcphub");
    expect(entry).toBeDefined();
    if (!entry) return;

    // Start exactly what the harness would start: the written command, args and env.
    const env: Record<string, string> = { ...(home.env as Record<string, string>) };
    delete env.MCPHUB_CONFIG;
    for (const kv of entry.env ?? []) {
      const i = kv.indexOf("=");
      env[kv.slice(0, i)] = kv.slice(i + 1);
    }
    const client = new Client({ name: "local-agent", version: "test" });
    await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args ?? [], env, cwd: home.dir }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("mcphub_call_tool");
      let created: CallToolResult | undefined;
      for (let i = 0; i < 200; i++) {
        created = (await client.callTool({
          name: "mcphub_call_tool",
          arguments: { tool: "memory__create_entities", arguments: { entities: [{ name: "Alice", entityType: "person", observations: ["works at Acme"] }] } },
        })) as CallToolResult;
        if (!created.isError && !(created.structuredContent as { error?: string } | undefined)?.error) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(created?.isError).toBeFalsy();
      const graph = (await client.callTool({ name: "mcphub_call_tool", arguments: { tool: "memory__read_graph" } })) as CallToolResult;
      expect(text(graph)).toContain("works at Acme");
    } finally {
      await client.close();
    }
  });
});
