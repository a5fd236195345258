// AES-256-GCM primitives used by every vault file. One data key protects the vault; each purpose
// (result files, detached records, secrets) gets its own subkey via HKDF so a ciphertext made for
// one purpose can never authenticate as another, and each result file additionally derives a
// per-file key from a random salt stored in the file.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

export const KEY_BYTES = 32;
export const NONCE_BYTES = 12;
export const TAG_BYTES = 16;

/** Thrown by `openSealed` when authentication fails; callers map it to their own error. */
export class AuthFailure extends Error {
  override name = "AuthFailure";
}

/** HKDF-SHA256(key, salt, info) → 32-byte key. */
export function deriveKey(key: Buffer, info: string, salt: Uint8Array = Buffer.alloc(0)): Buffer {
  return Buffer.from(hkdfSync("sha256", key, salt, Buffer.from(info, "utf8"), KEY_BYTES));
}

/** Encrypts a small message: returns nonce ‖ ciphertext ‖ tag. */
export function seal(key: Buffer, plaintext: Uint8Array, aad: Uint8Array): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(aad);
  const body = cipher.update(plaintext);
  const final = cipher.final();
  return Buffer.concat([nonce, body, final, cipher.getAuthTag()]);
}

/** Decrypts nonce ‖ ciphertext ‖ tag; throws AuthFailure on any mismatch. */
export function openSealed(key: Buffer, sealed: Uint8Array, aad: Uint8Array): Buffer {
  if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new AuthFailure("sealed message too short");
  const buf = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  const nonce = buf.subarray(0, NONCE_BYTES);
  const tag = buf.subarray(buf.length - TAG_BYTES);
  const body = buf.subarray(NONCE_BYTES, buf.length - TAG_BYTES);
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, nonce);
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    const out = decipher.update(body);
    const final = decipher.final();
    return final.length === 0 ? out : Buffer.concat([out, final]);
  } catch {
    throw new AuthFailure("authentication failed");
  }
}
