// Small whole-file encrypted records (detached-call records, the secret store): magic ‖ nonce ‖
// AES-GCM(JSON) ‖ tag, with AAD = magic ‖ a caller-chosen binding (e.g. the callId), written
// atomically. Small enough to read and rewrite whole.
import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { AuthFailure, openSealed, seal } from "./crypto.js";
import { VaultTamperedError } from "./errors.js";
import { atomicWriteFile, isErrno } from "./fsutil.js";

export class SealedFileError extends Error {
  override name = "SealedFileError";
}

/** magic ‖ nonce ‖ AES-GCM(plaintext) ‖ tag, AAD = magic ‖ binding: what a store keeps. */
export function sealBytes(key: Buffer, magic: Buffer, binding: string, plaintext: Buffer): Buffer {
  const aad = Buffer.concat([magic, Buffer.from(binding, "utf8")]);
  return Buffer.concat([magic, seal(key, plaintext, aad)]);
}

/** The plaintext of sealBytes' output; throws SealedFileError when it is not authentic. */
export function openSealedBytes(bytes: Buffer, key: Buffer, magic: Buffer, binding: string): Buffer {
  if (bytes.length < magic.length || !bytes.subarray(0, magic.length).equals(magic)) throw new SealedFileError("bad magic");
  try {
    return openSealed(key, bytes.subarray(magic.length), Buffer.concat([magic, Buffer.from(binding, "utf8")]));
  } catch (err) {
    if (err instanceof AuthFailure) throw new SealedFileError("authentication failed");
    throw err;
  }
}

export async function writeSealedFile(path: string, key: Buffer, magic: Buffer, binding: string, plaintext: Buffer): Promise<void> {
  await atomicWriteFile(path, sealBytes(key, magic, binding, plaintext));
}

/** Returns the plaintext, undefined when the file does not exist; throws SealedFileError when it
 *  is not authentic. */
export async function readSealedFile(path: string, key: Buffer, magic: Buffer, binding: string): Promise<Buffer | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    if (isErrno(err, "ENOENT")) return undefined;
    throw err;
  }
  return openSealedBytes(bytes, key, magic, binding);
}

/**
 * A sealed JSON document checked against `schema`; undefined when the file does not exist. Not
 * authentic, not JSON or not of that shape is a VaultTamperedError naming `what`. `raw` is the
 * parse before validation (zod's copy drops a "__proto__" key, which a caller may need to keep).
 */
export async function readSealedJson<S extends z.ZodType>(
  path: string,
  key: Buffer,
  magic: Buffer,
  binding: string,
  schema: S,
  what: string,
): Promise<{ data: z.output<S>; raw: unknown } | undefined> {
  let plain: Buffer | undefined;
  try {
    plain = await readSealedFile(path, key, magic, binding);
  } catch (err) {
    if (err instanceof SealedFileError) throw new VaultTamperedError(`${what} failed authentication (${err.message}); it was altered or is corrupt`);
    throw err;
  }
  if (!plain) return undefined;
  return parseSealedJson(plain, schema, what);
}

/** A sealed JSON document's plaintext checked against `schema` (see readSealedJson). */
export function parseSealedJson<S extends z.ZodType>(plain: Buffer, schema: S, what: string): { data: z.output<S>; raw: unknown } {
  let raw: unknown;
  try {
    raw = JSON.parse(plain.toString("utf8"));
  } catch {
    throw new VaultTamperedError(`${what} is malformed`);
  }
  const result = schema.safeParse(raw);
  if (!result.success) throw new VaultTamperedError(`${what} is malformed`);
  return { data: result.data, raw };
}
