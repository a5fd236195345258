// Small whole-file encrypted records (detached-call records, the secret store): magic ‖ nonce ‖
// AES-GCM(JSON) ‖ tag, with AAD = magic ‖ a caller-chosen binding (e.g. the callId), written
// atomically. Small enough to read and rewrite whole.
import { readFile } from "node:fs/promises";
import { AuthFailure, openSealed, seal } from "./crypto.js";
import { atomicWriteFile, isErrno } from "./fsutil.js";

export class SealedFileError extends Error {}

export async function writeSealedFile(path: string, key: Buffer, magic: Buffer, binding: string, plaintext: Buffer): Promise<void> {
  const aad = Buffer.concat([magic, Buffer.from(binding, "utf8")]);
  await atomicWriteFile(path, Buffer.concat([magic, seal(key, plaintext, aad)]));
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
  if (bytes.length < magic.length || !bytes.subarray(0, magic.length).equals(magic)) throw new SealedFileError("bad magic");
  try {
    return openSealed(key, bytes.subarray(magic.length), Buffer.concat([magic, Buffer.from(binding, "utf8")]));
  } catch (err) {
    if (err instanceof AuthFailure) throw new SealedFileError("authentication failed");
    throw err;
  }
}
