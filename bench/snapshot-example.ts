// Regenerates bench/data/example/catalog.jsonl: the tools that the README example config's three
// servers (everything, memory, files) list, as the retrieval benchmark's "example" catalogue. The
// routing metadata (description, tags, use_when) is not stored here: bench-data.ts applies the
// current mcphub.example.yaml when it loads the snapshot.
//
//   npx tsx bench/snapshot-example.ts
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { DOWNSTREAM_CLIENT_CAPABILITIES } from "../src/gateway/passthrough/capabilities.js";
import { BENCH_DATA, REPO_ROOT } from "./bench-data.js";

const SERVERS: Record<string, string[]> = {
  everything: ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
  memory: ["node_modules/@modelcontextprotocol/server-memory/dist/index.js"],
  files: ["node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "."],
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "mcphub-snapshot-"));
  const lines: string[] = [];
  try {
    for (const [server, args] of Object.entries(SERVERS)) {
      // The capabilities the gateway declares to every downstream: server-everything lists its
      // sampling, elicitation and roots tools only to a client that can route them, as a user's
      // gateway does.
      const client = new Client({ name: "snapshot-example", version: "1.0.0" }, { capabilities: DOWNSTREAM_CLIENT_CAPABILITIES });
      client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
      const env: Record<string, string> = { PATH: process.env["PATH"] ?? "", MEMORY_FILE_PATH: join(dir, "memory.jsonl") };
      await client.connect(new StdioClientTransport({ command: process.execPath, args, env, cwd: REPO_ROOT, stderr: "ignore" }));
      const { tools } = await client.listTools();
      for (const t of tools) {
        lines.push(JSON.stringify({ server, tool: t.name, ...(t.title ? { title: t.title } : {}), description: t.description, inputSchema: t.inputSchema, ...(t.annotations ? { annotations: t.annotations } : {}) }));
      }
      await client.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  writeFileSync(join(BENCH_DATA, "example", "catalog.jsonl"), lines.join("\n") + "\n");
  console.log(`${lines.length} tools written to bench/data/example/catalog.jsonl`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
