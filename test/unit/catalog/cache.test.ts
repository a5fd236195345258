// The catalogue cache: the on-disk file (atomic, private, trusted only for the connection it was
// listed from, validated on read) and the catalogue's rule that identical content changes nothing.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { listingHash, makeListing, type ListingContent } from "../../../src/catalog/cache/listing.js";
import { CatalogCache } from "../../../src/catalog/cache/store.js";
import { Catalog } from "../../../src/catalog/catalog.js";
import { catalogRevision } from "../../../src/catalog/revision.js";
import { connectionFingerprint } from "../../../src/downstream/identity.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), "mcphub-cache-"));
  dirs.push(d);
  return d;
}

const tool = (name: string, description = `${name} things`): Tool => ({ name, description, inputSchema: { type: "object", properties: { q: { type: "string" } } } });

const content = (tools: Tool[]): ListingContent => ({
  tools,
  resources: [{ uri: "file:///a", name: "a" }],
  prompts: [{ name: "p", description: "a prompt" }],
  instructions: "use me",
  serverVersion: { name: "srv", version: "1.2.3" },
});

describe("CatalogCache", () => {
  it("writes one private file per server atomically and reads it back for the same connection", async () => {
    const cache = new CatalogCache(dataDir());
    const listing = makeListing(content([tool("alpha"), tool("beta")]), "live", Date.parse("2026-01-02T03:04:05.000Z"));
    await cache.write("srv", "fp1", listing);
    expect(statSync(cache.dir).mode & 0o777).toBe(0o700);
    expect(statSync(cache.pathOf("srv")).mode & 0o777).toBe(0o600);
    expect(readdirSync(cache.dir)).toEqual(["srv.json"]);
    const got = cache.read("srv", "fp1");
    if (!("listing" in got)) throw new Error(`expected a listing, got ${JSON.stringify(got)}`);
    expect(got.listing.source).toBe("cached");
    expect(got.listing.fetchedAt).toBe(listing.fetchedAt);
    expect(got.listing.hash).toBe(listing.hash);
    expect(got.listing.tools.map((t) => t.name)).toEqual(["alpha", "beta"]);
    expect(got.listing.serverVersion).toEqual({ name: "srv", version: "1.2.3" });
    expect(got.listing.instructions).toBe("use me");
  });

  it("reads back the hashes it wrote; a file without them has both recomputed from its content", async () => {
    const cache = new CatalogCache(dataDir());
    const listing = makeListing(content([tool("alpha"), tool("beta")]), "live", Date.parse("2026-01-02T03:04:05.000Z"));
    await cache.write("srv", "fp1", listing);
    const file = JSON.parse(readFileSync(cache.pathOf("srv"), "utf8")) as Record<string, unknown>;
    expect(file).toMatchObject({ hash: listing.hash, tools_hash: listing.toolsHash });
    // The recorded hashes are used as they are (a start does not hash every definition again)...
    writeFileSync(cache.pathOf("srv"), JSON.stringify({ ...file, hash: "a".repeat(32), tools_hash: "b".repeat(32) }));
    expect(cache.read("srv", "fp1")).toMatchObject({ listing: { hash: "a".repeat(32), toolsHash: "b".repeat(32) } });
    // ...and a file written before tools_hash existed gets both from its content.
    const { hash: _h, tools_hash: _t, ...older } = file;
    writeFileSync(cache.pathOf("srv"), JSON.stringify(older));
    expect(cache.read("srv", "fp1")).toMatchObject({ listing: { hash: listing.hash, toolsHash: listing.toolsHash } });
  });

  it("does not trust a file listed from another connection, a corrupt file, or a foreign shape", async () => {
    const cache = new CatalogCache(dataDir());
    expect(cache.read("srv", "fp")).toEqual({ reason: "absent" });
    await cache.write("srv", "fp1", makeListing(content([tool("alpha")]), "live", Date.now()));
    expect(cache.read("srv", "fp2")).toEqual({ reason: "other_connection" });
    writeFileSync(cache.pathOf("srv"), "{not json");
    expect(cache.read("srv", "fp1")).toMatchObject({ reason: "unreadable", detail: "not JSON" });
    writeFileSync(cache.pathOf("srv"), JSON.stringify({ version: 1, server: "srv", fingerprint: "fp1", fetched_at: "2026-01-01T00:00:00Z", tools: [{ description: "no name" }], resources: [], prompts: [] }));
    expect(cache.read("srv", "fp1")).toMatchObject({ reason: "unreadable", detail: expect.stringContaining("tools.0.name") });
  });

  it("prunes files of servers that are no longer configured and removes one on request", async () => {
    const cache = new CatalogCache(dataDir());
    const l = makeListing(content([tool("alpha")]), "live", Date.now());
    await cache.write("keep", "fp", l);
    await cache.write("gone", "fp", l);
    expect(cache.prune(new Set(["keep"]))).toEqual(["gone"]);
    expect(readdirSync(cache.dir)).toEqual(["keep.json"]);
    await cache.remove("keep");
    expect(readdirSync(cache.dir)).toEqual([]);
  });

  it("keys the cache by the connection, never by secret values", () => {
    const base = { command: "node", args: ["s.js"], enabled: true, env: { TOKEN: "secret-1" } };
    const fp = connectionFingerprint(base);
    expect(connectionFingerprint({ ...base, env: { TOKEN: "secret-2" } })).toBe(fp);
    expect(connectionFingerprint({ ...base, description: "metadata only", use_when: ["x"] })).toBe(fp);
    expect(connectionFingerprint({ ...base, args: ["other.js"] })).not.toBe(fp);
    expect(connectionFingerprint({ ...base, env: { OTHER: "x" } })).not.toBe(fp);
  });
});

describe("listings in the catalogue", () => {
  it("hashes content independent of listing order", () => {
    const a = content([tool("alpha"), tool("beta")]);
    const b = { ...a, tools: [tool("beta"), tool("alpha")] };
    expect(listingHash(a)).toBe(listingHash(b));
    expect(listingHash({ ...a, tools: [tool("alpha", "changed")] })).not.toBe(listingHash(a));
  });

  it("a live listing identical to the cached one changes nothing: no event, same generation and revision", () => {
    const catalog = new Catalog({});
    const events: string[] = [];
    catalog.onChange((s) => events.push(s));
    expect(catalog.setListing("srv", makeListing(content([tool("alpha"), tool("beta")]), "cached", 1000))).toBe(true);
    expect(events).toEqual(["srv"]);
    const generation = catalog.generation;
    const revision = catalogRevision(catalog.entries());
    const same = makeListing(content([tool("beta"), tool("alpha")]), "live", 2000);
    expect(catalog.setListing("srv", same)).toBe(false);
    expect(events).toEqual(["srv"]);
    expect(catalog.generation).toBe(generation);
    expect(catalogRevision(catalog.entries())).toBe(revision);
    expect(catalog.listingOf("srv")).toMatchObject({ source: "live", fetchedAt: 2000 });

    // Prompts changed, tools did not: listeners re-check, nothing is re-indexed.
    expect(catalog.setListing("srv", makeListing({ ...content([tool("alpha"), tool("beta")]), prompts: [] }, "live", 3000))).toBe(true);
    expect(events).toEqual(["srv", "srv"]);
    expect(catalog.generation).toBe(generation);

    // A new tool: re-indexed, new revision.
    expect(catalog.setListing("srv", makeListing(content([tool("alpha"), tool("beta"), tool("gamma")]), "live", 4000))).toBe(true);
    expect(catalog.generation).toBe(generation + 1);
    expect(catalogRevision(catalog.entries())).not.toBe(revision);
    expect(catalog.setListing("srv", undefined)).toBe(true);
    expect(catalog.entries()).toEqual([]);
    expect(catalog.listingOf("srv")).toBeUndefined();
  });
});
