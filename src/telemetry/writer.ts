// The recording side. `record()` is synchronous and cheap: it encodes the line and queues it; a
// single background drain appends queued lines to the day's segment of the store's log: through an
// O_APPEND descriptor on the files (each write() carries only whole lines, a batch capped well
// below any size at which a local filesystem would split it, so the kernel positions every write
// at the current end of file and several gateway processes appending at once never interleave or
// overwrite each other's records), one multi-row INSERT per batch on PostgreSQL. Telemetry is best
// effort: nothing here ever throws into a proxied call; failures are counted.
import { storeOf, type AppendLog, type Store } from "../store/index.js";
import { encodeAudit, type AuditRecord } from "./audit.js";
import { auditFileName, dayFileName, ensureTelemetryDir, pruneTelemetry, DEFAULT_RETENTION_DAYS } from "./files.js";
import { encodeRecord, type CallRecord } from "./record.js";

/** Upper bound for one write(): complete lines only, far below sizes where writes get split. */
const MAX_BATCH_BYTES = 64 * 1024;
/** How long records wait to be written together. */
const WRITE_DELAY_MS = 20;
/** Lines waiting for the disk beyond this are dropped (and counted): memory stays bounded. */
const MAX_QUEUED = 100_000;

export interface TelemetryOptions {
  dataDir: string;
  /** Where the records go (default: the data directory's files). */
  store?: Store;
  /** Day files older than this are pruned when the writer opens and at each new day. Default 30. */
  retentionDays?: number;
}

/**
 * A queued line. A call record is kept as it came and encoded when its batch is written (off the
 * call's path: record() runs before the call's answer goes out); an audit record is encoded at
 * once (a malformed one is refused there, and counted).
 */
interface Pending {
  file: string | undefined;
  line: string | undefined;
  call: CallRecord | undefined;
}

/** The record's day file and line, encoding it now if it was queued as a record. */
function encoded(p: Pending): { file: string; line: string } {
  if (p.file === undefined || p.line === undefined) {
    const r = p.call as CallRecord;
    p.file = dayFileName(r.ts);
    p.line = encodeRecord(r);
    p.call = undefined;
  }
  return p as { file: string; line: string };
}

export class Telemetry {
  private readonly queue: Pending[] = [];
  private readonly log: AppendLog;
  private draining: Promise<void> | undefined;
  private scheduled: NodeJS.Timeout | undefined;
  /** The segment the last batch went to: a new one (a new day) is a good moment to prune. */
  private segment: string | undefined;
  private pruning: Promise<void> | undefined;
  private closed = false;
  private droppedCount = 0;
  private auditListener: ((r: AuditRecord) => void) | undefined;

  private constructor(
    private readonly store: Store,
    private readonly retentionDays: number,
  ) {
    if (store.kind === "files") ensureTelemetryDir(store.where);
    this.log = store.log();
  }

  /** Opens (creating 0700 directories) and prunes expired day files in the background. */
  static open(opts: TelemetryOptions): Telemetry {
    const days = opts.retentionDays ?? DEFAULT_RETENTION_DAYS;
    if (!Number.isFinite(days) || days <= 0) throw new Error(`telemetry retention must be a positive number of days, got ${days}`);
    const t = new Telemetry(storeOf(opts.store ?? opts.dataDir), days);
    t.prune();
    return t;
  }

  /** Records that could not be written (I/O failure, a full queue, or recorded after close). */
  get dropped(): number {
    return this.droppedCount;
  }

  record(r: CallRecord): void {
    this.enqueue(() => ({ file: undefined, line: undefined, call: Number.isFinite(r.ts) && r.ts > 0 ? r : { ...r, ts: Date.now() } }));
  }

  /** Hears every audit record as it is written (the metrics count guardrail events). */
  onAudit(listener: (r: AuditRecord) => void): void {
    this.auditListener = listener;
  }

  /** An audit record of the guardrails (same queue and guarantees, its own day file). */
  audit(r: AuditRecord): void {
    try {
      this.auditListener?.(r);
    } catch {
      // Metrics are best effort, as the record itself is.
    }
    this.enqueue(() => {
      const ts = Number.isFinite(r.ts) && r.ts > 0 ? r.ts : Date.now();
      const line = encodeAudit({ ...r, ts });
      if (line === undefined) throw new Error("not an audit record");
      return { file: auditFileName(ts), line, call: undefined };
    });
  }

  private enqueue(encode: () => Pending): void {
    if (this.closed || this.queue.length >= MAX_QUEUED) {
      this.droppedCount++;
      return;
    }
    try {
      this.queue.push(encode());
    } catch {
      this.droppedCount++;
      return;
    }
    this.kick();
  }

  private kick(): void {
    if (this.draining || this.scheduled) return;
    // Records are gathered for a moment and written together: one write() per call costs a
    // thread-pool round trip each, which showed up as a tenth of the gateway's CPU under load.
    // At most WRITE_DELAY_MS of records are lost if the process is killed outright; close()
    // and flush() write everything at once.
    this.scheduled = setTimeout(() => {
      this.scheduled = undefined;
      this.startDrain();
    }, WRITE_DELAY_MS);
    this.scheduled.unref();
  }

  private startDrain(): void {
    if (this.draining) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      // A record queued between the drain's last check and now would otherwise wait for the next.
      if (this.queue.length > 0) this.kick();
    });
  }

  /** Resolves once every record queued before the call is on disk (or counted as dropped). */
  async flush(): Promise<void> {
    if (this.scheduled) {
      clearTimeout(this.scheduled);
      this.scheduled = undefined;
      this.startDrain();
    }
    while (this.draining) await this.draining;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    await this.pruning;
    await this.log.close().catch(() => undefined);
  }

  private prune(): void {
    if (this.pruning) return;
    this.pruning = pruneTelemetry(this.store, { retentionDays: this.retentionDays })
      .then(() => undefined, () => undefined)
      .finally(() => {
        this.pruning = undefined;
      });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const first = encoded(this.queue[0] as Pending);
      let n = 0;
      let bytes = 0;
      const lines: string[] = [];
      // One batch = consecutive lines for the same day file, bounded in size.
      while (n < this.queue.length) {
        const p = encoded(this.queue[n] as Pending);
        if (p.file !== first.file || (n > 0 && bytes + p.line.length > MAX_BATCH_BYTES)) break;
        lines.push(p.line);
        bytes += p.line.length;
        n++;
      }
      this.queue.splice(0, n);
      try {
        if (this.segment !== first.file) {
          this.segment = first.file;
          this.prune(); // a new day: a good moment to drop the oldest day.
        }
        await this.log.append(first.file, lines);
      } catch {
        this.droppedCount += n;
        this.segment = undefined;
        await this.log.reset();
      }
    }
  }
}
