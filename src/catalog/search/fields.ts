// Which parts of a catalogue entry are searchable, and how much a hit in each is worth.
//
// Evidence comes at two levels:
// - tool level: the entry's own name, per-tool hints, title, input field names and description;
// - server level: one document per server holding its name, tags, use_when, description and the
//   names of all its tools. Server terms get their IDF from the number of *servers* carrying them,
//   so a term that names a server ("trends" in trends-hub) is not discounted just because that
//   server has twenty tools, and a task that fits a server lifts all of its tools together.
//
// Weights follow the Go ranking (tool name and per-tool hints strongest, server description
// weakest); `refLength` is the length, in terms, at which a field counts as "normal" for length
// normalisation. It is a constant rather than a corpus average so that one entry's score never
// depends on another server's text: re-indexing one server leaves every other server's scores as
// they were (only document frequencies of shared terms can move).
import type { CatalogEntry } from "../types.js";

export interface FieldSpec<T> {
  name: string;
  weight: number;
  refLength: number;
  text(item: T): string;
}

/** Top-level input property names, sorted (the keys of the argument template). */
export function inputFieldNames(entry: CatalogEntry): string[] {
  const props = entry.inputSchema["properties"];
  if (props === null || typeof props !== "object" || Array.isArray(props)) return [];
  return Object.keys(props).sort();
}

/** The descriptions of the top-level input properties ("Stock symbol in Yahoo Finance format"). */
export function inputFieldDescriptions(entry: CatalogEntry): string {
  const props = entry.inputSchema["properties"];
  if (props === null || typeof props !== "object" || Array.isArray(props)) return "";
  const out: string[] = [];
  for (const value of Object.values(props)) {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const d = (value as Record<string, unknown>)["description"];
      if (typeof d === "string") out.push(d);
    }
  }
  return out.join(" . ");
}

export const TOOL_FIELDS: readonly FieldSpec<CatalogEntry>[] = [
  { name: "tool", weight: 14, refLength: 3, text: (e) => (e.wire === e.tool ? e.tool : `${e.tool} ${e.wire}`) },
  { name: "tool_use_when", weight: 13, refLength: 12, text: (e) => e.toolUseWhen.join(" . ") },
  { name: "title", weight: 11, refLength: 4, text: (e) => e.title ?? "" },
  { name: "input_fields", weight: 9, refLength: 4, text: (e) => inputFieldNames(e).join(" ") },
  { name: "description", weight: 7, refLength: 24, text: (e) => e.description },
  { name: "input_descriptions", weight: 3, refLength: 24, text: inputFieldDescriptions },
];

/** What the server-level document is built from: the server's metadata and its tools. */
export interface ServerDocSource {
  server: string;
  entries: readonly CatalogEntry[];
}

function first(src: ServerDocSource): CatalogEntry | undefined {
  return src.entries[0];
}

export const SERVER_FIELDS: readonly FieldSpec<ServerDocSource>[] = [
  { name: "server", weight: 12, refLength: 2, text: (s) => s.server },
  { name: "tags", weight: 10, refLength: 4, text: (s) => (first(s)?.tags ?? []).join(" . ") },
  { name: "use_when", weight: 9, refLength: 12, text: (s) => (first(s)?.useWhen ?? []).join(" . ") },
  { name: "server_description", weight: 5, refLength: 24, text: (s) => first(s)?.serverDescription ?? "" },
  { name: "tool_names", weight: 4, refLength: 24, text: (s) => s.entries.map((e) => e.tool).join(" . ") },
];
