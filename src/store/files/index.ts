// The files store: the data directory as every mcphub of one user on one machine shares it (the
// default; zero setup). Each space keeps the layout it had before the store existed
// (layout.ts); several processes coordinate through lock files, atomic renames and O_APPEND.
import { DOC_LAYOUTS, BLOB_LAYOUTS, lockFile } from "./layout.js";
import { FileDocs } from "./docs.js";
import { FileBlobs } from "./blobs.js";
import { FileLog } from "./log.js";
import { stat, utimes } from "node:fs/promises";
import { dirname } from "node:path";
import { ensurePrivateDir, isErrno, isPidAlive, withLockFile } from "./fsutil.js";
import type { BlobSpace, DocSpace, LockName, LockOptions, Owner, Store, StoreHealth, StoreProbe } from "../types.js";

export class FileStore implements Store {
  readonly kind = "files" as const;
  private readonly docSpaces = new Map<DocSpace, FileDocs>();
  private readonly blobSpaces = new Map<BlobSpace, FileBlobs>();

  constructor(readonly dataDir: string) {}

  get where(): string {
    return this.dataDir;
  }

  docs(space: DocSpace): FileDocs {
    let d = this.docSpaces.get(space);
    if (!d) {
      d = new FileDocs(space, this.dataDir, DOC_LAYOUTS[space]);
      this.docSpaces.set(space, d);
    }
    return d;
  }

  blobs(space: BlobSpace): FileBlobs {
    let b = this.blobSpaces.get(space);
    if (!b) {
      b = new FileBlobs(space, this.dataDir, BLOB_LAYOUTS[space]);
      this.blobSpaces.set(space, b);
    }
    return b;
  }

  /** A writer of its own (one O_APPEND descriptor per writer): close it when done. */
  log(): FileLog {
    return new FileLog(this.dataDir);
  }

  async withLock<T>(name: LockName, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
    const file = lockFile(this.dataDir, name);
    await ensurePrivateDir(dirname(file));
    return withLockFile(file, fn, opts);
  }

  async claim(_instance: string): Promise<void> {
    // A process's pid says whether it runs: nothing to record.
  }

  async ownerAlive(owner: Owner): Promise<boolean> {
    return isPidAlive(owner.pid);
  }

  health(): StoreHealth {
    return { ok: true, following: true };
  }

  /** The data directory is there (or not created yet: the first write creates it). */
  async probe(): Promise<StoreProbe> {
    const t0 = performance.now();
    try {
      await stat(this.dataDir);
      return { kind: "files", reachable: true, latency_ms: Math.round((performance.now() - t0) * 10) / 10 };
    } catch (err) {
      const latency_ms = Math.round((performance.now() - t0) * 10) / 10;
      if (isErrno(err, "ENOENT")) return { kind: "files", reachable: true, latency_ms };
      const code = (err as NodeJS.ErrnoException).code ?? "error";
      return { kind: "files", reachable: false, latency_ms, reason: `the data directory cannot be read (${code})`, problem: (err as Error).message };
    }
  }

  async setModified(kind: "docs" | "blobs", space: DocSpace | BlobSpace, key: string, modified: number): Promise<void> {
    const path = kind === "docs" ? this.docs(space as DocSpace).pathOf(key) : this.blobs(space as BlobSpace).localPath(key);
    const at = new Date(modified);
    await utimes(path, at, at);
  }

  async close(): Promise<void> {
    // Nothing is held open between calls.
  }
}

export { dayFiles, ensureTelemetryDir, telemetryDir, type DayFile } from "./log.js";
