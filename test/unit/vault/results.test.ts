import { randomBytes, randomInt } from "node:crypto";
import { open, readFile, readdir, rename, truncate, writeFile, appendFile, copyFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { CursorOutOfRangeError, ResultNotFoundError, ResultStore, VaultTamperedError } from "../../../src/vault/index.js";
import { PREFIX_BYTES, CHUNK_OVERHEAD } from "../../../src/vault/chunkfile.js";
import { modeOf, removeTempDirs, tempDataDir, vaultEnv } from "./helpers.js";

const HOUR = 3_600_000;
const META = { server: "files", tool: "read_file", namespaced: "files__read_file", agent: "claude" };

afterAll(removeTempDirs);
afterEach(() => {
  vi.useRealTimers();
});

async function openStore(opts: { chunkSize?: number; retentionMs?: number; dataDir?: string } = {}) {
  const dataDir = opts.dataDir ?? (await tempDataDir());
  const store = await ResultStore.open({
    dataDir,
    retentionMs: opts.retentionMs ?? HOUR,
    env: vaultEnv(dataDir),
    ...(opts.chunkSize ? { chunkSize: opts.chunkSize } : {}),
  });
  return { store, dataDir, resultsDir: join(dataDir, "vault", "results") };
}

/** Reads a whole result back page by page. */
async function reassemble(store: ResultStore, callId: string, pageSize: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let cursor = 0;
  for (;;) {
    const { meta, data } = await store.read(callId, cursor, pageSize);
    parts.push(data);
    cursor += data.length;
    if (cursor >= meta.totalBytes) break;
    expect(data.length).toBe(pageSize);
  }
  return Buffer.concat(parts);
}

/** A random string mixing 1-, 2-, 3- and 4-byte UTF-8 characters (no lone surrogates). */
function randomUtf8(units: number): string {
  const alphabet = ["a", "Z", "0", " ", "\n", '"', "é", "ß", "ж", "中", "€", "😀", "🚀", "𝄞", "👩‍💻"];
  const parts: string[] = [];
  let length = 0;
  while (length < units) {
    const s = alphabet[randomInt(alphabet.length)]!;
    parts.push(s);
    length += s.length;
  }
  return parts.join("");
}

describe("ResultStore round trips", () => {
  it.each([
    ["empty", ""],
    ["one byte", "x"],
    ["exactly one chunk", "a".repeat(64 * 1024)],
    ["one chunk plus one byte", "a".repeat(64 * 1024 + 1)],
    ["emoji across the chunk boundary", `${"a".repeat(64 * 1024 - 2)}😀${"b".repeat(10)}`],
    ["emoji across the encoder's slice boundary", `${"a".repeat(16 * 1024 - 1)}😀${"é".repeat(16 * 1024)}`],
  ])("%s", async (_name, text) => {
    const { store } = await openStore();
    const meta = await store.put(META, text);
    const expected = Buffer.from(text, "utf8");
    expect(meta.totalBytes).toBe(expected.length);
    const { data } = await store.read(meta.callId, 0, expected.length + 10);
    expect(data.equals(expected)).toBe(true);
    expect((await reassemble(store, meta.callId, 8192)).equals(expected)).toBe(true);
  });

  it("stores 5 MB of random UTF-8 byte-exactly and pages it back from any cursor", async () => {
    const { store } = await openStore();
    const text = randomUtf8(2_800_000);
    const expected = Buffer.from(text, "utf8");
    expect(expected.length).toBeGreaterThan(5_000_000);
    const meta = await store.put({ ...META, mediaType: "application/json", isError: false }, text);
    expect(meta).toMatchObject({ ...META, kind: "result", totalBytes: expected.length, isError: false });
    expect(meta.callId).toMatch(/^[0-9a-f]{32}$/);
    expect((await reassemble(store, meta.callId, 8192)).equals(expected)).toBe(true);
    expect((await reassemble(store, meta.callId, 100_003)).equals(expected)).toBe(true);
    for (let i = 0; i < 50; i++) {
      const cursor = randomInt(expected.length + 1);
      const length = randomInt(200_000);
      const { data } = await store.read(meta.callId, cursor, length);
      expect(data.equals(expected.subarray(cursor, cursor + length))).toBe(true);
    }
  });

  it("stores binary payloads and a caller-chosen callId and kind", async () => {
    const { store } = await openStore({ chunkSize: 1000 });
    const bytes = randomBytes(10_500);
    const meta = await store.put({ ...META, callId: "detached-1", kind: "detached", mediaType: "application/octet-stream" }, bytes);
    expect(meta).toMatchObject({ callId: "detached-1", kind: "detached", mediaType: "application/octet-stream", totalBytes: 10_500 });
    expect((await reassemble(store, "detached-1", 333)).equals(bytes)).toBe(true);
    // Bytes that are not a JSON object are stored all the same, with an empty text view.
    const { view, ...stored } = meta;
    expect(view).toEqual({ source: "none", chars: 0, lines: 0, kinds: {}, blocks: 0 });
    expect(await store.meta("detached-1")).toEqual(stored);
  });

  it("treats cursor == total as an empty final page and past it as out of range, with metadata", async () => {
    const { store } = await openStore();
    const meta = await store.put(META, "hello");
    const last = await store.read(meta.callId, 5, 100);
    expect(last.data.length).toBe(0);
    const err = await store.read(meta.callId, 6, 100).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CursorOutOfRangeError);
    expect((err as CursorOutOfRangeError<typeof meta>).meta).toMatchObject({ server: "files", tool: "read_file" });
    await expect(store.read(meta.callId, -1, 10)).rejects.toThrow(RangeError);
  });

  it("reports unknown ids as undefined (meta) or ResultNotFoundError (read), and rejects path-like ids", async () => {
    const { store } = await openStore();
    expect(await store.meta("0".repeat(32))).toBeUndefined();
    expect(await store.meta("../keyring")).toBeUndefined();
    await expect(store.read("0".repeat(32), 0, 10)).rejects.toBeInstanceOf(ResultNotFoundError);
    await expect(store.put({ ...META, callId: "../../etc/x" }, "x")).rejects.toThrow(/invalid callId/);
  });

  it("is readable by another store on the same data dir (survives a restart)", async () => {
    const { store, dataDir } = await openStore();
    const meta = await store.put(META, "persisted ✓");
    const reopened = await ResultStore.open({ dataDir, retentionMs: HOUR, env: vaultEnv(dataDir) });
    expect((await reopened.read(meta.callId, 0, 100)).data.toString("utf8")).toBe("persisted ✓");
  });

  it("writes 0600 files in 0700 directories and leaves no temp files", async () => {
    const { store, dataDir, resultsDir } = await openStore();
    const meta = await store.put(META, "x".repeat(100_000));
    expect(await modeOf(join(dataDir, "vault"))).toBe(0o700);
    expect(await modeOf(resultsDir)).toBe(0o700);
    expect(await modeOf(join(resultsDir, `${meta.callId}.res`))).toBe(0o600);
    expect(await modeOf(join(dataDir, "vault", "keyring.json"))).toBe(0o600);
    expect(await modeOf(join(dataDir, "vault", "master.key"))).toBe(0o600);
    expect(await readdir(resultsDir)).toEqual([`${meta.callId}.res`]);
  });

  it("does not store the plaintext anywhere under the data dir", async () => {
    const { store, dataDir } = await openStore();
    const canary = `CANARY-${randomBytes(8).toString("hex")}`;
    await store.put(META, `{"content":[{"type":"text","text":"${canary}"}]}`);
    const { allFiles } = await import("./helpers.js");
    for (const file of await allFiles(dataDir)) expect((await readFile(file)).includes(canary)).toBe(false);
  });
});

describe("ResultStore tamper detection", () => {
  const CHUNK = 1024;

  /** Offsets of chunk i in a result file. */
  async function layout(path: string) {
    const bytes = await readFile(path);
    const headerLength = bytes.readUInt32BE(PREFIX_BYTES - 4);
    const chunksAt = PREFIX_BYTES + headerLength;
    return { bytes, headerStart: PREFIX_BYTES, chunksAt, chunk: (i: number) => chunksAt + i * (CHUNK + CHUNK_OVERHEAD) };
  }

  async function twoResults() {
    const opened = await openStore({ chunkSize: CHUNK });
    const a = await opened.store.put(META, "A".repeat(CHUNK * 5));
    const b = await opened.store.put(META, "B".repeat(CHUNK * 5));
    const pathA = join(opened.resultsDir, `${a.callId}.res`);
    const pathB = join(opened.resultsDir, `${b.callId}.res`);
    // A fresh store for each check: nothing cached from the honest reads.
    const fresh = () => ResultStore.open({ dataDir: opened.dataDir, retentionMs: HOUR, env: vaultEnv(opened.dataDir), chunkSize: CHUNK });
    return { ...opened, a, b, pathA, pathB, fresh };
  }

  async function expectTampered(promise: Promise<unknown>) {
    const outcome = await promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    expect(outcome).not.toHaveProperty("value");
    expect((outcome as { error: unknown }).error).toBeInstanceOf(VaultTamperedError);
  }

  it("a flipped ciphertext byte fails the page that covers it", async () => {
    const t = await twoResults();
    const { bytes, chunk } = await layout(t.pathA);
    bytes[chunk(2) + 40]! ^= 0x01;
    await writeFile(t.pathA, bytes);
    const store = await t.fresh();
    await expectTampered(store.read(t.a.callId, 2 * CHUNK, 10));
    await expectTampered(store.read(t.a.callId, 0, 5 * CHUNK));
  });

  it("a flipped tag or nonce byte fails", async () => {
    const t = await twoResults();
    const { bytes, chunk } = await layout(t.pathA);
    bytes[chunk(1)]! ^= 0x80; // nonce
    bytes[chunk(3) + CHUNK + CHUNK_OVERHEAD - 1]! ^= 0x01; // tag
    await writeFile(t.pathA, bytes);
    const store = await t.fresh();
    await expectTampered(store.read(t.a.callId, CHUNK, 1));
    await expectTampered(store.read(t.a.callId, 3 * CHUNK, 1));
  });

  it("swapping two chunks within a result fails", async () => {
    const t = await twoResults();
    const { bytes, chunk } = await layout(t.pathA);
    const stride = CHUNK + CHUNK_OVERHEAD;
    const one = Buffer.from(bytes.subarray(chunk(1), chunk(1) + stride));
    bytes.copy(bytes, chunk(1), chunk(2), chunk(2) + stride);
    one.copy(bytes, chunk(2));
    await writeFile(t.pathA, bytes);
    const store = await t.fresh();
    await expectTampered(store.read(t.a.callId, CHUNK, 10));
    await expectTampered(store.read(t.a.callId, 2 * CHUNK, 10));
  });

  it("moving a chunk from one result into another fails", async () => {
    const t = await twoResults();
    const a = await layout(t.pathA);
    const b = await layout(t.pathB);
    const stride = CHUNK + CHUNK_OVERHEAD;
    a.bytes.copy(b.bytes, b.chunk(1), a.chunk(1), a.chunk(1) + stride);
    await writeFile(t.pathB, b.bytes);
    await expectTampered((await t.fresh()).read(t.b.callId, CHUNK, 10));
  });

  it("altered metadata (header byte, salt byte, or another result's header) fails", async () => {
    const t = await twoResults();
    const a = await layout(t.pathA);
    const header = Buffer.from(a.bytes);
    header[a.headerStart + 20]! ^= 0x01;
    await writeFile(t.pathA, header);
    await expectTampered((await t.fresh()).meta(t.a.callId));

    const salt = Buffer.from(a.bytes);
    salt[10]! ^= 0x01;
    await writeFile(t.pathA, salt);
    await expectTampered((await t.fresh()).meta(t.a.callId));

    // B's header + A's chunks: header authenticates for B's callId only.
    const b = await layout(t.pathB);
    await writeFile(t.pathA, Buffer.concat([b.bytes.subarray(0, b.chunksAt), a.bytes.subarray(a.chunksAt)]));
    await expectTampered((await t.fresh()).meta(t.a.callId));
  });

  it("a result file renamed to another callId fails", async () => {
    const t = await twoResults();
    await rename(t.pathA, t.pathB);
    await expectTampered((await t.fresh()).meta(t.b.callId));
  });

  it("truncation and extension fail", async () => {
    const t = await twoResults();
    const { bytes, chunk } = await layout(t.pathA);
    await truncate(t.pathA, chunk(4));
    await expectTampered((await t.fresh()).read(t.a.callId, 0, 10));
    await writeFile(t.pathA, bytes);
    await appendFile(t.pathA, Buffer.alloc(CHUNK + CHUNK_OVERHEAD));
    await expectTampered((await t.fresh()).read(t.a.callId, 0, 10));
    // Honest bytes restored: readable again.
    await writeFile(t.pathA, bytes);
    expect((await (await t.fresh()).read(t.a.callId, 0, 3)).data.toString()).toBe("AAA");
  });

  it("a file modified in place after a read is not served from the cache", async () => {
    const t = await twoResults();
    const store = await t.fresh();
    expect((await store.read(t.a.callId, 0, 3)).data.toString()).toBe("AAA");
    const { chunk } = await layout(t.pathA);
    const handle = await open(t.pathA, "r+");
    const one = Buffer.alloc(1);
    await handle.read(one, 0, 1, chunk(0) + 20);
    one[0]! ^= 0x01;
    await handle.write(one, 0, 1, chunk(0) + 20);
    await handle.close();
    // Keep the mtime moving even on coarse-grained file systems.
    const { utimes } = await import("node:fs/promises");
    await utimes(t.pathA, new Date(), new Date(Date.now() + 5000));
    await expectTampered(store.read(t.a.callId, 0, 3));
  });

  it("a result written under another vault's key does not authenticate", async () => {
    const t = await twoResults();
    const other = await openStore({ chunkSize: CHUNK });
    await copyFile(t.pathA, join(other.resultsDir, `${t.a.callId}.res`));
    await expectTampered(other.store.meta(t.a.callId));
  });
});

describe("ResultStore retention", () => {
  it("expired results are invisible and pruned by prune(), on open, and on put", async () => {
    const { store, dataDir, resultsDir } = await openStore({ retentionMs: 60_000 });
    const old = await store.put(META, "old");
    expect(old.expires).toBe(old.created + 60_000);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(old.expires);
    expect(await store.meta(old.callId)).toBeUndefined();
    await expect(store.read(old.callId, 0, 10)).rejects.toBeInstanceOf(ResultNotFoundError);
    expect(await store.prune()).toBe(1);
    expect(await readdir(resultsDir)).toEqual([]);

    // On open.
    const second = await store.put(META, "second");
    vi.setSystemTime(second.expires + 1);
    await ResultStore.open({ dataDir, retentionMs: 60_000, env: vaultEnv(dataDir) });
    expect(await readdir(resultsDir)).toEqual([]);

    // Opportunistically on put (the last prune was a retention window ago).
    const third = await store.put(META, "third");
    vi.setSystemTime(third.expires + 60_000);
    const fourth = await store.put(META, "fourth");
    expect(await readdir(resultsDir)).toEqual([`${fourth.callId}.res`]);
  });

  it("prune(now) leaves live results alone and counts what it removed", async () => {
    const { store } = await openStore({ retentionMs: 60_000 });
    const a = await store.put(META, "a");
    expect(await store.prune(a.created + 59_999)).toBe(0);
    expect(await store.meta(a.callId)).toBeDefined();
    expect(await store.stats(a.created)).toMatchObject({ count: 1, bytes: 1 });
    expect(await store.prune(a.created + 60_000)).toBe(1);
  });

  it("rejects a non-positive retention", async () => {
    const dataDir = await tempDataDir();
    await expect(ResultStore.open({ dataDir, retentionMs: 0, env: vaultEnv(dataDir) })).rejects.toThrow(/retention/);
  });
});
