// `mcphub store import|export` underneath: copyStore between the data directory's files and a real
// PostgreSQL (a private server). Files → PostgreSQL → files gives the same files byte for byte,
// with their modification times; a re-run copies nothing; a target that holds something else is
// refused (nothing written), merged (what differs is kept) or replaced (an exact copy); a day of
// records cut short is completed; a vault key kept in a key file is re-wrapped with the
// passphrase, unwrapping to the same data key. Skips with the reason when PostgreSQL cannot start.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyStore, fileStore, KeyMismatchError, openStore, TargetNotEmptyError, type Store } from "../../../src/store/index.js";
import { keyringCopyCodec, openKeyring } from "../../../src/vault/keys.js";
import { startPostgres, type Postgres } from "../../helpers/postgres.js";

let pg: Postgres | undefined;
let skip = "";
const dirs: string[] = [];
const PASS = { MCPHUB_VAULT_PASSPHRASE: "copy-test-passphrase", MCPHUB_KEYCHAIN: "off" };
const NO_PASS = { MCPHUB_KEYCHAIN: "off" };

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
  const d = mkdtempSync(join(tmpdir(), "mcphub-copy-"));
  dirs.push(d);
  return d;
}

/** A fresh database per test, so each starts from an empty store. */
let dbs = 0;
async function emptyPg(): Promise<Store> {
  if (!pg) throw new Error(skip);
  const name = `copy${++dbs}`;
  // As the superuser (trust on loopback in the private cluster), the database owned by mcphub.
  const pgmod = (await import("pg")).default;
  const admin = new pgmod.Client({ connectionString: pg.url.replace("//mcphub@", "//postgres@").replace(/\/mcphub$/, "/postgres") });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} OWNER mcphub`);
  await admin.end();
  return openStore({ dataDir: tempDir(), url: pg.url.replace(/\/mcphub$/, `/${name}`), follow: false });
}

/** A data directory with every kind of shared state, written through the store as the parts write it. */
async function populated(env: NodeJS.ProcessEnv = PASS): Promise<string> {
  const dir = tempDir();
  const s = fileStore(dir);
  await openKeyring(dir, env); // vault/keyring.json (passphrase- or key-file-wrapped)
  await s.docs("tokens").put("tokens", Buffer.from(JSON.stringify({ version: 1, tokens: [{ id: "tok_1", agent: "alpha", hash: "ab".repeat(32) }] })));
  await s.docs("definitions").put("rec", Buffer.from('{"tools":{}}\n'));
  await s.docs("catalog").put("rec", Buffer.from('{"fingerprint":"x","tools":[]}\n'));
  await s.docs("detached").put("call_1", randomBytes(300));
  await s.docs("oauth").put("oauth", randomBytes(500));
  // A stored result over several 1 MiB chunks, as sealed bytes (the copy never looks inside).
  const w = await s.blobs("results").create("call_big");
  await w.write([randomBytes(2_500_000)]);
  await w.commit();
  const day = Date.UTC(2026, 10, 30);
  const log = s.log();
  await log.append("calls-2026-11-30.ndjson", Array.from({ length: 1500 }, (_, i) => `${JSON.stringify({ ts: day + i, tool: "rec__big", n: i })}\n`));
  await log.append("audit-2026-11-30.ndjson", [`${JSON.stringify({ ts: day, event: "approved" })}\n`]);
  await log.close();
  // An old modification time: retention ages must survive the copy.
  await s.setModified("blobs", "results", "call_big", Date.UTC(2026, 10, 29, 12));
  return dir;
}

/** Every file of the shared state under a data directory: path → bytes and mtime (ms). */
function shared(dir: string): Map<string, { bytes: string; mtime: number }> {
  const out = new Map<string, { bytes: string; mtime: number }>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!e.name.endsWith(".lock") && e.name !== "master.key") out.set(relative(dir, p), { bytes: readFileSync(p).toString("base64"), mtime: Math.floor(statSync(p).mtimeMs) });
    }
  };
  walk(dir);
  return out;
}

const total = (r: Awaited<ReturnType<typeof copyStore>>, k: "copied" | "same" | "kept" | "removed") => r.rows.reduce((n, x) => n + x[k], 0);

describe("copying a data directory into PostgreSQL and back", () => {
  it("files → PostgreSQL → files: the same files byte for byte, with their modification times; a re-run copies nothing", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const src = await populated();
    const db = await emptyPg();
    const out = tempDir();
    try {
      const imported = await copyStore(fileStore(src), db, { codec: keyringCopyCodec({ sourceDir: src, targetDir: tempDir(), shared: true, env: PASS }) });
      expect(Object.fromEntries(imported.rows.map((r) => [r.space, r.copied]))).toEqual({ keyring: 1, tokens: 1, definitions: 1, catalog: 1, detached: 1, oauth: 1, results: 1, calls: 1500, audit: 1 });
      const exported = await copyStore(db, fileStore(out), { codec: keyringCopyCodec({ sourceDir: tempDir(), targetDir: out, shared: false, env: PASS }) });
      expect(total(exported, "copied")).toBe(total(imported, "copied"));
      const a = shared(src);
      const b = shared(out);
      expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
      for (const [path, f] of a) {
        expect(b.get(path)?.bytes === f.bytes, `${path} differs`).toBe(true);
        // PostgreSQL keeps whole milliseconds; a float mtime may round either way of one. (A day
        // of records is kept by its name's day, not its mtime, so telemetry files are written now.)
        if (!path.startsWith("telemetry")) expect(Math.abs((b.get(path)?.mtime ?? 0) - f.mtime), `${path} mtime`).toBeLessThanOrEqual(1);
      }
      // Idempotent: again, and nothing is written.
      const again = await copyStore(fileStore(src), db, { codec: keyringCopyCodec({ sourceDir: src, targetDir: tempDir(), shared: true, env: PASS }) });
      expect(total(again, "copied")).toBe(0);
      expect(total(again, "same")).toBe(total(imported, "copied"));
    } finally {
      await db.close();
    }
  }, 60_000);

  it("a target holding something else is refused with nothing written; --merge keeps what differs; --force makes an exact copy", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const src = await populated();
    const db = await emptyPg();
    const codec = keyringCopyCodec({ sourceDir: src, targetDir: tempDir(), shared: true, env: PASS });
    try {
      await copyStore(fileStore(src), db, { codec });
      await db.docs("definitions").put("rec", Buffer.from('{"tools":{"changed":true}}\n'));
      await db.docs("catalog").put("other", Buffer.from("{}"));
      await fileStore(src).docs("detached").put("call_new", Buffer.from("new"));
      const refused = await copyStore(fileStore(src), db, { codec }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(TargetNotEmptyError);
      expect((refused as Error).message).toMatch(/not empty: 1 entry differs from the source \(definitions\/rec\); 1 entry is not in the source \(catalog\/other\)\. Nothing was written\. Use --merge .* or --force/);
      expect(await db.docs("detached").get("call_new")).toBeUndefined();

      const merged = await copyStore(fileStore(src), db, { mode: "merge", codec });
      expect(merged.rows.find((r) => r.space === "detached")?.copied).toBe(1);
      expect(merged.rows.find((r) => r.space === "definitions")?.kept).toBe(1);
      expect((await db.docs("definitions").get("rec"))?.bytes.toString()).toContain("changed");
      expect(await db.docs("catalog").get("other")).toBeDefined();

      const forced = await copyStore(fileStore(src), db, { mode: "replace", codec });
      expect(forced.rows.find((r) => r.space === "catalog")?.removed).toBe(1);
      expect((await db.docs("definitions").get("rec"))?.bytes.toString()).toBe('{"tools":{}}\n');
      expect(await db.docs("catalog").get("other")).toBeUndefined();
    } finally {
      await db.close();
    }
  }, 60_000);

  it("a day of records cut short (an interrupted import) is completed, not refused or doubled", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const src = await populated();
    const db = await emptyPg();
    try {
      const log = db.log();
      const first = readFileSync(join(src, "telemetry", "calls-2026-11-30.ndjson"), "utf8").split(/(?<=\n)/).slice(0, 700);
      await log.append("calls-2026-11-30.ndjson", first);
      const r = await copyStore(fileStore(src), db, { codec: keyringCopyCodec({ sourceDir: src, targetDir: tempDir(), shared: true, env: PASS }) });
      const calls = r.rows.find((x) => x.space === "calls");
      expect(calls).toMatchObject({ source: 1500, same: 700, copied: 800 });
      const seg = (await log.segments("calls"))[0];
      let text = "";
      for await (const b of seg?.read(0) ?? []) text += b.text;
      expect(text).toBe(readFileSync(join(src, "telemetry", "calls-2026-11-30.ndjson"), "utf8"));
    } finally {
      await db.close();
    }
  }, 60_000);

  it("a key-file vault key is re-wrapped with the passphrase (same data key); without one the import says what to set", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const src = await populated(NO_PASS); // vault/master.key wraps the data key
    const db = await emptyPg();
    try {
      const refused = await copyStore(fileStore(src), db, { codec: keyringCopyCodec({ sourceDir: src, targetDir: tempDir(), shared: true, env: NO_PASS }) }).catch((e: unknown) => e);
      expect((refused as Error).message).toMatch(/wrapped by its key file .*master\.key.*set MCPHUB_VAULT_PASSPHRASE/);
      expect(await db.docs("keyring").get("keyring")).toBeUndefined();
      const codec = keyringCopyCodec({ sourceDir: src, targetDir: tempDir(), shared: true, env: { ...NO_PASS, ...PASS } });
      await copyStore(fileStore(src), db, { codec });
      const local = await openKeyring(src, NO_PASS);
      const team = await openKeyring(tempDir(), PASS, db);
      expect(team.status.source).toBe("passphrase");
      expect(team.dataKey.equals(local.dataKey)).toBe(true);
      // The re-wrapped keyring's bytes differ from the source's, and a re-run still sees them as one.
      expect(total(await copyStore(fileStore(src), db, { codec }), "copied")).toBe(0);
      // Into a store with another data key: refused whatever the mode short of --force.
      const other = await populated();
      const mismatch = await copyStore(fileStore(other), db, { mode: "merge", codec: keyringCopyCodec({ sourceDir: other, targetDir: tempDir(), shared: true, env: PASS }) }).catch((e: unknown) => e);
      expect(mismatch).toBeInstanceOf(KeyMismatchError);
    } finally {
      await db.close();
    }
  }, 60_000);
});
