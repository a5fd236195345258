// The catalogue cache: one document per server in the store's `catalog` space
// (`<dataDir>/catalog/<server>.json`, 0600 in a 0700 directory, on the files store; rows in
// PostgreSQL, read from memory), holding the server's last successful listing. Several gateway
// processes and replicas share it: each document is replaced atomically, so a reader sees the old
// or the new listing whole. A listing is trusted only for the connection it was listed from
// (`fingerprint`), and everything read back is validated like any other outside input.
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Prompt, Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { FileDocs, storeOf, type Docs, type Store } from "../../store/index.js";
import { makeListing, type ServerListing } from "./listing.js";

export const CATALOG_CACHE_DIR = "catalog";
const FILE_VERSION = 1;

// What the catalogue relies on is checked; everything else in a definition is kept as listed
// (the file holds what a live session listed, so the SDK's full schemas already passed once, and
// re-running them on every start costs more than the rest of reading the cache).
const toolSchema = z.looseObject({ name: z.string().min(1), inputSchema: z.looseObject({ type: z.literal("object") }) });
const resourceSchema = z.looseObject({ uri: z.string(), name: z.string() });
const templateSchema = z.looseObject({ uriTemplate: z.string(), name: z.string() });
const promptSchema = z.looseObject({ name: z.string() });

const fileSchema = z.object({
  version: z.literal(FILE_VERSION),
  server: z.string(),
  fingerprint: z.string(),
  fetched_at: z.iso.datetime(),
  // listingHash() of the content as written; files from before tools_hash have both recomputed.
  hash: z.string().regex(/^[0-9a-f]{32}$/).optional(),
  tools_hash: z.string().regex(/^[0-9a-f]{32}$/).optional(),
  server_version: z.object({ name: z.string(), version: z.string() }).optional(),
  instructions: z.string().optional(),
  tools: z.array(toolSchema),
  resources: z.array(resourceSchema),
  resource_templates: z.array(templateSchema).optional(),
  prompts: z.array(promptSchema),
});

/** Why a cached listing was not used (for logs); undefined when there is simply no file. */
export type CacheMiss = { reason: "absent" } | { reason: "other_connection" } | { reason: "unreadable"; detail: string };

export class CatalogCache {
  /** The directory of the files (files store), or where the rows are, for messages. */
  readonly dir: string;
  private readonly docs: Docs;

  constructor(where: string | Store) {
    const store = storeOf(where);
    this.docs = store.docs("catalog");
    this.dir = store.kind === "files" ? join(store.where, CATALOG_CACHE_DIR) : `${CATALOG_CACHE_DIR} in ${store.where}`;
  }

  pathOf(server: string): string {
    return this.docs instanceof FileDocs ? this.docs.pathOf(server) : `${this.dir}: ${server}`;
  }

  /**
   * The cached listing of `server` if it was listed from a connection with this fingerprint.
   * Synchronous on purpose: it runs once per server before the gateway answers its first request
   * (a file read on the files store, memory on PostgreSQL).
   */
  read(server: string, fingerprint: string): { listing: ServerListing } | CacheMiss {
    let text: string;
    try {
      const entry = this.docs.mirror().peek(server);
      if (!entry) return { reason: "absent" };
      text = entry.bytes().toString("utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { reason: "absent" };
      return { reason: "unreadable", detail: (err as Error).message };
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return { reason: "unreadable", detail: "not JSON" };
    }
    // jitless: parsed once per server per start (see validateConfig).
    const parsed = fileSchema.safeParse(raw, { jitless: true });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { reason: "unreadable", detail: issue ? `${issue.path.join(".") || "file"}: ${issue.message}` : "unexpected content" };
    }
    const f = parsed.data;
    if (f.server !== server || f.fingerprint !== fingerprint) return { reason: "other_connection" };
    const listing = makeListing(
      {
        tools: f.tools as Tool[],
        resources: f.resources as Resource[],
        ...(f.resource_templates ? { resourceTemplates: f.resource_templates as ResourceTemplate[] } : {}),
        prompts: f.prompts as Prompt[],
        ...(f.instructions !== undefined ? { instructions: f.instructions } : {}),
        ...(f.server_version !== undefined ? { serverVersion: f.server_version } : {}),
      },
      "cached",
      Date.parse(f.fetched_at),
      f.hash !== undefined && f.tools_hash !== undefined ? { hash: f.hash, toolsHash: f.tools_hash } : undefined,
    );
    return { listing };
  }

  /** Replaces the server's document atomically (a 0600 file on the files store). */
  async write(server: string, fingerprint: string, listing: ServerListing): Promise<void> {
    const body = {
      version: FILE_VERSION,
      server,
      fingerprint,
      fetched_at: new Date(listing.fetchedAt).toISOString(),
      hash: listing.hash,
      tools_hash: listing.toolsHash,
      ...(listing.serverVersion ? { server_version: listing.serverVersion } : {}),
      ...(listing.instructions !== undefined ? { instructions: listing.instructions } : {}),
      tools: listing.tools,
      resources: listing.resources,
      resource_templates: listing.resourceTemplates ?? [],
      prompts: listing.prompts,
    };
    await this.docs.put(server, Buffer.from(`${JSON.stringify(body)}\n`, "utf8"));
  }

  /** Drops one server's cache (removed from the config). */
  async remove(server: string): Promise<void> {
    await this.docs.remove(server);
  }

  /**
   * Drops the listings of servers that are not configured any more, and temp files a crashed
   * writer left behind. Synchronous and best effort on the files (it runs at startup, and a
   * failure costs only disk); PostgreSQL deletes in the background.
   */
  prune(configured: ReadonlySet<string>): string[] {
    const dropped: string[] = [];
    let keys: string[];
    try {
      keys = this.docs.mirror().keys();
    } catch {
      return [];
    }
    const docs = this.docs;
    if (docs instanceof FileDocs) docs.sweepSync();
    for (const server of keys) {
      if (configured.has(server)) continue;
      dropped.push(server);
      if (docs instanceof FileDocs) {
        try {
          rmSync(docs.pathOf(server), { force: true });
        } catch {
          // best effort
        }
      } else {
        void docs.remove(server).catch(() => undefined);
      }
    }
    return dropped;
  }
}
