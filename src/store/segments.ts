// Names of log segments: one per kind and UTC day, `calls-YYYY-MM-DD.ndjson` and
// `audit-YYYY-MM-DD.ndjson`. A record goes to the segment of the day of its own `ts`, so a
// segment's name bounds the timestamps inside it and a time window selects segments by name. The
// files store uses the names as file names; PostgreSQL keys its rows by them, so an export writes
// the same files.
import type { LogKind } from "./types.js";

export const DAY_MS = 86_400_000;

const NAME_RE = /^(calls|audit)-(\d{4})-(\d{2})-(\d{2})\.ndjson$/;

let cachedDay = { start: 0, end: 0, name: "" };

/** `calls-2026-11-30.ndjson` for any ts on that UTC day. */
export function dayFileName(ts: number): string {
  // Called for every record: reuse the name while the timestamp stays within the same UTC day.
  if (ts >= cachedDay.start && ts < cachedDay.end) return cachedDay.name;
  const start = Math.floor(ts / DAY_MS) * DAY_MS;
  cachedDay = { start, end: start + DAY_MS, name: `calls-${new Date(start).toISOString().slice(0, 10)}.ndjson` };
  return cachedDay.name;
}

/** `audit-2026-11-30.ndjson` for any ts on that UTC day. */
export function auditFileName(ts: number): string {
  return `audit${dayFileName(ts).slice("calls".length)}`;
}

/** Start of the UTC day a segment of this kind covers, or undefined for any other name. */
export function dayStartOfFile(name: string, kind: LogKind = "calls"): number | undefined {
  const m = NAME_RE.exec(name);
  if (!m || m[1] !== kind) return undefined;
  const start = Date.UTC(Number(m[2]), Number(m[3]) - 1, Number(m[4]));
  return Number.isFinite(start) && (kind === "calls" ? dayFileName(start) : auditFileName(start)) === name ? start : undefined;
}

/** The kind and day of a segment name, or undefined when it is not one. */
export function parseSegmentName(name: string): { kind: LogKind; dayStart: number } | undefined {
  for (const kind of ["calls", "audit"] as const) {
    const dayStart = dayStartOfFile(name, kind);
    if (dayStart !== undefined) return { kind, dayStart };
  }
  return undefined;
}
