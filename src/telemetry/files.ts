// Where telemetry lives: one append-only NDJSON segment per UTC day and kind in the store's log
// (`<dataDir>/telemetry/calls-YYYY-MM-DD.ndjson` and `audit-YYYY-MM-DD.ndjson` on the files store;
// rows in PostgreSQL). A record goes to the segment of the day of its own `ts`, so a segment's
// name bounds the timestamps inside it and a time window selects segments by name. The naming and
// the day files themselves are the store's (src/store/segments.ts, src/store/files/log.ts).
import { storeOf, type Store } from "../store/index.js";

export { DAY_MS, auditFileName, dayFileName, dayStartOfFile, dayFiles, ensureTelemetryDir, telemetryDir, type DayFile } from "../store/index.js";
export type { LogKind as DayFileKind } from "../store/index.js";

export const DEFAULT_RETENTION_DAYS = 30;
const DAY = 86_400_000;

/**
 * Deletes day segments that lie wholly outside the retention window (their whole day ended more
 * than `retentionDays` days before `now`). Returns the names removed. Another process pruning at
 * the same time is harmless: a segment already gone is skipped.
 */
export async function pruneTelemetry(where: string | Store, opts: { retentionDays?: number; now?: number } = {}): Promise<string[]> {
  const retentionDays = opts.retentionDays ?? DEFAULT_RETENTION_DAYS;
  const cutoff = (opts.now ?? Date.now()) - retentionDays * DAY;
  const log = storeOf(where).log();
  try {
    return await log.prune(cutoff);
  } finally {
    await log.close();
  }
}
