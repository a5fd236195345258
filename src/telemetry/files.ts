// Where telemetry lives on disk: one append-only NDJSON file per UTC day,
// `<dataDir>/telemetry/calls-YYYY-MM-DD.ndjson`, and beside it the guardrails' audit records in
// `audit-YYYY-MM-DD.ndjson`. A record goes to the file of the day of its own `ts`, so a file name
// bounds the timestamps inside it and a time window selects files by name.
import { mkdirSync, chmodSync } from "node:fs";
import { readdir, unlink } from "node:fs/promises";
import { join } from "node:path";

export const DAY_MS = 86_400_000;
export const DEFAULT_RETENTION_DAYS = 30;

const FILE_RE = /^(calls|audit)-(\d{4})-(\d{2})-(\d{2})\.ndjson$/;

/** Call records (`stats`) or the guardrails' audit records (refusals, confirmations, approvals). */
export type DayFileKind = "calls" | "audit";

export function telemetryDir(dataDir: string): string {
  return join(dataDir, "telemetry");
}

/** `calls-2026-11-30.ndjson` for any ts on that UTC day. */
let cachedDay = { start: 0, end: 0, name: "" };

export function dayFileName(ts: number): string {
  // Called for every record: reuse the name while the timestamp stays within the same UTC day.
  if (ts >= cachedDay.start && ts < cachedDay.end) return cachedDay.name;
  const start = Math.floor(ts / 86_400_000) * 86_400_000;
  cachedDay = { start, end: start + 86_400_000, name: `calls-${new Date(start).toISOString().slice(0, 10)}.ndjson` };
  return cachedDay.name;
}

/** `audit-2026-11-30.ndjson` for any ts on that UTC day. */
export function auditFileName(ts: number): string {
  return `audit${dayFileName(ts).slice("calls".length)}`;
}

/** Start of the UTC day a file of this kind covers, or undefined for any other file. */
export function dayStartOfFile(name: string, kind: DayFileKind = "calls"): number | undefined {
  const m = FILE_RE.exec(name);
  if (!m || m[1] !== kind) return undefined;
  const start = Date.UTC(Number(m[2]), Number(m[3]) - 1, Number(m[4]));
  return Number.isFinite(start) && (kind === "calls" ? dayFileName(start) : auditFileName(start)) === name ? start : undefined;
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
export async function dayFiles(dataDir: string, cutoff?: number, kind: DayFileKind = "calls"): Promise<DayFile[]> {
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

/**
 * Deletes day files that lie wholly outside the retention window (their whole day ended more than
 * `retentionDays` days before `now`). Returns the names removed. Another process pruning at the
 * same time is harmless: a file already gone is skipped.
 */
export async function pruneTelemetry(
  dataDir: string,
  opts: { retentionDays?: number; now?: number } = {},
): Promise<string[]> {
  const retentionDays = opts.retentionDays ?? DEFAULT_RETENTION_DAYS;
  const cutoff = (opts.now ?? Date.now()) - retentionDays * DAY_MS;
  const removed: string[] = [];
  const all = [...(await dayFiles(dataDir)), ...(await dayFiles(dataDir, undefined, "audit"))];
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
