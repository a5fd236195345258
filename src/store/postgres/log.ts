// The append-only logs in PostgreSQL: one row per append (its whole lines, as the files would hold
// them) keyed by segment name and a serial id, so a reader resumes after the last id it saw and
// an export writes the same day files. Appends from several replicas never interleave inside a
// row; records are ordered by id, which is commit order closely enough for statistics.
import { DAY_MS, parseSegmentName } from "../segments.js";
import type { AppendLog, LogKind, LogSegment } from "../types.js";
import type { Db } from "./db.js";

const BATCH_ROWS = 500;

export class PgLog implements AppendLog {
  constructor(private readonly db: Db) {}

  async append(segment: string, lines: string[]): Promise<void> {
    if (!parseSegmentName(segment)) throw new Error(`invalid log segment ${JSON.stringify(segment)}`);
    if (lines.length === 0) return;
    await this.db.query("INSERT INTO mcphub_log (segment, lines) VALUES ($1, $2)", [segment, lines.join("")]);
  }

  async segments(kind: LogKind, cutoff?: number): Promise<LogSegment[]> {
    const rows = await this.db.query<{ segment: string }>("SELECT DISTINCT segment FROM mcphub_log WHERE segment LIKE $1", [`${kind}-%`]);
    const out: LogSegment[] = [];
    for (const { segment } of rows) {
      const parsed = parseSegmentName(segment);
      if (!parsed || parsed.kind !== kind) continue;
      if (cutoff !== undefined && parsed.dayStart + DAY_MS <= cutoff) continue;
      out.push(this.segmentOf(segment, kind, parsed.dayStart));
    }
    return out.sort((a, b) => a.dayStart - b.dayStart);
  }

  private segmentOf(name: string, kind: LogKind, dayStart: number): LogSegment {
    const db = this.db;
    return {
      name,
      kind,
      dayStart,
      size: async () => Number((await db.query<{ n: string }>("SELECT count(*)::text AS n FROM mcphub_log WHERE segment = $1", [name]))[0]?.n ?? 0),
      read: (from) => readRows(db, name, from),
    };
  }

  async prune(cutoff: number): Promise<string[]> {
    const removed: string[] = [];
    for (const kind of ["calls", "audit"] as const) {
      for (const seg of await this.segments(kind)) {
        if (seg.dayStart + DAY_MS > cutoff) continue;
        await this.db.query("DELETE FROM mcphub_log WHERE segment = $1", [seg.name]);
        removed.push(seg.name);
      }
    }
    return removed;
  }

  async drop(segment: string): Promise<boolean> {
    if (!parseSegmentName(segment)) throw new Error(`invalid log segment ${JSON.stringify(segment)}`);
    const rows = await this.db.query<{ n: string }>("WITH gone AS (DELETE FROM mcphub_log WHERE segment = $1 RETURNING 1) SELECT count(*)::text AS n FROM gone", [segment]);
    return Number(rows[0]?.n ?? 0) > 0;
  }

  async reset(): Promise<void> {
    // Nothing is held open between appends.
  }

  async close(): Promise<void> {
    // The pool belongs to the store.
  }
}

/**
 * Rows after id `from`, in batches; `end` is the last id of the batch (where to resume). Ordered
 * by the column, not the `id::text` output (a bare ORDER BY id would sort "10" before "2").
 */
async function* readRows(db: Db, segment: string, from: number): AsyncGenerator<{ text: string; end: number }> {
  let after = from;
  for (;;) {
    const rows = await db.query<{ id: string; lines: string }>("SELECT id::text AS id, lines FROM mcphub_log WHERE segment = $1 AND id > $2 ORDER BY mcphub_log.id LIMIT $3", [segment, after, BATCH_ROWS]);
    if (rows.length === 0) return;
    after = Number(rows[rows.length - 1]?.id);
    yield { text: rows.map((r) => r.lines).join(""), end: after };
    if (rows.length < BATCH_ROWS) return;
  }
}
