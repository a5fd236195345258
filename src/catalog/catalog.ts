// The catalogue: one set of CatalogEntry per server whose tools are known, built from the
// downstream tool list, the server's name plan and its config metadata. A server's listing is
// live (from its current session) or cached (from disk, or from a session that has since ended):
// either way its tools stay routable. It owns the search index so that a change to one server
// re-indexes only that server. It knows nothing about transports or agents.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ServerListing } from "./cache/listing.js";
import { planPublicNames, type NamePlan } from "./names.js";
import { SearchIndex } from "./search/index.js";
import type { CatalogEntry, JsonObject, ServerMeta } from "./types.js";

export class Catalog {
  private readonly byServer = new Map<string, CatalogEntry[]>();
  private readonly plans = new Map<string, NamePlan>();
  private readonly listings = new Map<string, ServerListing>();
  private readonly listeners = new Set<(server: string) => void>();
  readonly index = new SearchIndex();
  private sorted: CatalogEntry[] | undefined;
  /** Increments on every change; views cache derived data (revision, advertised list) by it. */
  generation = 0;

  constructor(private meta: Record<string, ServerMeta>) {}

  /** Replaces config metadata (hot reload); callers re-feed servers afterwards (reindex). */
  setMeta(meta: Record<string, ServerMeta>): void {
    this.meta = meta;
  }

  /** Rebuilds a server's entries from its installed listing, e.g. after its metadata changed. */
  reindex(server: string): void {
    const listing = this.listings.get(server);
    if (listing) this.updateServer(server, listing.tools);
  }

  /**
   * Installs a server's listing (or removes the server with undefined). Content identical to what
   * is installed (same hash) only updates its source and time: no re-index, no change event, the
   * same `catalog_revision`. Returns whether anything a client sees changed.
   */
  setListing(server: string, listing: ServerListing | undefined): boolean {
    const prev = this.listings.get(server);
    if (listing === undefined) {
      this.listings.delete(server);
      const had = this.byServer.has(server);
      this.updateServer(server, undefined);
      return had || prev !== undefined;
    }
    this.listings.set(server, listing);
    if (prev?.toolsHash !== listing.toolsHash || !this.byServer.has(server)) {
      this.updateServer(server, listing.tools);
      return true;
    }
    if (prev.hash !== listing.hash) {
      // Resources, prompts or instructions changed: nothing to re-index, but listeners re-check.
      for (const l of this.listeners) l(server);
      return true;
    }
    return false;
  }

  /** The server's installed listing (live or cached), if any. */
  listingOf(server: string): ServerListing | undefined {
    return this.listings.get(server);
  }

  /** Installs a server's tool list, or removes the server when `tools` is undefined. */
  updateServer(server: string, tools: Tool[] | undefined): void {
    if (tools === undefined) {
      if (!this.byServer.has(server)) return;
      this.byServer.delete(server);
      this.plans.delete(server);
      this.index.removeServer(server);
    } else {
      const plan = planPublicNames(
        server,
        tools.map((t) => t.name),
      );
      const meta = this.meta[server] ?? {};
      const entries = tools
        .map((t) => toEntry(server, t, plan.publicOf(t.name), meta))
        .sort((a, b) => cmp(a.namespaced, b.namespaced));
      this.byServer.set(server, entries);
      this.plans.set(server, plan);
      this.index.setServer(server, entries);
    }
    this.sorted = undefined;
    this.generation++;
    for (const l of this.listeners) l(server);
  }

  onChange(listener: (server: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every entry of every server with a listing, sorted by namespaced name. */
  entries(): CatalogEntry[] {
    if (!this.sorted) {
      this.sorted = [...this.byServer.values()].flat().sort((a, b) => cmp(a.namespaced, b.namespaced));
    }
    return this.sorted;
  }

  entriesOf(server: string): CatalogEntry[] {
    return this.byServer.get(server) ?? [];
  }

  /** The server's public-name plan, so scope and pin checks resolve aliases exactly. */
  planOf(server: string): NamePlan | undefined {
    return this.plans.get(server);
  }

  hasServer(server: string): boolean {
    return this.byServer.has(server);
  }

  /** Finds a tool by any accepted inbound spelling: public fragment, wire name or legacy stutter. */
  lookup(server: string, name: string): CatalogEntry | undefined {
    const plan = this.plans.get(server);
    if (!plan) return undefined;
    const wire = plan.resolve(name);
    if (wire === undefined) return undefined;
    return this.byServer.get(server)?.find((e) => e.wire === wire);
  }
}

/**
 * A server's catalogue entries from a tool list, as the catalogue builds them (public names,
 * config metadata), for a server whose tools are not installed (discovery of a disabled server).
 */
export function entriesFor(server: string, tools: readonly Tool[], meta: ServerMeta): CatalogEntry[] {
  const plan = planPublicNames(
    server,
    tools.map((t) => t.name),
  );
  return tools.map((t) => toEntry(server, t, plan.publicOf(t.name), meta)).sort((a, b) => cmp(a.namespaced, b.namespaced));
}

function toEntry(server: string, tool: Tool, fragment: string, meta: ServerMeta): CatalogEntry {
  const annotations = tool.annotations as JsonObject | undefined;
  const title = tool.title ?? (typeof annotations?.title === "string" ? annotations.title : undefined);
  const toolUseWhen = meta.tool_use_when?.[tool.name] ?? meta.tool_use_when?.[fragment] ?? [];
  return {
    server,
    tool: fragment,
    namespaced: `${server}__${fragment}`,
    wire: tool.name,
    ...(title !== undefined ? { title } : {}),
    description: tool.description ?? "",
    inputSchema: tool.inputSchema as JsonObject,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as JsonObject } : {}),
    ...(annotations ? { annotations } : {}),
    definition: tool,
    ...(meta.description !== undefined ? { serverDescription: meta.description } : {}),
    tags: meta.tags ?? [],
    useWhen: meta.use_when ?? [],
    toolUseWhen,
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
