// The append-only logs in the data directory: one NDJSON file per kind and UTC day under
// `<data>/telemetry/` (0700, files 0600). Appends go through one descriptor opened with O_APPEND,
// each write() carrying only whole lines, so the kernel places every write at the current end of
// the file and several processes appending at once never interleave or overwrite each other's
// lines. Readers stream a file in 1 MiB chunks, cut at newlines.
import { chmodSync, mkdirSync } from "node:fs";
import { open, readdir, stat, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { DAY_MS, dayStartOfFile } from "../segments.js";
import type { AppendLog, LogKind, LogSegment } from "../types.js";

export function telemetryDir(dataDir: string): string {
  return join(dataDir, "telemetry");
}

/** Creates the data dir and telemetry dir (0700), tightening the telemetry dir if it exists. */
export function ensureTelemetryDir(dataDir: string): string {
  const dir = telemetryDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}

export interface DayFile {
  path: string;
  name: string;
  dayStart: number;
}

/**
 * Day files that may hold records with ts >= cutoff (all of them without a cutoff), oldest first.
 * A missing telemetry dir means no calls were recorded yet: an empty list, not an error.
 */
export async function dayFiles(dataDir: string, cutoff?: number, kind: LogKind = "calls"): Promise<DayFile[]> {
  const dir = telemetryDir(dataDir);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const files: DayFile[] = [];
  for (const name of names) {
    const dayStart = dayStartOfFile(name, kind);
    if (dayStart === undefined) continue;
    if (cutoff !== undefined && dayStart + DAY_MS <= cutoff) continue;
    files.push({ path: join(dir, name), name, dayStart });
  }
  return files.sort((a, b) => a.dayStart - b.dayStart);
}

const READ_CHUNK = 1 << 20;

function segmentOf(f: DayFile, kind: LogKind): LogSegment {
  return {
    name: f.name,
    kind,
    dayStart: f.dayStart,
    path: f.path,
    size: async () => {
      try {
        return (await stat(f.path)).size;
      } catch {
        return 0; // pruned meanwhile
      }
    },
    read: (from) => readLines(f.path, from),
  };
}

/** Whole lines of a file from byte `from`, in chunks; a last line without its newline is left. */
async function* readLines(path: string, from: number): AsyncGenerator<{ text: string; end: number }> {
  let fh: FileHandle;
  try {
    fh = await open(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  try {
    let pos = from;
    let carry: Buffer | undefined;
    const buf = Buffer.allocUnsafe(READ_CHUNK);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, READ_CHUNK, pos);
      if (bytesRead === 0) return;
      pos += bytesRead;
      const chunk = carry ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
      const lastNl = chunk.lastIndexOf(10);
      if (lastNl < 0) {
        carry = Buffer.from(chunk);
        continue;
      }
      carry = lastNl + 1 < chunk.length ? Buffer.from(chunk.subarray(lastNl + 1)) : undefined;
      yield { text: chunk.toString("utf8", 0, lastNl + 1), end: pos - (carry?.length ?? 0) };
    }
  } finally {
    await fh.close();
  }
}

export class FileLog implements AppendLog {
  private readonly dir: string;
  private handle: { name: string; fh: FileHandle } | undefined;
  private dirReady = false;

  constructor(private readonly dataDir: string) {
    this.dir = telemetryDir(dataDir);
  }

  async append(segment: string, lines: string[]): Promise<void> {
    const fh = await this.fileFor(segment);
    const buf = Buffer.from(lines.join(""), "utf8");
    let off = 0;
    while (off < buf.length) {
      const { bytesWritten } = await fh.write(buf, off, buf.length - off);
      if (bytesWritten <= 0) throw new Error("short write");
      off += bytesWritten;
    }
  }

  async segments(kind: LogKind, cutoff?: number): Promise<LogSegment[]> {
    return (await dayFiles(this.dataDir, cutoff, kind)).map((f) => segmentOf(f, kind));
  }

  async prune(cutoff: number): Promise<string[]> {
    const removed: string[] = [];
    const all = [...(await dayFiles(this.dataDir)), ...(await dayFiles(this.dataDir, undefined, "audit"))];
    for (const f of all) {
      if (f.dayStart + DAY_MS > cutoff) continue;
      try {
        await unlink(f.path);
        removed.push(f.name);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
    return removed;
  }

  async drop(segment: string): Promise<boolean> {
    if (dayStartOfFile(segment, "calls") === undefined && dayStartOfFile(segment, "audit") === undefined) throw new Error(`invalid log segment ${JSON.stringify(segment)}`);
    if (this.handle?.name === segment) await this.reset();
    try {
      await unlink(join(this.dir, segment));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw err;
    }
  }

  async reset(): Promise<void> {
    const h = this.handle;
    this.handle = undefined;
    await h?.fh.close().catch(() => undefined);
  }

  close(): Promise<void> {
    return this.reset();
  }

  private async fileFor(name: string): Promise<FileHandle> {
    if (this.handle?.name === name) return this.handle.fh;
    await this.reset();
    if (!this.dirReady) {
      ensureTelemetryDir(this.dataDir);
      this.dirReady = true;
    }
    // "a" = O_WRONLY|O_CREAT|O_APPEND; 0600 for a new file, and tightened if it already existed.
    const fh = await open(join(this.dir, name), "a", 0o600);
    await fh.chmod(0o600).catch(() => undefined);
    this.handle = { name, fh };
    return fh;
  }
}
