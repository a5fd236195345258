// The benchmark's fixture downstream: serves a catalog.jsonl verbatim through a real SDK client.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const FIXTURE = resolve(import.meta.dirname, "../../fixtures/catalog-server.mjs");
const dir = mkdtempSync(join(tmpdir(), "catalog-server-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("catalog-server fixture", () => {
  it("lists one server's tools with raw schemas and echoes calls", async () => {
    const path = join(dir, "catalog.jsonl");
    const schema = { type: "object", properties: { q: { type: "string", minLength: 2 } }, required: ["q"], $schema: "http://json-schema.org/draft-07/schema#" };
    writeFileSync(
      path,
      [
        JSON.stringify({ server: "a", tool: "find", description: "Find things.", inputSchema: schema }),
        JSON.stringify({ server: "b", tool: "other", description: "Other.", inputSchema: { type: "object" } }),
      ].join("\n"),
    );
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE, "--catalog", path, "--server", "a"], stderr: "ignore" }));
    try {
      const { tools } = await client.listTools();
      expect(tools).toEqual([{ name: "find", description: "Find things.", inputSchema: schema }]);
      const result = await client.callTool({ name: "find", arguments: { q: "xy" } });
      expect(result.content).toEqual([{ type: "text", text: 'called find with {"q":"xy"}' }]);
    } finally {
      await client.close();
    }
  });
});
