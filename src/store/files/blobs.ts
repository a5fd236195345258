// Blob spaces in the data directory: one file per blob, written to a temp file in the same
// directory, fsynced and renamed into place, so a reader opens the old or the new file whole. A
// file's identity (inode, size, mtime) is its version: a re-put renames a new inode into place.
import type { Stats } from "node:fs";
import { open, rename, rm, stat, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { BlobChangedError, ShortReadError } from "../errors.js";
import type { BlobReader, BlobSpace, BlobStat, Blobs, BlobWriter } from "../types.js";
import { FILE_MODE, ensurePrivateDir, isErrno, listDir, syncDir, tempPathFor, writeAll } from "./fsutil.js";
import { removeIfOlder } from "./docs.js";
import type { BlobLayout } from "./layout.js";

const CALL_ID = /^[A-Za-z0-9_-]{1,128}$/;

export class FileBlobs implements Blobs {
  private dirReady = false;

  constructor(
    readonly space: BlobSpace,
    private readonly dataDir: string,
    private readonly layout: BlobLayout,
  ) {}

  get dir(): string {
    return this.layout.dir(this.dataDir);
  }

  localPath(key: string): string {
    if (!CALL_ID.test(key)) throw new Error(`invalid ${this.space} key ${JSON.stringify(key.slice(0, 40))}`);
    return join(this.dir, `${key}${this.layout.ext}`);
  }

  async prepare(): Promise<void> {
    if (this.dirReady) return;
    await ensurePrivateDir(this.dir);
    this.dirReady = true;
  }

  async create(key: string): Promise<BlobWriter> {
    const target = this.localPath(key);
    await this.prepare();
    const tmp = tempPathFor(target);
    const handle = await open(tmp, "wx", FILE_MODE);
    const dir = this.dir;
    let open_ = true;
    return {
      write: (buffers) => writeAll(handle, buffers),
      commit: async () => {
        try {
          await handle.sync();
          await handle.close();
          open_ = false;
          await rename(tmp, target);
        } catch (err) {
          if (open_) await handle.close().catch(() => undefined);
          await rm(tmp, { force: true });
          throw err;
        }
        await syncDir(dir);
      },
      abort: async () => {
        if (open_) await handle.close().catch(() => undefined);
        open_ = false;
        await rm(tmp, { force: true });
      },
    };
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    if (!CALL_ID.test(key)) return undefined;
    let st: Stats;
    try {
      st = await stat(this.localPath(key));
    } catch (err) {
      if (isErrno(err, "ENOENT")) return undefined;
      throw err;
    }
    return statOf(key, st);
  }

  async open(key: string): Promise<BlobReader | undefined> {
    if (!CALL_ID.test(key)) return undefined;
    let handle: FileHandle;
    try {
      handle = await open(this.localPath(key), "r");
    } catch (err) {
      if (isErrno(err, "ENOENT")) return undefined;
      throw err;
    }
    try {
      return reader(handle, statOf(key, await handle.stat()));
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async openAt(seen: BlobStat): Promise<BlobReader | undefined> {
    const r = await this.open(seen.key);
    if (r && r.version !== seen.version) {
      await r.close();
      throw new BlobChangedError(seen.key);
    }
    return r;
  }

  async list(): Promise<BlobStat[]> {
    const out: BlobStat[] = [];
    for (const name of await listDir(this.dir)) {
      if (!name.endsWith(this.layout.ext)) continue;
      const key = name.slice(0, -this.layout.ext.length);
      const st = await this.stat(key);
      if (st) out.push(st);
    }
    return out;
  }

  async remove(key: string): Promise<boolean> {
    try {
      await unlink(this.localPath(key));
      return true;
    } catch (err) {
      if (isErrno(err, "ENOENT")) return false; // another process pruned it first
      throw err;
    }
  }

  removeIfOlder(key: string, cutoff: number): Promise<boolean> {
    return removeIfOlder(this.localPath(key), cutoff);
  }

  async sweep(cutoff: number): Promise<void> {
    for (const name of await listDir(this.dir)) {
      if (name.endsWith(".tmp")) await removeIfOlder(join(this.dir, name), cutoff);
    }
  }
}

function statOf(key: string, st: Stats): BlobStat {
  return { key, version: `${st.ino}:${st.size}:${st.mtimeMs}`, size: st.size, modified: st.mtimeMs };
}

function reader(handle: FileHandle, st: BlobStat): BlobReader {
  return {
    version: st.version,
    size: st.size,
    read: async (into, position) => {
      let done = 0;
      while (done < into.length) {
        const { bytesRead } = await handle.read(into, done, into.length - done, position + done);
        if (bytesRead === 0) throw new ShortReadError();
        done += bytesRead;
      }
    },
    close: () => handle.close(),
  };
}

