// The catalogue cache on disk: `<dataDir>/catalog/<server>.json`, one file per server (0600 in a
// 0700 directory), holding the server's last successful listing. Several gateway processes of the
// same user share it: each file is replaced atomically (temp file + rename), so a reader sees the
// old or the new listing whole. A file is trusted only for the connection it was listed from
// (`fingerprint`), and everything read back is validated like any other outside input.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { chmod, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Prompt, Resource, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { makeListing, type ServerListing } from "./listing.js";

export const CATALOG_CACHE_DIR = "catalog";
const FILE_VERSION = 1;
/** A temp file this old belongs to a writer that crashed between write and rename. */
const STALE_TEMP_MS = 10 * 60_000;

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
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, CATALOG_CACHE_DIR);
  }

  pathOf(server: string): string {
    return join(this.dir, `${server}.json`);
  }

  /**
   * The cached listing of `server` if it was listed from a connection with this fingerprint.
   * Synchronous on purpose: it runs once per server before the gateway answers its first request.
   */
  read(server: string, fingerprint: string): { listing: ServerListing } | CacheMiss {
    let text: string;
    try {
      text = readFileSync(this.pathOf(server), "utf8");
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

  /** Replaces the server's file atomically (0600). */
  async write(server: string, fingerprint: string, listing: ServerListing): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
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
    const target = this.pathOf(server);
    const tmp = join(this.dir, `.${server}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
    try {
      await writeFile(tmp, `${JSON.stringify(body)}\n`, { mode: 0o600, flag: "wx" });
      await rename(tmp, target);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  /** Drops one server's cache (removed from the config). */
  async remove(server: string): Promise<void> {
    await rm(this.pathOf(server), { force: true });
  }

  /**
   * Drops the files of servers that are not configured any more, and temp files a crashed writer
   * left behind. Synchronous and best effort: it runs at startup, and a failure costs only disk.
   */
  prune(configured: ReadonlySet<string>): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const dropped: string[] = [];
    for (const file of names) {
      const server = file.endsWith(".json") && !file.startsWith(".") ? file.slice(0, -".json".length) : undefined;
      try {
        const stale = server !== undefined ? !configured.has(server) : file.endsWith(".tmp") && Date.now() - statSync(join(this.dir, file)).mtimeMs > STALE_TEMP_MS;
        if (!stale) continue;
        rmSync(join(this.dir, file), { force: true });
        if (server !== undefined) dropped.push(server);
      } catch {
        // best effort
      }
    }
    return dropped;
  }
}
