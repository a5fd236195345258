// File-system helpers shared by the file store: private directories, atomic writes, and a lock
// file with stale-lock recovery. Every write that other processes may read goes through a temp
// file in the same directory, fsync, then rename, so a reader sees the old or the new file whole.
import { randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { chmod, link, mkdir, open, readdir, readFile, rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, join } from "node:path";

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;
/** Temp files older than this are leftovers of a crashed writer. */
export const STALE_TEMP_MS = 60 * 60 * 1000;

/** Creates `dir` (and parents) and forces mode 0700 on it, whatever the umask did. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  const st = await stat(dir);
  if ((st.mode & 0o777) !== DIR_MODE) await chmod(dir, DIR_MODE);
}

/** A unique temp-file name next to `target` (same directory, so rename is atomic). */
export function tempPathFor(target: string): string {
  return join(dirname(target), `.${randomBytes(8).toString("hex")}.tmp`);
}

/** fsync a directory so a rename inside it survives a crash. Best effort: some file systems
 *  refuse to open directories for sync. */
export async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, fsConstants.O_RDONLY);
    await handle.sync();
  } catch {
    // Not all platforms allow fsync on a directory; the rename itself is still atomic.
  } finally {
    await handle?.close();
  }
}

/** Writes `data` to `target` atomically with mode 0600: temp file, fsync, rename. */
export async function atomicWriteFile(target: string, data: Uint8Array | string): Promise<void> {
  const tmp = tempPathFor(target);
  const handle = await open(tmp, "wx", FILE_MODE);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dirname(target));
}

/** Creates `target` with `data` only if it does not exist yet, atomically and completely: the file
 *  is written to a temp name and then hard-linked into place (link fails with EEXIST when another
 *  process won). Returns true when this call created it. Readers never see a half-written file. */
export async function createFileExclusive(target: string, data: Uint8Array | string): Promise<boolean> {
  const tmp = tempPathFor(target);
  await writeFile(tmp, data, { mode: FILE_MODE, flag: "wx" });
  try {
    const handle = await open(tmp, "r");
    await handle.sync();
    await handle.close();
    await link(tmp, target);
    await syncDir(dirname(target));
    return true;
  } catch (err) {
    if (isErrno(err, "EEXIST")) return false;
    throw err;
  } finally {
    await rm(tmp, { force: true });
  }
}

export function isErrno(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === code;
}

/** The names in `dir`; a store whose directory was never created is empty, not an error. */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (isErrno(err, "ENOENT")) return [];
    throw err;
  }
}

/** True when a process with this pid exists (EPERM means it exists but belongs to someone else). */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return isErrno(err, "EPERM");
  }
}

export interface LockOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** A lock older than this is considered abandoned even if its pid looks alive (pid reuse). */
  staleMs?: number;
  /** The message when the lock cannot be taken in time (default: names the lock file). */
  busyMessage?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` while holding an exclusive lock file (created with O_EXCL). The lock records
 * `{pid, host, created}`; a lock whose process is gone (same host) or that is older than `staleMs`
 * is removed and the acquisition retried, so a crashed holder never wedges the vault.
 */
export async function withLockFile<T>(lockPath: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const staleMs = opts.staleMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  const token = JSON.stringify({ pid: process.pid, host: hostname(), created: Date.now(), nonce: randomBytes(8).toString("hex") });
  let delay = 5;
  for (;;) {
    try {
      await writeFile(lockPath, token, { mode: FILE_MODE, flag: "wx" });
      break;
    } catch (err) {
      if (!isErrno(err, "EEXIST")) throw err;
    }
    await removeIfStale(lockPath, staleMs);
    if (Date.now() > deadline) {
      throw new Error(opts.busyMessage ?? `could not take the lock ${lockPath} within ${timeoutMs} ms; if no other mcphub process is running, delete that file`);
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 100);
  }
  try {
    return await fn();
  } finally {
    // Only remove the lock if it is still ours (a stale-lock breaker may have replaced it).
    try {
      if ((await readFile(lockPath, "utf8")) === token) await unlink(lockPath);
    } catch {
      // Already gone.
    }
  }
}

async function removeIfStale(lockPath: string, staleMs: number): Promise<void> {
  let text: string;
  let mtimeMs: number;
  try {
    text = await readFile(lockPath, "utf8");
    mtimeMs = (await stat(lockPath)).mtimeMs;
  } catch {
    return; // vanished: the next attempt will take it
  }
  let pid = 0;
  let host = "";
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null) {
      const rec = parsed as { pid?: unknown; host?: unknown };
      if (typeof rec.pid === "number") pid = rec.pid;
      if (typeof rec.host === "string") host = rec.host;
    }
  } catch {
    // A torn or foreign lock file: only its age can tell.
  }
  const deadHolder = host === hostname() && pid > 0 && !isPidAlive(pid);
  const tooOld = Date.now() - mtimeMs > staleMs;
  const unreadable = pid === 0 && Date.now() - mtimeMs > 1000;
  if (!deadHolder && !tooOld && !unreadable) return;
  // Re-read right before removing so we do not delete a lock another breaker just re-created.
  try {
    if ((await readFile(lockPath, "utf8")) === text) await unlink(lockPath);
  } catch {
    // Someone else removed it first.
  }
}

/** writev until every byte is written (writev may write less than asked). */
export async function writeAll(handle: FileHandle, buffers: Buffer[]): Promise<void> {
  let rest = buffers;
  while (rest.length > 0) {
    let { bytesWritten } = await handle.writev(rest);
    const next: Buffer[] = [];
    for (const b of rest) {
      if (bytesWritten >= b.length) bytesWritten -= b.length;
      else {
        next.push(bytesWritten > 0 ? b.subarray(bytesWritten) : b);
        bytesWritten = 0;
      }
    }
    rest = next;
  }
}
