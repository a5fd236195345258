// A server's listing as the catalogue keeps it: tools, resources and prompts with where they came
// from (a live session, or the on-disk cache of an earlier one), when they were fetched, and a
// content hash. The hash decides whether a new listing changes anything: a live listing identical
// to the cached one changes neither the catalogue nor `catalog_revision`, and sends no list_changed.
import { createHash } from "node:crypto";
import type { Prompt, Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import { canonicalJson } from "../../util/json/canonical.js";

export type ListingSource = "live" | "cached";

export interface ListingContent {
  tools: Tool[];
  resources: Resource[];
  /** Absent in cache files written before templates were kept: read as none. */
  resourceTemplates?: ResourceTemplate[];
  prompts: Prompt[];
  instructions?: string;
  serverVersion?: { name: string; version: string };
}

export interface ServerListing extends ListingContent {
  source: ListingSource;
  /** When a live session listed this content (epoch ms); for a cached listing, the original fetch. */
  fetchedAt: number;
  /** listingHash() of the content. */
  hash: string;
  /** The same over the tools alone: what the catalogue entries and their index depend on. */
  toolsHash: string;
}

/**
 * Hash of everything a consumer sees, independent of the order the server listed things in
 * (lists are sorted by name/uri, object keys canonicalised). `serverVersion` is left out: a
 * version bump that lists the same tools changes nothing for routing.
 */
export function listingHash(content: ListingContent): string {
  const byKey = <T>(items: T[], key: (t: T) => string) => [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const body = canonicalJson({
    tools: byKey(content.tools, (t) => t.name),
    resources: byKey(content.resources, (r) => r.uri),
    resource_templates: byKey(content.resourceTemplates ?? [], (t) => t.uriTemplate),
    prompts: byKey(content.prompts, (p) => p.name),
    instructions: content.instructions ?? null,
  });
  return createHash("sha256").update(body).digest("hex").slice(0, 32);
}

/**
 * `known`: the hashes a cache file recorded for this very content when it was written, so a start
 * does not canonicalise and hash every cached definition again (that was a tenth of a warm start).
 */
export function makeListing(content: ListingContent, source: ListingSource, fetchedAt: number, known?: { hash: string; toolsHash: string }): ServerListing {
  return {
    ...content,
    source,
    fetchedAt,
    hash: known?.hash ?? listingHash(content),
    toolsHash: known?.toolsHash ?? listingHash({ tools: content.tools, resources: [], prompts: [] }),
  };
}
