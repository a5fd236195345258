// The on-disk format of one stored result (vault/results/<callId>.res):
//
//   offset 0   8 bytes   magic "MCPHRES1"
//          8  32 bytes   salt: the per-file key is HKDF-SHA256(dataKey, salt, "mcphub result v1")
//         40   4 bytes   H = length of the sealed header (uint32 BE)
//         44   H bytes   sealed header: nonce(12) ‖ AES-GCM(JSON header) ‖ tag(16)
//                        AAD = magic ‖ salt ‖ callId
//   44+H + i*(C+28)      chunk i: nonce(12) ‖ AES-GCM(plaintext bytes [i*C, (i+1)*C)) ‖ tag(16)
//                        AAD = SHA-256(header JSON) ‖ len(callId) ‖ callId ‖ i ‖ chunkCount
//
//   (v2 only, after the last chunk)
//                        sealed view index: nonce(12) ‖ AES-GCM(index JSON) ‖ tag(16)
//                        AAD = "view" ‖ SHA-256(header JSON) ‖ callId
//                        4 bytes: length of the sealed view index (uint32 BE)
//
// Every chunk but the last holds exactly C plaintext bytes, so chunk i sits at a computable offset
// and a page decrypts only the chunks it covers. The view index (textview/) is built while the
// chunks are written, so it can only follow them; the header says (v: 2) that it is there, so
// cutting it off fails like any other truncation. The header carries all metadata (including
// totalBytes, chunkSize and chunkCount) and is authenticated; every chunk's AAD binds it to that
// header, its callId and its position, so reordering, moving chunks between results, truncating,
// extending or editing any byte fails authentication.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { z } from "zod";
import { ShortReadError, type ByteSource } from "../store/index.js";
import { AuthFailure, NONCE_BYTES, TAG_BYTES, deriveKey, openSealed, seal } from "./crypto.js";
import { writeAll } from "./fsutil.js";

/** Where ciphertext goes: a store's blob writer, or an open file. */
export interface ByteSink {
  write(buffers: Buffer[]): Promise<void>;
}

function sinkOf(out: ByteSink | FileHandle): ByteSink {
  if ("writev" in out) return { write: (buffers) => writeAll(out, buffers) };
  return out;
}

export const RESULT_MAGIC = Buffer.from("MCPHRES1", "ascii");
const SALT_BYTES = 32;
export const PREFIX_BYTES = RESULT_MAGIC.length + SALT_BYTES + 4;
export const CHUNK_OVERHEAD = NONCE_BYTES + TAG_BYTES;
const MAX_HEADER_BYTES = 64 * 1024;
/** A view index larger than this is not read (a 200 MB text result's is ~150 KB). */
export const MAX_VIEW_BYTES = 64 * 1024 * 1024;
const VIEW_LENGTH_BYTES = 4;

export const ResultHeaderSchema = z.object({
  v: z.union([z.literal(1), z.literal(2)]),
  callId: z.string(),
  server: z.string(),
  tool: z.string(),
  namespaced: z.string(),
  agent: z.string(),
  kind: z.enum(["result", "detached", "reply"]),
  mediaType: z.string(),
  created: z.number(),
  expires: z.number(),
  totalBytes: z.number().int().min(0),
  isError: z.boolean().optional(),
  chunkSize: z.number().int().min(1),
  chunkCount: z.number().int().min(0),
});
export type ResultHeader = z.infer<typeof ResultHeaderSchema>;

/** Raised for any structural or cryptographic inconsistency; the store maps it to VaultTamperedError. */
export class FormatError extends Error {
  override name = "FormatError";
}

function fileKey(dataKey: Buffer, salt: Uint8Array): Buffer {
  return deriveKey(dataKey, "mcphub result v1", salt);
}

function headerAad(salt: Uint8Array, callId: string): Buffer {
  return Buffer.concat([RESULT_MAGIC, salt, Buffer.from(callId, "utf8")]);
}

function chunkAad(headerHash: Buffer, callId: string, index: number, count: number): Buffer {
  const id = Buffer.from(callId, "utf8");
  const aad = Buffer.alloc(headerHash.length + 4 + id.length + 8);
  headerHash.copy(aad, 0);
  aad.writeUInt32BE(id.length, headerHash.length);
  id.copy(aad, headerHash.length + 4);
  aad.writeUInt32BE(index, headerHash.length + 4 + id.length);
  aad.writeUInt32BE(count, headerHash.length + 8 + id.length);
  return aad;
}

function viewAad(headerHash: Buffer, callId: string): Buffer {
  return Buffer.concat([Buffer.from("view", "ascii"), headerHash, Buffer.from(callId, "utf8")]);
}

/** Total file size for a header of `sealedHeaderBytes` describing `h` (and, for v2, its sealed view). */
export function expectedFileSize(sealedHeaderBytes: number, h: ResultHeader, sealedViewBytes = 0): number {
  const chunks = PREFIX_BYTES + sealedHeaderBytes + h.chunkCount * CHUNK_OVERHEAD + h.totalBytes;
  return h.v === 2 ? chunks + sealedViewBytes + VIEW_LENGTH_BYTES : chunks;
}

/**
 * Streams plaintext into fixed-size encrypted chunks written to an open file. Holds one chunk of
 * plaintext and a bounded batch of ciphertext in memory, whatever the result size.
 */
export class ChunkWriter {
  private readonly key: Buffer;
  private readonly headerHash: Buffer;
  private readonly chunk: Buffer;
  private filled = 0;
  private index = 0;
  private written = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private inFlight: Promise<void> = Promise.resolve();

  private constructor(
    private readonly sink: ByteSink,
    private readonly header: ResultHeader,
    key: Buffer,
    headerHash: Buffer,
  ) {
    this.key = key;
    this.headerHash = headerHash;
    this.chunk = Buffer.allocUnsafe(header.chunkSize);
  }

  /** Writes the prefix and sealed header, and returns a writer for the chunks. */
  static async start(out: ByteSink | FileHandle, dataKey: Buffer, header: ResultHeader): Promise<ChunkWriter> {
    const sink = sinkOf(out);
    const salt = randomBytes(SALT_BYTES);
    const key = fileKey(dataKey, salt);
    const headerJson = Buffer.from(JSON.stringify(header), "utf8");
    const sealedHeader = seal(key, headerJson, headerAad(salt, header.callId));
    const lengthField = Buffer.alloc(4);
    lengthField.writeUInt32BE(sealedHeader.length);
    await sink.write([RESULT_MAGIC, salt, lengthField, sealedHeader]);
    return new ChunkWriter(sink, header, key, createHash("sha256").update(headerJson).digest());
  }

  /** Appends plaintext bytes (copied; the caller may reuse `bytes`). */
  async push(bytes: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) {
      const take = Math.min(bytes.length - offset, this.chunk.length - this.filled);
      this.chunk.set(bytes.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled === this.chunk.length) await this.sealChunk();
    }
  }

  /**
   * Seals the last (partial) chunk, flushes, and checks the byte count promised in the header.
   * A v2 header promised a view index: `view` is sealed after the chunks.
   */
  async finish(view?: Buffer): Promise<void> {
    if (this.filled > 0) await this.sealChunk();
    if (this.written !== this.header.totalBytes || this.index !== this.header.chunkCount) {
      throw new Error(
        `internal error: wrote ${this.written} bytes in ${this.index} chunks, header promised ${this.header.totalBytes} in ${this.header.chunkCount}`,
      );
    }
    if ((this.header.v === 2) !== (view !== undefined)) throw new Error("internal error: a view index goes with a v2 header, and only there");
    if (view) {
      if (view.length > MAX_VIEW_BYTES) throw new Error(`view index of ${view.length} bytes is over the ${MAX_VIEW_BYTES}-byte limit`);
      const sealed = seal(this.key, view, viewAad(this.headerHash, this.header.callId));
      const length = Buffer.alloc(VIEW_LENGTH_BYTES);
      length.writeUInt32BE(sealed.length);
      this.pending.push(sealed, length);
    }
    await this.flush();
    await this.drain();
  }

  private async sealChunk(): Promise<void> {
    if (this.index >= this.header.chunkCount) throw new Error("internal error: more bytes than the header promised");
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce);
    cipher.setAAD(chunkAad(this.headerHash, this.header.callId, this.index, this.header.chunkCount));
    const body = cipher.update(this.chunk.subarray(0, this.filled));
    cipher.final();
    const tag = cipher.getAuthTag();
    this.pending.push(nonce, body, tag);
    this.pendingBytes += body.length + CHUNK_OVERHEAD;
    this.written += this.filled;
    this.filled = 0;
    this.index++;
    if (this.pendingBytes >= 1024 * 1024) await this.flush();
  }

  /** Starts writing the pending batch while the next one is encrypted: at most one write is in
   *  flight, so at most two batches (~2 MiB) of ciphertext are held. */
  private async flush(): Promise<void> {
    await this.inFlight;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const write = this.sink.write(batch);
    // Observed here so a failure is not reported as unhandled before the next await picks it up.
    write.catch(() => undefined);
    this.inFlight = write;
  }

  /** Waits for the last write; call before fsync/close. */
  private async drain(): Promise<void> {
    await this.inFlight;
  }
}

/** An opened result file: its authenticated header and random access to its chunks. */
export class ChunkReader {
  private constructor(
    readonly header: ResultHeader,
    private readonly key: Buffer,
    private readonly headerHash: Buffer,
    private readonly chunksOffset: number,
    /** Where the sealed view index starts, and its length (v2 files). */
    private readonly viewAt: number,
    private readonly viewLength: number,
  ) {}

  /** Reads and authenticates the header of a stored result (a store's blob, or a file). */
  static async open(src: ByteSource, dataKey: Buffer, callId: string): Promise<ChunkReader> {
    const size = src.size;
    if (size < PREFIX_BYTES) throw new FormatError("file shorter than its fixed prefix");
    const prefix = Buffer.alloc(PREFIX_BYTES);
    await readExactly(src, prefix, 0);
    if (!prefix.subarray(0, RESULT_MAGIC.length).equals(RESULT_MAGIC)) throw new FormatError("not a vault result file (bad magic)");
    const salt = prefix.subarray(RESULT_MAGIC.length, RESULT_MAGIC.length + SALT_BYTES);
    const headerLength = prefix.readUInt32BE(RESULT_MAGIC.length + SALT_BYTES);
    if (headerLength > MAX_HEADER_BYTES || PREFIX_BYTES + headerLength > size) throw new FormatError("header length out of bounds");
    const sealedHeader = Buffer.alloc(headerLength);
    await readExactly(src, sealedHeader, PREFIX_BYTES);
    const key = fileKey(dataKey, salt);
    let headerJson: Buffer;
    try {
      headerJson = openSealed(key, sealedHeader, headerAad(salt, callId));
    } catch (err) {
      if (err instanceof AuthFailure) throw new FormatError("header failed authentication");
      throw err;
    }
    let header: ResultHeader;
    try {
      header = ResultHeaderSchema.parse(JSON.parse(headerJson.toString("utf8")));
    } catch {
      throw new FormatError("authenticated header is malformed");
    }
    if (header.callId !== callId) throw new FormatError("header belongs to another callId");
    if (header.chunkCount !== Math.ceil(header.totalBytes / header.chunkSize)) throw new FormatError("chunk count disagrees with size");
    let viewLength = 0;
    if (header.v === 2) {
      if (size < VIEW_LENGTH_BYTES) throw new FormatError("file shorter than its view length field");
      const field = Buffer.alloc(VIEW_LENGTH_BYTES);
      await readExactly(src, field, size - VIEW_LENGTH_BYTES);
      viewLength = field.readUInt32BE(0);
      if (viewLength < CHUNK_OVERHEAD || viewLength > MAX_VIEW_BYTES + CHUNK_OVERHEAD) throw new FormatError("view index length out of bounds");
    }
    if (expectedFileSize(headerLength, header, viewLength) !== size) throw new FormatError("file size disagrees with its header (truncated or extended)");
    const viewAt = size - VIEW_LENGTH_BYTES - viewLength;
    return new ChunkReader(header, key, createHash("sha256").update(headerJson).digest(), PREFIX_BYTES + headerLength, viewAt, viewLength);
  }

  /** Whether the file carries a view index (written by a version that builds them). */
  get hasView(): boolean {
    return this.header.v === 2;
  }

  /** Reads and authenticates the sealed view index; throws FormatError when it does not authenticate. */
  async readView(src: ByteSource): Promise<Buffer> {
    if (!this.hasView) throw new RangeError("this result file has no view index");
    const sealed = Buffer.alloc(this.viewLength);
    await readExactly(src, sealed, this.viewAt);
    try {
      return openSealed(this.key, sealed, viewAad(this.headerHash, this.header.callId));
    } catch (err) {
      if (err instanceof AuthFailure) throw new FormatError("view index failed authentication");
      throw err;
    }
  }

  /** Plaintext length of chunk `index`. */
  chunkLength(index: number): number {
    const h = this.header;
    return index === h.chunkCount - 1 ? h.totalBytes - index * h.chunkSize : h.chunkSize;
  }

  /** Reads and decrypts one chunk; throws FormatError when it does not authenticate. */
  async readChunk(src: ByteSource, index: number): Promise<Buffer> {
    const h = this.header;
    if (index < 0 || index >= h.chunkCount) throw new RangeError(`chunk ${index} out of range`);
    const plainLength = this.chunkLength(index);
    const sealed = Buffer.alloc(plainLength + CHUNK_OVERHEAD);
    await readExactly(src, sealed, this.chunksOffset + index * (h.chunkSize + CHUNK_OVERHEAD));
    const nonce = sealed.subarray(0, NONCE_BYTES);
    const tag = sealed.subarray(sealed.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, nonce);
      decipher.setAAD(chunkAad(this.headerHash, h.callId, index, h.chunkCount));
      decipher.setAuthTag(tag);
      const plain = decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES));
      decipher.final();
      return plain;
    } catch {
      throw new FormatError(`chunk ${index} failed authentication`);
    }
  }
}

/**
 * Copies plaintext bytes [cursor, end) of a result out of its chunks, fetching each chunk it
 * covers through `chunk` (which may decrypt it or return a cached copy).
 */
export async function gatherRange(h: ResultHeader, cursor: number, end: number, chunk: (index: number) => Promise<Buffer>): Promise<Buffer> {
  const data = Buffer.allocUnsafe(Math.max(0, end - cursor));
  if (end <= cursor) return data;
  let filled = 0;
  for (let index = Math.floor(cursor / h.chunkSize); index <= Math.floor((end - 1) / h.chunkSize); index++) {
    const plain = await chunk(index);
    const chunkStart = index * h.chunkSize;
    const from = Math.max(cursor, chunkStart) - chunkStart;
    const to = Math.min(end, chunkStart + plain.length) - chunkStart;
    plain.copy(data, filled, from, to);
    filled += to - from;
  }
  return data;
}

async function readExactly(src: ByteSource, into: Buffer, position: number): Promise<void> {
  try {
    await src.read(into, position);
  } catch (err) {
    if (err instanceof ShortReadError) throw new FormatError("unexpected end of file");
    throw err;
  }
}

/** A byte source over an open file of a known size. */
export function fileSource(handle: FileHandle, size: number): ByteSource {
  return {
    size,
    read: async (into, position) => {
      let done = 0;
      while (done < into.length) {
        const { bytesRead } = await handle.read(into, done, into.length - done, position + done);
        if (bytesRead === 0) throw new ShortReadError();
        done += bytesRead;
      }
    },
  };
}
