// Where each space lives in the data directory, and how its files are written. These are the
// layouts the parts used before the store existed (docs/architecture.md#processes), kept byte for
// byte: a data directory written by an earlier version reads the same, and `mcphub store export`
// writes exactly this shape.
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import type { BlobSpace, DocSpace, LockName } from "../types.js";

export interface DocLayout {
  /** The directory the files are in (created 0700). */
  dir: (dataDir: string) => string;
  /** A single-document space: its one key and file name. */
  single?: { key: string; file: string };
  /** A keyed space: a key's file name, and the key of a file name (undefined: not a document). */
  fileOf?: (key: string) => string;
  keyOf?: (name: string) => string | undefined;
  /** "fsync": temp file, fsync, rename, fsync the directory. "rename": temp file and rename. */
  write: "fsync" | "rename";
  /** The temp name for a "rename" write (the directory is implied). */
  tempName?: (key: string) => string;
  /** The lock file `update` holds, and its timeouts. */
  lock?: { file: (dataDir: string) => string; timeoutMs?: number; busy?: (path: string) => string };
  /** Temp files older than this are a crashed writer's and are removed by sweep(). */
  staleTempMs: number;
}

const HOUR = 60 * 60_000;
const vault = (dataDir: string) => join(dataDir, "vault");

/** A name with a ".ext" suffix that is not hidden (temp files start with a dot). */
function suffixed(ext: string): Pick<DocLayout, "fileOf" | "keyOf"> {
  return {
    fileOf: (key) => `${key}${ext}`,
    keyOf: (name) => (name.endsWith(ext) && !name.startsWith(".") && name.length > ext.length ? name.slice(0, -ext.length) : undefined),
  };
}

function tempSuffix(): string {
  return `${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
}

export const DOC_LAYOUTS: Record<DocSpace, DocLayout> = {
  // <data>/tokens.json: agent token hashes (serve/tokens.ts)
  tokens: {
    dir: (d) => d,
    single: { key: "tokens", file: "tokens.json" },
    write: "rename",
    tempName: () => `tokens.json.${tempSuffix()}`,
    lock: {
      file: (d) => join(d, "tokens.json.lock"),
      timeoutMs: 5000,
      busy: (path) => `${path} is held by another mcphub process; try again (or remove it if no mcphub is running)`,
    },
    staleTempMs: HOUR,
  },
  // <data>/definitions/<server>.json: pinned tool definitions (guard/store.ts)
  definitions: { dir: (d) => join(d, "definitions"), ...suffixed(".json"), write: "fsync", lock: { file: (d) => join(d, "definitions", ".lock") }, staleTempMs: HOUR },
  // <data>/catalog/<server>.json: each server's last listing (catalog/cache/store.ts)
  catalog: { dir: (d) => join(d, "catalog"), ...suffixed(".json"), write: "rename", tempName: (key) => `.${key}.${tempSuffix()}`, staleTempMs: 10 * 60_000 },
  // <data>/vault/detached/<callId>.rec: sealed detached-call records (vault/detached.ts)
  detached: { dir: (d) => join(vault(d), "detached"), ...suffixed(".rec"), write: "fsync", staleTempMs: HOUR },
  // <data>/vault/oauth.enc: sealed OAuth sign-ins (vault/oauth.ts)
  oauth: { dir: vault, single: { key: "oauth", file: "oauth.enc" }, write: "fsync", lock: { file: (d) => join(vault(d), "oauth.lock") }, staleTempMs: HOUR },
  // <data>/vault/keyring.json: the wrapped data key (vault/keys.ts)
  keyring: { dir: vault, single: { key: "keyring", file: "keyring.json" }, write: "fsync", lock: { file: (d) => join(vault(d), "keyring.lock") }, staleTempMs: HOUR },
};

export interface BlobLayout {
  dir: (dataDir: string) => string;
  ext: string;
}

export const BLOB_LAYOUTS: Record<BlobSpace, BlobLayout> = {
  // <data>/vault/results/<callId>.res: stored results in the chunked format (vault/chunkfile.ts)
  results: { dir: (d) => join(vault(d), "results"), ext: ".res" },
};

/** The lock file of a named lock. */
export function lockFile(dataDir: string, name: LockName): string {
  // One refresh of a server's OAuth token at a time, across every process of the user.
  return join(vault(dataDir), `oauth-refresh-${createHash("sha256").update(name.server).digest("hex").slice(0, 16)}.lock`);
}
