// Loading the shared benchmark data (../shared/bench beside the repo) into catalogue entries.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { CatalogEntry, JsonObject } from "../src/catalog/types.js";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const BENCH_DATA = join(REPO_ROOT, "..", "shared", "bench");

const CatalogLine = z.object({
  server: z.string(),
  tool: z.string(),
  description: z.string().nullish(),
  inputSchema: z.record(z.string(), z.unknown()).nullish(),
  serverTitle: z.string().nullish(),
  serverDescription: z.string().nullish(),
});
export type CatalogLine = z.infer<typeof CatalogLine>;

const QueryLine = z.object({
  id: z.string(),
  query: z.string(),
  expected: z.array(z.string()),
  expectedGroups: z.array(z.array(z.string())).optional(),
});
export type QueryLine = z.infer<typeof QueryLine>;

function readJsonl<T>(path: string, schema: z.ZodType<T>): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim().length > 0)
    .map((l, i) => {
      const parsed = schema.safeParse(JSON.parse(l));
      if (!parsed.success) throw new Error(`${path}:${i + 1}: ${parsed.error.message}`);
      return parsed.data;
    });
}

export function loadCatalog(path: string): CatalogLine[] {
  return readJsonl(path, CatalogLine);
}

export function loadQueries(path: string): QueryLine[] {
  return readJsonl(path, QueryLine);
}

/** A catalogue line as the gateway would present it (public fragment = wire name here). */
export function toEntry(line: CatalogLine, server = line.server): CatalogEntry {
  const inputSchema = (line.inputSchema ?? { type: "object" }) as JsonObject;
  const description = line.description ?? "";
  return {
    server,
    tool: line.tool,
    namespaced: `${server}__${line.tool}`,
    wire: line.tool,
    description,
    inputSchema,
    definition: { name: line.tool, description, inputSchema: { type: "object", ...inputSchema } },
    ...(line.serverDescription ? { serverDescription: line.serverDescription } : {}),
    tags: [],
    useWhen: [],
    toolUseWhen: [],
  };
}

/** The groups a task needs: expectedGroups when given, else one singleton group per tool. */
export function groupsOf(q: QueryLine): string[][] {
  return q.expectedGroups ?? q.expected.map((t) => [t]);
}
