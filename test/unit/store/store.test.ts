// The store's contract, run against both implementations: the data directory's files and a real
// PostgreSQL (a private server, test/helpers/postgres.ts). The same cases hold on both, so a part
// written against the interface behaves the same on either; the PostgreSQL-only cases cover what
// replicas rely on: a change on one store reaches another's mirror (LISTEN/NOTIFY), migrations
// apply once under concurrent starts, locks exclude across connections, a restart is survived.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlobChangedError, StoreUnavailableError, auditFileName, dayFileName, openStore, type BlobReader, type Store } from "../../../src/store/index.js";
import { PgStore, MIGRATIONS } from "../../../src/store/postgres/index.js";
import { startPostgres, type Postgres } from "../../helpers/postgres.js";

let pg: Postgres | undefined;
let skip = "";
const dirs: string[] = [];

beforeAll(async () => {
  const started = await startPostgres();
  if ("skip" in started) skip = started.skip;
  else pg = started;
}, 120_000);

afterAll(() => {
  pg?.destroy();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "mcphub-store-"));
  dirs.push(d);
  return d;
}

async function open(kind: "files" | "postgres", dataDir = tempDir()): Promise<Store> {
  if (kind === "files") return openStore({ dataDir });
  if (!pg) throw new Error(skip);
  return openStore({ dataDir, url: pg.url });
}

/** Waits (up to 5 s) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(["files", "postgres"] as const)("the %s store", (kind) => {
  it.skipIf(kind === "postgres" && skip !== "")(`documents: create, put, update, remove, list${kind === "postgres" ? "" : ""}`, async (ctx) => {
    if (kind === "postgres" && !pg) return ctx.skip(skip);
    const store = await open(kind);
    try {
      const docs = store.docs("detached");
      const key = `call_${kind}_${Date.now()}`;
      expect(await docs.get(key)).toBeUndefined();
      expect(await docs.create(key, Buffer.from("one"))).toBe(true);
      expect(await docs.create(key, Buffer.from("two"))).toBe(false);
      const first = await docs.get(key);
      expect(first?.bytes.toString()).toBe("one");
      await docs.put(key, Buffer.from("three"));
      const second = await docs.get(key);
      expect(second?.bytes.toString()).toBe("three");
      expect(second?.version).not.toBe(first?.version);
      const seen = await docs.update(key, (cur) => ({ write: Buffer.from(`${cur?.toString()}+`), value: cur?.toString() }));
      expect(seen).toBe("three");
      expect((await docs.get(key))?.bytes.toString()).toBe("three+");
      expect((await docs.list()).map((e) => e.key)).toContain(key);
      expect(await docs.removeIfOlder(key, Date.now() - 60_000)).toBe(false);
      expect(await docs.remove(key)).toBe(true);
      expect(await docs.remove(key)).toBe(false);
    } finally {
      await store.close();
    }
  });

  it("update is a read-modify-write that concurrent writers never lose", async (ctx) => {
    if (kind === "postgres" && !pg) return ctx.skip(skip);
    const dataDir = tempDir();
    const a = await open(kind, dataDir);
    const b = await open(kind, dataDir);
    try {
      const bump = (s: Store) => s.docs("tokens").update("tokens", (cur) => ({ write: Buffer.from(String(Number(cur?.toString() ?? "0") + 1)), value: undefined }));
      await Promise.all(Array.from({ length: 20 }, (_, i) => bump(i % 2 ? a : b)));
      expect((await a.docs("tokens").get("tokens"))?.bytes.toString()).toBe("20");
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("blobs: a multi-chunk blob reads back by range, a replaced one is seen as changed", async (ctx) => {
    if (kind === "postgres" && !pg) return ctx.skip(skip);
    const store = await open(kind);
    try {
      const blobs = store.blobs("results");
      const bytes = Buffer.alloc(3 * (1 << 20) + 12345);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
      const w = await blobs.create("blob1");
      for (let off = 0; off < bytes.length; off += 700_001) await w.write([bytes.subarray(off, Math.min(bytes.length, off + 700_001))]);
      expect(await blobs.stat("blob1")).toBeUndefined(); // not before commit
      await w.commit();
      const st = await blobs.stat("blob1");
      expect(st?.size).toBe(bytes.length);
      const r = await blobs.open("blob1");
      if (!r) throw new Error("no blob");
      const part = Buffer.alloc(2_000_000);
      await r.read(part, (1 << 20) - 17);
      expect(part.equals(bytes.subarray((1 << 20) - 17, (1 << 20) - 17 + part.length))).toBe(true);
      await expect(r.read(Buffer.alloc(10), bytes.length - 5)).rejects.toThrow();
      await r.close();
      // Replaced: a reader opened at the old version does not get the new bytes.
      const w2 = await blobs.create("blob1");
      await w2.write([Buffer.from("new")]);
      await w2.commit();
      if (!st) throw new Error("no stat");
      const stale: unknown = await blobs.openAt(st).catch((err: unknown) => err);
      if (stale instanceof Error) expect(stale).toBeInstanceOf(BlobChangedError);
      else await expect((stale as BlobReader).read(Buffer.alloc(3), 0)).rejects.toBeInstanceOf(BlobChangedError);
      const aborted = await blobs.create("blob2");
      await aborted.write([Buffer.from("gone")]);
      await aborted.abort();
      expect(await blobs.stat("blob2")).toBeUndefined();
      expect(await blobs.remove("blob1")).toBe(true);
      expect(await blobs.open("blob1")).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it("logs: appended lines come back whole, by segment, and prune drops old days", async (ctx) => {
    if (kind === "postgres" && !pg) return ctx.skip(skip);
    const store = await open(kind);
    const log = store.log();
    try {
      const now = Date.now();
      const old = now - 10 * 86_400_000;
      await log.append(dayFileName(old), ['{"ts":1}\n']);
      await log.append(dayFileName(now), ['{"a":1}\n', '{"a":2}\n']);
      await log.append(dayFileName(now), ['{"a":3}\n']);
      await log.append(auditFileName(now), ['{"audit":1}\n']);
      const segs = await log.segments("calls");
      expect(segs.map((s) => s.name)).toEqual([dayFileName(old), dayFileName(now)]);
      let text = "";
      let end = 0;
      for await (const batch of (segs[1] as (typeof segs)[number]).read(0)) {
        text += batch.text;
        end = batch.end;
      }
      expect(text).toBe('{"a":1}\n{"a":2}\n{"a":3}\n');
      await log.append(dayFileName(now), ['{"a":4}\n']);
      let tail = "";
      for await (const batch of (segs[1] as (typeof segs)[number]).read(end)) tail += batch.text;
      expect(tail).toBe('{"a":4}\n');
      expect((await log.segments("calls", now - 3600_000)).map((s) => s.name)).toEqual([dayFileName(now)]);
      expect(await log.prune(now - 2 * 86_400_000)).toEqual([dayFileName(old)]);
      expect((await log.segments("audit")).length).toBe(1);
    } finally {
      await log.close();
      await store.close();
    }
  });

  it("probe answers kind, reachability and latency (PostgreSQL: the schema version); setModified keeps an age; a log segment drops whole", async (ctx) => {
    if (kind === "postgres" && !pg) return ctx.skip(skip);
    const store = await open(kind);
    try {
      const p = await store.probe();
      expect(p).toMatchObject({ kind, reachable: true });
      expect(p.latency_ms).toBeGreaterThanOrEqual(0);
      if (kind === "postgres") expect(p.schema_version).toBe(MIGRATIONS.at(-1)?.version);
      const old = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
      await store.docs("catalog").put("srv", Buffer.from("{}"));
      await store.setModified("docs", "catalog", "srv", old);
      expect((await store.docs("catalog").list()).find((e) => e.key === "srv")?.modified).toBe(old);
      expect(await store.docs("catalog").removeIfOlder("srv", old + 1)).toBe(true);
      const w = await store.blobs("results").create("call_aged");
      await w.write([Buffer.from("sealed")]);
      await w.commit();
      await store.setModified("blobs", "results", "call_aged", old);
      expect((await store.blobs("results").stat("call_aged"))?.modified).toBe(old);
      const log = store.log();
      const seg = dayFileName(Date.UTC(2026, 0, 2));
      await log.append(seg, ["{}\n"]);
      expect(await log.drop(seg)).toBe(true);
      expect(await log.drop(seg)).toBe(false);
      expect((await log.segments("calls")).map((x) => x.name)).not.toContain(seg);
      await expect(log.drop("../etc/passwd")).rejects.toThrow(/invalid log segment/);
      await log.close();
    } finally {
      await store.close();
    }
  });

  it("logs: many appends to one day read back in the order they were written (past ten rows, past one batch)", async (ctx) => {
    if (kind === "postgres" && !pg) return ctx.skip(skip);
    const store = await open(kind);
    const log = store.log();
    try {
      const seg = dayFileName(Date.UTC(2026, 0, 3));
      const lines = Array.from({ length: 1200 }, (_, i) => `{"n":${i}}\n`);
      for (let i = 0; i < lines.length; i += 2) await log.append(seg, lines.slice(i, i + 2));
      let text = "";
      for await (const b of (await log.segments("calls")).find((x) => x.name === seg)?.read(0) ?? []) text += b.text;
      expect(text).toBe(lines.join(""));
    } finally {
      await log.close();
      await store.close();
    }
  }, 60_000);

  it("a named lock excludes across stores", async (ctx) => {
    if (kind === "postgres" && !pg) return ctx.skip(skip);
    const dataDir = tempDir();
    const a = await open(kind, dataDir);
    const b = await open(kind, dataDir);
    try {
      let inside = 0;
      let most = 0;
      const hold = (s: Store) =>
        s.withLock({ kind: "oauth-refresh", server: "srv" }, async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((r) => setTimeout(r, 30));
          inside--;
        });
      await Promise.all([hold(a), hold(b), hold(a), hold(b)]);
      expect(most).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("PostgreSQL only", () => {
  it("a change on one replica's store reaches another's mirror (LISTEN/NOTIFY), deletes too", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const a = await open("postgres");
    const b = await open("postgres");
    try {
      const heard: (string | undefined)[] = [];
      const stop = b.docs("tokens").mirror().watch((k) => heard.push(k));
      await a.docs("tokens").put("tokens", Buffer.from("v1"));
      // The writer's own mirror answers at once.
      expect(a.docs("tokens").mirror().peek("tokens")?.bytes().toString()).toBe("v1");
      await until(() => b.docs("tokens").mirror().peek("tokens")?.bytes().toString() === "v1", "the other mirror");
      expect(heard).toContain("tokens");
      await a.docs("tokens").remove("tokens");
      await until(() => b.docs("tokens").mirror().peek("tokens") === undefined, "the delete to arrive");
      stop();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("blobs: reads at any position through fresh readers (binary COPY, read-ahead cache) return the stored bytes; another store sees a replacement", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const a = (await open("postgres")) as PgStore;
    const b = (await open("postgres")) as PgStore;
    try {
      // Every byte value, NULs and invalid UTF-8 included: a text decode anywhere would show.
      const bytes = Buffer.alloc(2 * (1 << 20) + 777);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + (i >> 9)) & 0xff;
      const w = await a.blobs("results").create("ranges");
      await w.write([bytes]);
      await w.commit();
      const st = await b.blobs("results").stat("ranges");
      if (!st) throw new Error("no stat");
      // In order, in 64 KiB + 28 B pages (the vault's sealed chunk) through a new reader each,
      // as the vault pages; then backwards, and ranges across the 1 MiB chunk boundaries.
      const page = 65_564;
      for (let at = 0; at < bytes.length; at += page) {
        const r = await b.blobs("results").openAt(st);
        const into = Buffer.alloc(Math.min(page, bytes.length - at));
        await r?.read(into, at);
        expect(into.equals(bytes.subarray(at, at + into.length)), `page at ${at}`).toBe(true);
      }
      for (const [at, len] of [[bytes.length - 1, 1], [(1 << 20) - 3, 7], [(2 << 20) - 100, 877], [5, 1 << 20], [0, bytes.length], [300_000, 10]] as const) {
        const r = await b.blobs("results").open("ranges");
        const into = Buffer.alloc(len);
        await r?.read(into, at);
        expect(into.equals(bytes.subarray(at, at + len)), `range ${at}+${len}`).toBe(true);
      }
      // Replaced through the other store: b caches stats, and hears of the change by NOTIFY (as
      // its document mirrors do); a reader it opens then reads the new bytes, never cached old ones.
      const w2 = await a.blobs("results").create("ranges");
      await w2.write([Buffer.from("replaced")]);
      await w2.commit();
      await until(async () => (await b.blobs("results").stat("ranges"))?.version !== st.version, "the other store to hear of the replacement");
      const fresh = await b.blobs("results").open("ranges");
      const into = Buffer.alloc(8);
      await fresh?.read(into, 0);
      expect(into.toString()).toBe("replaced");
      // Removed through the other store: b hears of that too.
      expect(await a.blobs("results").remove("ranges")).toBe(true);
      await until(async () => (await b.blobs("results").stat("ranges")) === undefined, "the other store to hear of the removal");
      // The old version's chunks went with the commit.
      const left = await a.db.query<{ n: string }>("SELECT count(*)::text AS n FROM mcphub_blob_chunks WHERE key = 'ranges' AND version = $1", [st.version]);
      expect(left[0]?.n).toBe("0");
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("blobs: past 10 MiB, where chunk offsets gain a digit, a range read across the boundary keeps chunk order", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    // An offset compared or sorted as text puts 10485760 before 2097152; a result over 10 MiB
    // would then read its chunks out of order ("changed while it was read"). Every byte differs
    // from its neighbours, so a chunk out of place shows.
    const a = (await open("postgres")) as PgStore;
    try {
      const bytes = Buffer.alloc(11 * (1 << 20) + 5);
      for (let i = 0; i + 4 <= bytes.length; i += 4) bytes.writeUInt32LE(i, i);
      const w = await a.blobs("results").create("big");
      await w.write([bytes]);
      await w.commit();
      for (const [at, len] of [[(10 << 20) - 100, 300], [(9 << 20) - 7, (2 << 20) + 9], [bytes.length - 5, 5]] as const) {
        const r = await a.blobs("results").open("big");
        const into = Buffer.alloc(len);
        await r?.read(into, at);
        expect(into.equals(bytes.subarray(at, at + len)), `range ${at}+${len}`).toBe(true);
      }
      expect(await a.blobs("results").remove("big")).toBe(true);
    } finally {
      await a.close();
    }
  });

  it("blobs: an aborted writer, or one whose store went down, leaves no chunks behind", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const a = (await open("postgres")) as PgStore;
    try {
      const w = await a.blobs("results").create("aborted");
      await w.write([Buffer.alloc(3 << 20, 7)]);
      await w.abort();
      const rows = await a.db.query<{ n: string }>("SELECT count(*)::text AS n FROM mcphub_blob_chunks WHERE key = 'aborted'");
      expect(rows[0]?.n).toBe("0");
      expect(await a.blobs("results").stat("aborted")).toBeUndefined();
    } finally {
      await a.close();
    }
  });

  it("migrations apply once when replicas start together, and status lists them", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const url = pg.url.replace(/\/mcphub$/, "/postgres").replace("mcphub@", "postgres@");
    const admin = await PgStore.open({ url, follow: false, migrate: false }).catch(() => undefined);
    // A fresh database for this case, so it starts from an empty schema.
    const db = `fresh_${Date.now()}`;
    await admin?.db.query(`CREATE DATABASE ${db} OWNER mcphub`);
    await admin?.close();
    const freshUrl = pg.url.replace(/\/mcphub$/, `/${db}`);
    const stores = await Promise.all(Array.from({ length: 4 }, () => PgStore.open({ url: freshUrl, follow: false })));
    try {
      const state = await (stores[0] as PgStore).schema();
      expect(state.applied.map((m) => m.version)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(state.pending).toEqual([]);
      // A store newer than this build is refused with a message that says what to do.
      await (stores[0] as PgStore).db.query("INSERT INTO mcphub_schema (version, name) VALUES (9999, 'future')");
      await expect(PgStore.open({ url: freshUrl, follow: false })).rejects.toThrow(/newer than this mcphub knows.*upgrade mcphub/);
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it("PostgreSQL restarting: calls fail with a clear error meanwhile and the store recovers, mirrors included", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const a = await open("postgres");
    const b = await open("postgres");
    try {
      await a.docs("definitions").put("srv", Buffer.from("before"));
      pg.stop();
      const err = await a.docs("detached").get("x").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect(String((err as Error).message)).toMatch(/cannot be reached/);
      expect(String((err as Error).message)).not.toMatch(/password/i);
      await until(() => !b.health().following, "the follower to notice");
      // The probe says so in a few words, fast, without throwing (what /healthz shows).
      const down = await a.probe(1000);
      expect(down).toMatchObject({ kind: "postgres", reachable: false });
      expect(down.reason).toMatch(/^PostgreSQL cannot be reached \(/);
      expect(down.latency_ms).toBeLessThan(1500);
      pg.start();
      await until(async () => (await a.docs("detached").get("x").then(() => true, () => false)), "queries to work again");
      await until(() => b.health().following, "the follower to reconnect");
      await a.docs("definitions").put("srv", Buffer.from("after"));
      await until(() => b.docs("definitions").mirror().peek("srv")?.bytes().toString() === "after", "the mirror to follow again");
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);
});
