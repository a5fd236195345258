// The result store: oversized tool results, encrypted at rest in fixed-size chunks (see
// chunkfile.ts), one blob per callId in the store's `results` space (vault/results/<callId>.res on
// the files; rows of 1 MiB parts in PostgreSQL, which sees only ciphertext). A page decrypts only
// the chunks it covers, so memory stays flat however large the result. A blob appears whole or not
// at all, so several gateway processes (and replicas) can write and read at once; expired results
// are invisible and pruned on open, opportunistically on put, and by prune().
import { randomBytes } from "node:crypto";
import { BlobChangedError, FileBlobs, storeOf, type BlobStat, type Blobs, type ByteSource, type Store } from "../store/index.js";
import { ChunkReader, ChunkWriter, FormatError, gatherRange, type ResultHeader } from "./chunkfile.js";
import { CursorOutOfRangeError, VaultLockedError, VaultTamperedError } from "./errors.js";
import { STALE_TEMP_MS } from "./fsutil.js";
import { openKeyring, type KeyStatus, type Keyring } from "./keys.js";
import { encodeUtf8InSlices } from "./utf8slices.js";
import { ResultScanner } from "./textview/scan.js";
import { decodeView, emptyView, encodeView, summarize, type ViewIndex, type ViewSummary } from "./textview/types.js";
import type { StoredBytes } from "./textview/reader.js";
import { runFind, type FindOutcome } from "./textview/find-runner.js";
import type { FindJob } from "./textview/find.js";

export { CursorOutOfRangeError, VaultLockedError, VaultTamperedError };

export interface ResultMeta {
  callId: string;
  server: string;
  /** The downstream (wire) tool name. */
  tool: string;
  /** The public name, `server__tool`. */
  namespaced: string;
  /** Opaque owner tag (the agent whose scope may read it). */
  agent: string;
  /** "reply": one of the gateway's own replies, stored because it was over the budget. */
  kind: "result" | "detached" | "reply";
  mediaType: string;
  created: number;
  expires: number;
  totalBytes: number;
  isError?: boolean;
}

export interface PutMeta {
  server: string;
  tool: string;
  namespaced: string;
  agent: string;
  kind?: "result" | "detached" | "reply";
  mediaType?: string;
  isError?: boolean;
  callId?: string;
}

/** What put() returns: the metadata, and what the stored result's text view holds. */
export interface StoredMeta extends ResultMeta {
  view: ViewSummary;
}

/**
 * A payload produced piece by piece (well-formed strings, e.g. from jsonPieces), with its UTF-8
 * size known in advance: lets a 200 MB result be stored without a second full-size copy.
 */
export interface StreamedPayload {
  pieces: Iterable<string>;
  totalBytes: number;
}

/** read() of a callId that is unknown or expired. */
export class ResultNotFoundError extends Error {
  constructor(callId: string) {
    super(`no stored result ${callId} (unknown or expired)`);
    this.name = "ResultNotFoundError";
  }
}

export interface ResultStoreOptions {
  dataDir: string;
  /** Where the results are kept (default: the data directory's files). */
  store?: Store;
  retentionMs: number;
  env?: NodeJS.ProcessEnv;
  /** An already-opened keyring (saves a second scrypt run when a process opens several stores). */
  keyring?: Keyring;
  /** Plaintext bytes per chunk (default 64 KiB). Recorded per file; readers follow the file. */
  chunkSize?: number;
}

export const DEFAULT_CHUNK_SIZE = 64 * 1024;
const CALL_ID = /^[A-Za-z0-9_-]{1,128}$/;
const HEADER_CACHE_ENTRIES = 64;
const CHUNK_CACHE_ENTRIES = 4;

/** A 32-hex-character random callId (16 random bytes), as receipts use. */
export function newCallId(): string {
  return randomBytes(16).toString("hex");
}

function toMeta(h: ResultHeader): ResultMeta {
  const meta: ResultMeta = {
    callId: h.callId,
    server: h.server,
    tool: h.tool,
    namespaced: h.namespaced,
    agent: h.agent,
    kind: h.kind,
    mediaType: h.mediaType,
    created: h.created,
    expires: h.expires,
    totalBytes: h.totalBytes,
  };
  if (h.isError !== undefined) meta.isError = h.isError;
  return meta;
}

function tampered(callId: string, err: Error): VaultTamperedError {
  return new VaultTamperedError(`stored result ${callId} failed authentication (${err.message}); it was altered or is corrupt`);
}

export class ResultStore {
  private readonly blobs: Blobs;
  private lastPrune = 0;
  /** Authenticated headers by callId; avoids re-decrypting the header on every page. */
  private readonly readers = new Map<string, { reader: ChunkReader; identity: BlobStat }>();
  /** The last few decrypted chunks: sequential small pages reuse a chunk instead of re-decrypting. */
  private readonly chunks: { reader: ChunkReader; index: number; plain: Buffer }[] = [];
  /** View indexes by the reader (so a replaced blob gets its own). */
  private readonly views = new WeakMap<ChunkReader, Promise<ViewIndex>>();

  private constructor(
    private readonly dataKey: Buffer,
    private readonly status: KeyStatus,
    store: Store,
    private readonly retentionMs: number,
    private readonly chunkSize: number,
  ) {
    this.blobs = store.blobs("results");
  }

  static async open(opts: ResultStoreOptions): Promise<ResultStore> {
    if (!Number.isFinite(opts.retentionMs) || opts.retentionMs <= 0) {
      throw new Error(`result retention must be a positive duration, got ${opts.retentionMs} ms`);
    }
    const chunkSize = opts.chunkSize ?? DEFAULT_CHUNK_SIZE;
    if (!Number.isInteger(chunkSize) || chunkSize < 16 || chunkSize > 16 * 1024 * 1024) {
      throw new Error(`chunk size must be an integer between 16 B and 16 MiB, got ${chunkSize}`);
    }
    const store = storeOf(opts.store ?? opts.dataDir);
    const keyring = opts.keyring ?? (await openKeyring(opts.dataDir, opts.env ?? process.env, opts.store));
    const results = new ResultStore(keyring.dataKey, keyring.status, store, opts.retentionMs, chunkSize);
    if (results.blobs instanceof FileBlobs) await results.blobs.prepare();
    await results.prune();
    return results;
  }

  keyStatus(): KeyStatus {
    return { ...this.status };
  }

  /**
   * Stores `payload` (a string is stored as its UTF-8 bytes) and returns its metadata. A string is
   * encoded slice by slice straight into encrypted chunks: no second full-size copy is made. The
   * bytes are indexed for the text view on the way (textview/scan.ts) and the index is sealed
   * after them.
   */
  async put(meta: PutMeta, payload: string | Uint8Array | StreamedPayload): Promise<StoredMeta> {
    const callId = meta.callId ?? newCallId();
    if (!CALL_ID.test(callId)) throw new Error(`invalid callId ${JSON.stringify(callId.slice(0, 40))}: use 1-128 letters, digits, "_" or "-"`);
    const totalBytes =
      typeof payload === "string" ? Buffer.byteLength(payload, "utf8") : payload instanceof Uint8Array ? payload.byteLength : payload.totalBytes;
    const created = Date.now();
    const header: ResultHeader = {
      v: 2,
      callId,
      server: meta.server,
      tool: meta.tool,
      namespaced: meta.namespaced,
      agent: meta.agent,
      kind: meta.kind ?? "result",
      mediaType: meta.mediaType ?? "application/json",
      created,
      expires: created + this.retentionMs,
      totalBytes,
      chunkSize: this.chunkSize,
      chunkCount: Math.ceil(totalBytes / this.chunkSize),
    };
    if (meta.isError !== undefined) header.isError = meta.isError;

    const out = await this.blobs.create(callId);
    const index = new SafeScanner();
    let view: ViewIndex;
    try {
      const writer = await ChunkWriter.start(out, this.dataKey, header);
      const sink = (bytes: Uint8Array) => {
        index.feed(bytes);
        return writer.push(bytes);
      };
      if (typeof payload === "string") {
        await encodeUtf8InSlices(payload, sink);
      } else if (payload instanceof Uint8Array) {
        await sink(payload);
      } else {
        let written = 0;
        for (const piece of payload.pieces) written += await encodeUtf8InSlices(piece, sink);
        if (written !== totalBytes) throw new Error(`streamed payload was ${written} bytes, announced ${totalBytes}`);
      }
      view = index.finish();
      await writer.finish(encodeView(view));
      await out.commit();
    } catch (err) {
      await out.abort().catch(() => undefined);
      throw err;
    }
    this.forget(callId);
    await this.maybePrune(created);
    return { ...toMeta(header), view: summarize(view) };
  }

  /**
   * The view index of a live result. Results stored before indexes existed are indexed on first
   * use by reading them once (kept for the life of the process). Throws like read().
   */
  async view(callId: string): Promise<ViewIndex> {
    for (let attempt = 0; ; attempt++) {
      const found = await this.readerFor(callId);
      if (!found || found.reader.header.expires <= Date.now()) throw new ResultNotFoundError(callId);
      const { reader } = found;
      let pending = this.views.get(reader);
      if (!pending) {
        pending = reader.hasView ? this.readView(callId, reader, found.identity) : this.scanStored(callId, reader);
        this.views.set(reader, pending);
        pending.catch(() => this.views.delete(reader));
      }
      const view = await pending.catch((err: unknown) => {
        if (err instanceof FileChangedError) return undefined;
        throw err;
      });
      if (view) return view;
      this.forget(callId);
      if (attempt >= 3) throw new Error(`stored result ${callId} kept changing while it was read; try again`);
    }
  }

  /** The stored bytes of one result, for the text view readers. */
  bytesOf(callId: string): StoredBytes {
    return { read: async (at, length) => (await this.read(callId, at, length)).data };
  }

  /**
   * Searches a result's text view in a worker thread (so a slow pattern never blocks the gateway),
   * stopped after `timeoutMs`. The worker reads and authenticates the file itself; the caller
   * checks scope first, and the answer says whose result it read so the caller can confirm.
   */
  find(callId: string, job: FindJob, timeoutMs: number, signal?: AbortSignal): Promise<FindOutcome> {
    if (!CALL_ID.test(callId)) return Promise.reject(new ResultNotFoundError(callId));
    const blobs = this.blobs;
    // The files: the worker opens the file itself. Elsewhere it asks this thread for the bytes.
    const source = blobs.localPath ? { path: blobs.localPath(callId) } : { open: () => blobs.open(callId) };
    return runFind({ ...source, key: this.dataKey, callId, job }, timeoutMs, signal);
  }

  private async readView(callId: string, reader: ChunkReader, identity: BlobStat): Promise<ViewIndex> {
    const src = await this.openAt(identity);
    if (!src) throw new ResultNotFoundError(callId);
    try {
      return decodeView(await reader.readView(src));
    } catch (err) {
      if (err instanceof FormatError) throw tampered(callId, err);
      if (err instanceof BlobChangedError) throw new FileChangedError();
      if (err instanceof FileChangedError || err instanceof ResultNotFoundError) throw err;
      throw tampered(callId, err instanceof Error ? err : new Error(String(err)));
    } finally {
      await src.close();
    }
  }

  /** The blob at the version its cached header was read from; FileChangedError when it moved on. */
  private async openAt(identity: BlobStat) {
    try {
      return await this.blobs.openAt(identity);
    } catch (err) {
      if (err instanceof BlobChangedError) throw new FileChangedError();
      throw err;
    }
  }

  private async scanStored(callId: string, reader: ChunkReader): Promise<ViewIndex> {
    const scanner = new SafeScanner();
    const total = reader.header.totalBytes;
    for (let at = 0; at < total; at += reader.header.chunkSize) {
      const { data } = await this.read(callId, at, reader.header.chunkSize);
      scanner.feed(data);
    }
    const now = await this.readerFor(callId);
    if (now?.reader !== reader) throw new FileChangedError();
    return scanner.finish();
  }

  /** Metadata of a live result; undefined when unknown or expired. Tampering still throws. */
  async meta(callId: string): Promise<ResultMeta | undefined> {
    const found = await this.readerFor(callId);
    if (!found || found.reader.header.expires <= Date.now()) return undefined;
    return toMeta(found.reader.header);
  }

  /**
   * Returns bytes [cursor, cursor+length) of a live result (fewer at the end). `cursor == totalBytes`
   * is a valid empty final page; beyond it throws CursorOutOfRangeError (carrying the metadata).
   * Decrypts only the chunks covering the range.
   */
  async read(callId: string, cursor: number, length: number): Promise<{ meta: ResultMeta; data: Buffer }> {
    if (!Number.isSafeInteger(cursor) || cursor < 0) throw new RangeError(`cursor must be a non-negative integer, got ${cursor}`);
    if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`length must be a non-negative integer, got ${length}`);
    // A concurrent re-put of the same callId can swap the file between our stat and open; then
    // start over with the new file (bounded: a file cannot be replaced forever).
    for (let attempt = 0; ; attempt++) {
      const found = await this.readerFor(callId);
      if (!found || found.reader.header.expires <= Date.now()) throw new ResultNotFoundError(callId);
      const page = await this.readRange(found.reader, found.identity, cursor, length);
      if (page) return page;
      this.forget(callId);
      if (attempt >= 3) throw new Error(`stored result ${callId} kept changing while it was read; try again`);
    }
  }

  /** Reads a range through `reader`; undefined when the file on disk is no longer the one the
   *  reader authenticated. Chunks already decrypted are reused without touching the file. */
  private async readRange(
    reader: ChunkReader,
    identity: BlobStat,
    cursor: number,
    length: number,
  ): Promise<{ meta: ResultMeta; data: Buffer } | undefined> {
    const h = reader.header;
    const meta = toMeta(h);
    if (cursor > h.totalBytes) {
      throw new CursorOutOfRangeError(`cursor ${cursor} is past the end of result ${h.callId} (${h.totalBytes} bytes)`, meta);
    }
    const end = Math.min(h.totalBytes, cursor + length);
    let src: (ByteSource & { close(): Promise<void> }) | undefined;
    try {
      const data = await gatherRange(h, cursor, end, async (index) => {
        const cached = this.cachedChunk(reader, index);
        if (cached) return cached;
        if (!src) {
          src = await this.openAt(identity);
          if (!src) throw new FileChangedError();
        }
        return this.decryptChunk(src, reader, index);
      });
      return { meta, data };
    } catch (err) {
      if (err instanceof FileChangedError || err instanceof BlobChangedError) return undefined;
      throw err;
    } finally {
      await src?.close();
    }
  }

  /** Deletes expired results (and a crashed writer's leftovers). Returns how many results went. */
  async prune(now: number = Date.now()): Promise<number> {
    this.lastPrune = now;
    await this.blobs.sweep(now - STALE_TEMP_MS);
    let removed = 0;
    for (const { key: callId } of await this.blobs.list()) {
      let expires: number | undefined;
      try {
        const found = await this.readerFor(callId);
        if (!found) continue;
        expires = found.reader.header.expires;
      } catch (err) {
        if (!(err instanceof VaultTamperedError)) throw err;
        // Unreadable (corrupt, or written under another key): keep it for the retention window so
        // it can be inspected, then clear it like any other expired entry.
        if (await this.blobs.removeIfOlder(callId, now - this.retentionMs)) removed++;
        continue;
      }
      if (expires !== undefined && expires <= now) {
        if (await this.blobs.remove(callId)) removed++;
        this.forget(callId);
      }
    }
    return removed;
  }

  /** Live results: how many and their plaintext size. */
  async stats(now: number = Date.now()): Promise<{ count: number; bytes: number; diskBytes: number }> {
    let count = 0;
    let bytes = 0;
    let diskBytes = 0;
    for (const { key } of await this.blobs.list()) {
      try {
        const found = await this.readerFor(key);
        if (!found || found.reader.header.expires <= now) continue;
        count++;
        bytes += found.reader.header.totalBytes;
        diskBytes += found.identity.size;
      } catch (err) {
        if (!(err instanceof VaultTamperedError)) throw err;
      }
    }
    return { count, bytes, diskBytes };
  }

  private async maybePrune(now: number): Promise<void> {
    // After a put has committed: a prune that fails (the shared store went away meanwhile) must
    // not fail the put whose result is already stored. The next put tries again.
    if (now - this.lastPrune >= Math.min(60_000, this.retentionMs)) await this.prune(now).catch(() => undefined);
  }

  /**
   * The authenticated header of a stored result (expired or not); undefined when there is none.
   * A stat decides whether the cached header still describes the stored blob; only a new or
   * replaced blob is opened and its header authenticated again.
   */
  private async readerFor(callId: string): Promise<{ reader: ChunkReader; identity: BlobStat } | undefined> {
    if (!CALL_ID.test(callId)) return undefined;
    const st = await this.blobs.stat(callId);
    if (!st) return undefined;
    const cached = this.readers.get(callId);
    if (cached && cached.identity.version === st.version) return cached;
    const src = await this.blobs.open(callId);
    if (!src) return undefined;
    try {
      const identity: BlobStat = { key: callId, version: src.version, size: src.size, modified: st.modified };
      const reader = await ChunkReader.open(src, this.dataKey, callId);
      const entry = { reader, identity };
      this.readers.delete(callId);
      this.readers.set(callId, entry);
      if (this.readers.size > HEADER_CACHE_ENTRIES) {
        const oldest = this.readers.keys().next().value;
        if (oldest !== undefined) this.readers.delete(oldest);
      }
      return entry;
    } catch (err) {
      if (err instanceof FormatError) throw tampered(callId, err);
      throw err;
    } finally {
      await src.close();
    }
  }

  private cachedChunk(reader: ChunkReader, index: number): Buffer | undefined {
    // Keyed by reader identity: a replaced blob (a new version) gets a new reader.
    return this.chunks.find((c) => c.reader === reader && c.index === index)?.plain;
  }

  private async decryptChunk(src: ByteSource, reader: ChunkReader, index: number): Promise<Buffer> {
    let plain: Buffer;
    try {
      plain = await reader.readChunk(src, index);
    } catch (err) {
      if (err instanceof FormatError) throw tampered(reader.header.callId, err);
      throw err;
    }
    this.chunks.push({ reader, index, plain });
    if (this.chunks.length > CHUNK_CACHE_ENTRIES) this.chunks.shift();
    return plain;
  }

  private forget(callId: string): void {
    this.readers.delete(callId);
    for (let i = this.chunks.length - 1; i >= 0; i--) if (this.chunks[i]?.reader.header.callId === callId) this.chunks.splice(i, 1);
  }
}

/** The file behind a cached reader was replaced while it was being read. */
class FileChangedError extends Error {
  override name = "FileChangedError";
}

/**
 * The indexer never fails a store: a payload it cannot index (not JSON, or a bug) is stored with
 * an empty view, and its v1 pages still work.
 */
class SafeScanner {
  private scanner: ResultScanner | undefined = new ResultScanner();

  feed(bytes: Uint8Array): void {
    try {
      this.scanner?.feed(bytes);
    } catch {
      this.scanner = undefined;
    }
  }

  finish(): ViewIndex {
    try {
      return this.scanner?.finish() ?? emptyView(false);
    } catch {
      return emptyView(false);
    }
  }
}
