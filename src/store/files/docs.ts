// Document spaces in the data directory: one file per document (or one file for a single-document
// space), written by temp file and rename so a reader sees a whole old or a whole new file,
// read-modify-written under the space's lock file. The mirror answers from one stat per look, so a
// file another process replaced is seen on the next read without a watch.
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, unwatchFile, watch, watchFile, type FSWatcher, type Stats } from "node:fs";
import { open, rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DocEdit, DocEntry, DocMirror, Docs, DocSpace, MirrorEntry } from "../types.js";
import { atomicWriteFile, createFileExclusive, ensurePrivateDir, isErrno, listDir, withLockFile } from "./fsutil.js";
import type { DocLayout } from "./layout.js";

/** A key that could leave the directory or hide as a temp file is never a document. */
const UNSAFE_KEY = /[/\\\0]|^\.|^$/;

export class FileDocs implements Docs {
  private mirrored: FileMirror | undefined;

  constructor(
    readonly space: DocSpace,
    private readonly dataDir: string,
    private readonly layout: DocLayout,
  ) {}

  get dir(): string {
    return this.layout.dir(this.dataDir);
  }

  /** The one key of a single-document space. */
  get singleKey(): string | undefined {
    return this.layout.single?.key;
  }

  /** The file of a document. */
  pathOf(key: string): string {
    const single = this.layout.single;
    if (single) {
      if (key !== single.key) throw new Error(`the ${this.space} space holds one document, "${single.key}" (not "${key}")`);
      return join(this.dir, single.file);
    }
    if (UNSAFE_KEY.test(key)) throw new Error(`invalid ${this.space} key ${JSON.stringify(key.slice(0, 60))}`);
    return join(this.dir, (this.layout.fileOf as (k: string) => string)(key));
  }

  keyOf(name: string): string | undefined {
    const single = this.layout.single;
    if (single) return name === single.file ? single.key : undefined;
    return this.layout.keyOf?.(name);
  }

  async get(key: string): Promise<DocEntry | undefined> {
    let handle;
    try {
      handle = await open(this.pathOf(key), "r");
    } catch (err) {
      if (isErrno(err, "ENOENT")) return undefined;
      throw err;
    }
    try {
      const st = await handle.stat({ bigint: true });
      const bytes = await handle.readFile();
      return { key, version: versionOf(st), bytes, modified: Number(st.mtimeMs) };
    } finally {
      await handle.close();
    }
  }

  async list(): Promise<{ key: string; modified: number }[]> {
    const out: { key: string; modified: number }[] = [];
    for (const name of await listDir(this.dir)) {
      const key = this.keyOf(name);
      if (key === undefined) continue;
      try {
        out.push({ key, modified: (await stat(join(this.dir, name))).mtimeMs });
      } catch (err) {
        if (!isErrno(err, "ENOENT")) throw err; // removed meanwhile
      }
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const path = this.pathOf(key);
    await this.ensureDir();
    if (this.layout.write === "fsync") return atomicWriteFile(path, bytes);
    const tmp = join(this.dir, (this.layout.tempName as (k: string) => string)(key));
    try {
      await writeFile(tmp, bytes, { mode: 0o600, flag: "wx" });
      await rename(tmp, path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async create(key: string, bytes: Buffer): Promise<boolean> {
    const path = this.pathOf(key);
    await this.ensureDir();
    return createFileExclusive(path, bytes);
  }

  async update<T>(key: string, edit: (current: Buffer | undefined) => DocEdit<T> | Promise<DocEdit<T>>): Promise<T> {
    const path = this.pathOf(key);
    await this.ensureDir();
    const run = async (): Promise<T> => {
      const current = (await this.get(key))?.bytes;
      const decided = await edit(current);
      if (decided.write === null) await rm(path, { force: true });
      else if (decided.write !== undefined) await this.put(key, decided.write);
      return decided.value;
    };
    const lock = this.layout.lock;
    if (!lock) return run();
    const file = lock.file(this.dataDir);
    return withLockFile(file, run, {
      ...(lock.timeoutMs !== undefined ? { timeoutMs: lock.timeoutMs } : {}),
      ...(lock.busy ? { busyMessage: lock.busy(file) } : {}),
    });
  }

  async remove(key: string): Promise<boolean> {
    try {
      await unlink(this.pathOf(key));
      return true;
    } catch (err) {
      if (isErrno(err, "ENOENT")) return false;
      throw err;
    }
  }

  async removeIfOlder(key: string, cutoff: number): Promise<boolean> {
    return removeIfOlder(this.pathOf(key), cutoff);
  }

  async sweep(): Promise<void> {
    const cutoff = Date.now() - this.layout.staleTempMs;
    for (const name of await listDir(this.dir)) {
      if (name.endsWith(".tmp")) await removeIfOlder(join(this.dir, name), cutoff).catch(() => false);
    }
  }

  /** The same sweep, synchronously (the catalogue cache prunes while a gateway starts). */
  sweepSync(): void {
    const cutoff = Date.now() - this.layout.staleTempMs;
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.endsWith(".tmp")) continue;
      try {
        const path = join(this.dir, name);
        if (statSync(path).mtimeMs <= cutoff) rmSyncQuiet(path);
      } catch {
        // best effort
      }
    }
  }

  mirror(): DocMirror {
    this.mirrored ??= new FileMirror(this);
    return this.mirrored;
  }

  /** Creates the space's directory (0700), unless it is the data directory itself. */
  async ensureDir(): Promise<void> {
    if (this.dir === this.dataDir) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    else await ensurePrivateDir(this.dir);
  }

  ensureDirSync(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (this.dir !== this.dataDir) chmodSync(this.dir, 0o700); // it may predate this process
  }
}

/** The mirror of a file space: a stat per look (its identity is the version), the file read only
 *  when asked for its bytes. */
class FileMirror implements DocMirror {
  constructor(private readonly docs: FileDocs) {}

  peek(key: string): MirrorEntry | undefined {
    const path = this.docs.pathOf(key);
    // Synchronous on purpose: this runs on every request or call, and the asynchronous stat (a
    // thread-pool round trip, plus an exception while the file does not exist) cost more than
    // everything else the token check does.
    const st = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (!st) return undefined;
    return { version: versionOf(st), bytes: () => readFileSync(path) };
  }

  keys(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.docs.dir);
    } catch {
      return [];
    }
    const keys: string[] = [];
    for (const name of names) {
      const key = this.docs.keyOf(name);
      if (key !== undefined) keys.push(key);
    }
    return keys.sort();
  }

  watch(listener: (key: string | undefined) => void, opts: { pollMs?: number } = {}): () => void {
    const single = this.docs.singleKey;
    if (single && opts.pollMs !== undefined) {
      // A single file replaced by rename: polling its stat sees every replacement.
      const path = this.docs.pathOf(single);
      const onChange = (curr: Stats, prev: Stats) => {
        if (curr.mtimeMs === prev.mtimeMs && curr.ino === prev.ino && curr.size === prev.size) return;
        listener(single);
      };
      watchFile(path, { interval: opts.pollMs, persistent: false }, onChange);
      return () => unwatchFile(path, onChange);
    }
    let watcher: FSWatcher | undefined;
    try {
      this.docs.ensureDirSync();
      watcher = watch(this.docs.dir, { persistent: false }, (_event, file) => {
        if (typeof file !== "string") return listener(undefined); // an event without a name could be any file
        const key = this.docs.keyOf(file);
        if (key !== undefined) listener(key);
      });
      watcher.on("error", () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // No watcher (odd file systems): peek() stats on every look anyway.
      watcher = undefined;
    }
    return () => {
      watcher?.close();
      watcher = undefined;
    };
  }

}

function versionOf(st: { ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint }): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

export async function removeIfOlder(path: string, cutoff: number): Promise<boolean> {
  try {
    const st = await stat(path);
    if (st.mtimeMs > cutoff) return false;
    await unlink(path);
    return true;
  } catch (err) {
    if (isErrno(err, "ENOENT")) return false;
    throw err;
  }
}

function rmSyncQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // best effort: another process removed it first
  }
}
