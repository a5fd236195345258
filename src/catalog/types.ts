// The catalogue's vocabulary. A CatalogEntry is one downstream tool as the gateway sees it:
// its public name (after de-stuttering and the collision plan), its wire name, and the routing
// metadata from config. Everything the search index, resolve, describe and advertisement need.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

export interface CatalogEntry {
  /** Server name from config (never contains "__"). */
  server: string;
  /** Public fragment: the tool part of the public name (`bob-context` on `bob` → `context`). */
  tool: string;
  /** `server__tool`, the name advertised and reported everywhere. */
  namespaced: string;
  /** The name the downstream knows the tool by. */
  wire: string;
  title?: string;
  description: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  annotations?: JsonObject;
  /** The downstream tool definition exactly as listed (icons, _meta, ...). */
  definition: Tool;
  /** Server-level metadata from config. */
  serverDescription?: string;
  tags: string[];
  useWhen: string[];
  /** `tool_use_when[wire]` from config (also looked up by public fragment). */
  toolUseWhen: string[];
}

/** Per-server metadata from config that the catalogue attaches to each of its entries. */
export interface ServerMeta {
  description?: string;
  tags?: string[];
  use_when?: string[];
  tool_use_when?: Record<string, string[]>;
}
