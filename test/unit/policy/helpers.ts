// Small builders shared by the policy tests: a validated Config (through the real schema, so the
// tests see exactly what the gateway sees) and catalogue entries.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { configSchema, type Config, type RawConfig } from "../../../src/config/schema.js";
import type { CatalogEntry, JsonObject } from "../../../src/catalog/types.js";

export function config(raw: RawConfig): Config {
  return configSchema.parse(raw);
}

/** A stdio server entry for config fixtures. */
export const stdio = (enabled = true) => ({ command: "true", enabled });

/** A catalogue entry whose downstream definition is `definition` (name defaults to the wire name). */
export function entry(server: string, fragment: string, definition: Partial<Tool> = {}, wire = fragment): CatalogEntry {
  const def: Tool = { name: wire, inputSchema: { type: "object" }, ...definition };
  return {
    server,
    tool: fragment,
    namespaced: `${server}__${fragment}`,
    wire,
    description: def.description ?? "",
    inputSchema: def.inputSchema as JsonObject,
    definition: def,
    tags: [],
    useWhen: [],
    toolUseWhen: [],
  };
}

/** Deterministic shuffle (seeded), so a failure reproduces. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
