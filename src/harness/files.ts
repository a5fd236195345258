// File primitives for harness files and sync bookkeeping: read-if-present, atomic replace that
// keeps the file mode, and timestamped backups that copy bytes exactly.
import { randomBytes } from "node:crypto";
import { chmod, copyFile, mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { dirname, basename, join } from "node:path";

/** The file's bytes, or undefined when it does not exist. */
export async function readIfExists(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Replaces `path` with `data` atomically (temp file in the same directory, fsync, rename).
 * An existing file keeps its mode; a new one gets `newMode`. Parent folders are created 0700.
 */
export async function writeAtomic(path: string, data: string | Buffer, newMode = 0o600): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let mode = newMode;
  try {
    mode = (await stat(path)).mode & 0o777;
  } catch {
    // new file: keep newMode
  }
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const fh = await open(tmp, "wx", mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await chmod(tmp, mode);
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** "20260130-014501" in UTC, the stamp used in backup names. */
export function utcStamp(date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}-${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}`;
}

/** Copies `path` to `<path>.bak-<UTC stamp>[-N]` (never overwriting an older backup); returns the backup path. */
export async function backupFile(path: string, date = new Date()): Promise<string> {
  const base = `${path}.bak-${utcStamp(date)}`;
  for (let n = 0; ; n++) {
    const candidate = n === 0 ? base : `${base}-${n}`;
    if (await exists(candidate)) continue;
    await copyFile(path, candidate, 1 /* COPYFILE_EXCL */);
    const mode = (await stat(path)).mode & 0o777;
    await chmod(candidate, mode);
    return candidate;
  }
}
