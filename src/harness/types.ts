// The neutral MCP server entry every harness adapter translates to and from, and the shape of
// an adapter. Adapters are data (see registry.ts): a file format, a section key and an entry
// codec; the generic document code in documents.ts does the reading and careful editing.
import type { AgentType } from "../config/schema.js";

/** One MCP server as a harness sees it, independent of any harness's spelling. */
export interface NeutralEntry {
  name: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  /** Remote transport; undefined for stdio. */
  transport?: "http" | "sse";
  headers?: Record<string, string>;
}

export type FileFormat = "json" | "yaml" | "toml";

/** A plain JSON-ish value as found in a harness file. */
export type RawValue = null | boolean | number | string | RawValue[] | { [key: string]: RawValue };
export type RawObject = { [key: string]: RawValue };

/** Translates between the neutral entry and one harness's entry object. */
export interface EntryCodec {
  /** The neutral entry as this harness writes it (without the name for keyed sections). */
  encode(entry: NeutralEntry): RawObject;
  /** Reads a harness entry; undefined when it is not an MCP server entry we understand. */
  decode(name: string, raw: RawValue): NeutralEntry | undefined;
  /**
   * Keys of an entry object this codec writes. On update these are cleared and overlaid, so any
   * other per-entry key a user added (e.g. forge's `disable`, copilot's `tools`) survives.
   */
  managedKeys: readonly string[];
}

export interface HarnessAdapter {
  type: AgentType;
  /** Human label for tables. */
  label: string;
  format: FileFormat;
  /** Default file, relative to the home directory (already platform-specific). */
  defaultPath(home: string): string;
  /** Key path of the MCP section inside the file. */
  section: readonly string[];
  /** "map": section is an object keyed by server name; "list": a sequence of {name, ...}. */
  layout: "map" | "list";
  codec: EntryCodec;
  /** Whether the format keeps comments on edit (for docs and the sync report). */
  keepsComments: boolean;
  /**
   * Other paths whose presence says the harness is installed, for harnesses whose file sits right
   * in the home directory (the home folder existing says nothing): Claude Code's `~/.claude/`.
   */
  markers?(home: string): string[];
}
