// The `--via-gateway` path of the retrieval benchmark: a real `mcphub mcp serve` process with one
// fixture downstream per catalogue server (test/fixtures/catalog-server.mjs), queried through an
// SDK Client with `mcphub_search_tools`, exactly as a harness would.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { stringify } from "yaml";
import { z } from "zod";
import { REPO_ROOT, type CatalogLine } from "./bench-data.js";

const SearchDoc = z.object({
  matches: z.array(z.object({ server: z.string(), tool: z.string(), namespaced: z.string() })),
});
const ListDoc = z.object({ total_tools: z.number(), servers: z.array(z.object({ name: z.string(), connected: z.boolean() })) });

function structured(result: unknown): unknown {
  const r = result as { structuredContent?: unknown; content?: { type: string; text?: string }[] };
  if (r.structuredContent !== undefined) return r.structuredContent;
  const text = r.content?.find((c) => c.type === "text")?.text;
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
}

/**
 * The gateway de-stutters names (`git_status` on `git` is public `git__status`); the benchmark's
 * expectations use `server__wire`. Map every public spelling back to the catalogue's name.
 */
function publicToCatalogName(lines: CatalogLine[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const l of lines) {
    const canonical = `${l.server}__${l.tool}`;
    out.set(canonical, canonical);
    for (const sep of ["_", "-"]) {
      const prefix = `${l.server}${sep}`;
      if (l.tool.startsWith(prefix) && l.tool.length > prefix.length) {
        const stripped = `${l.server}__${l.tool.slice(prefix.length)}`;
        if (!out.has(stripped)) out.set(stripped, canonical);
      }
    }
  }
  return out;
}

export async function gatewaySearcher(
  lines: CatalogLine[],
  catalogPath: string,
  depth: number,
): Promise<{ search: (q: string) => Promise<string[]>; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "mcphub-bench-"));
  const servers: Record<string, unknown> = {};
  const descriptions = new Map<string, string>();
  for (const l of lines) if (l.serverDescription && !descriptions.has(l.server)) descriptions.set(l.server, l.serverDescription);
  for (const server of new Set(lines.map((l) => l.server))) {
    servers[server] = {
      command: process.execPath,
      args: [join(REPO_ROOT, "test", "fixtures", "catalog-server.mjs"), "--catalog", catalogPath, "--server", server],
      ...(descriptions.has(server) ? { description: descriptions.get(server) } : {}),
    };
  }
  const configPath = join(dir, "mcphub.yaml");
  writeFileSync(configPath, stringify({ version: 1, expose: "lazy", connect_timeout: "120s", servers }), { mode: 0o600 });

  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  env["MCPHUB_DATA_DIR"] = join(dir, "data");
  env["HOME"] = dir;
  const client = new Client({ name: "retrieval-bench", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(REPO_ROOT, "bin", "mcphub.js"), "mcp", "serve", "--config", configPath],
    env,
    stderr: "ignore",
  });
  const close = async (): Promise<void> => {
    await client.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await client.connect(transport);
    // Servers publish as they connect; wait until every one of them is in the catalogue.
    const wanted = new Set(lines.map((l) => l.server)).size;
    const deadline = Date.now() + 180_000;
    for (;;) {
      const list = ListDoc.parse(structured(await client.callTool({ name: "mcphub_list_servers", arguments: {} })));
      if (list.servers.filter((s) => s.connected).length >= wanted) break;
      if (Date.now() > deadline) throw new Error(`only ${list.servers.filter((s) => s.connected).length}/${wanted} servers connected`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } catch (err) {
    await close();
    throw err;
  }
  const names = publicToCatalogName(lines);
  return {
    search: async (query) => {
      const result = await client.callTool({ name: "mcphub_search_tools", arguments: { query, max_hits: depth } });
      const doc = SearchDoc.parse(structured(result));
      return doc.matches.map((m) => names.get(m.namespaced) ?? m.namespaced);
    },
    close,
  };
}
