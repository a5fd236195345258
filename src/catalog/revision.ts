// catalog_revision: a short content hash of the routing-relevant part of a catalogue. resolve_tool
// reports it so a client can tell whether a cached routing decision is still valid. It covers what
// ranking reads (names, descriptions, hints, input field names) and nothing else, so a downstream
// changing an annotation or an output schema does not invalidate clients' routing caches.
import { createHash } from "node:crypto";
import { byteOrder } from "../util/json/canonical.js";
import type { CatalogEntry } from "./types.js";

export const CATALOG_REVISION_PREFIX = "catalog-v1-";
/** 12 bytes of SHA-256 → 24 hex digits. */
const REVISION_BYTES = 12;

/**
 * Hashes entries sorted by namespaced name; for each, every value followed by a NUL byte:
 * namespaced, title, description, server description, each tag, each use_when, each
 * tool_use_when, each top-level input property name (sorted). Values are hashed raw.
 */
export function catalogRevision(entries: readonly CatalogEntry[]): string {
  const hash = createHash("sha256");
  const put = (value: string): void => {
    hash.update(value, "utf8");
    hash.update("\0");
  };
  const sorted = [...entries].sort((a, b) => byteOrder(a.namespaced, b.namespaced));
  for (const e of sorted) {
    put(e.namespaced);
    put(e.title ?? "");
    put(e.description);
    put(e.serverDescription ?? "");
    e.tags.forEach(put);
    e.useWhen.forEach(put);
    e.toolUseWhen.forEach(put);
    inputFieldNames(e).forEach(put);
  }
  return CATALOG_REVISION_PREFIX + hash.digest().subarray(0, REVISION_BYTES).toString("hex");
}

/** Top-level property names of the input schema, sorted; none when the schema has no properties. */
export function inputFieldNames(entry: Pick<CatalogEntry, "inputSchema">): string[] {
  const props = entry.inputSchema["properties"];
  if (props === null || typeof props !== "object" || Array.isArray(props)) return [];
  return Object.keys(props).sort(byteOrder);
}
