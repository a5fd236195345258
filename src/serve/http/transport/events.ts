// The session's event log: what was sent on its SSE streams, kept so that a client whose stream
// broke can reconnect with Last-Event-ID (GET) and receive what it missed, as the streamable HTTP
// transport's resumability asks. Only SSE streams write here: a plain JSON answer has nothing to
// resume. Event ids are `<stream>.<seq>`, seq counting across the whole session, so an id names
// its stream and its place in it. Memory is bounded per session (oldest events go first), and a
// stream that finished on a live connection is forgotten at once.

/** Per session: the most events and bytes kept for replay. */
export const EVENT_LOG_LIMITS = { events: 1000, bytes: 4 * 1024 * 1024 };

interface Stored {
  seq: number;
  data: string;
}

interface StreamLog {
  events: Stored[];
  /** Its exchange has every answer: a resume replays and ends. */
  complete: boolean;
}

export class EventLog {
  private seq = 0;
  private readonly streams = new Map<string, StreamLog>();
  /** Every stored event in order, for eviction; entries of forgotten streams are skipped. */
  private readonly order: { stream: string; seq: number; bytes: number }[] = [];
  private bytes = 0;
  private count = 0;

  constructor(private readonly limits = EVENT_LOG_LIMITS) {}

  /** A new id on `stream` (stored or not: a priming event takes one without data). */
  nextId(stream: string): string {
    return `${stream}.${++this.seq}`;
  }

  /** Stores `data` under the id just taken by nextId(). */
  append(stream: string, id: string, data: string): void {
    let log = this.streams.get(stream);
    if (!log) {
      log = { events: [], complete: false };
      this.streams.set(stream, log);
    }
    const seq = seqOf(id);
    log.events.push({ seq, data });
    this.order.push({ stream, seq, bytes: data.length });
    this.bytes += data.length;
    this.count++;
    while (this.count > this.limits.events || this.bytes > this.limits.bytes) this.evictOldest();
  }

  has(stream: string): boolean {
    return this.streams.has(stream);
  }

  markComplete(stream: string): void {
    const log = this.streams.get(stream);
    if (log) log.complete = true;
  }

  isComplete(stream: string): boolean {
    return this.streams.get(stream)?.complete === true;
  }

  /** The events of `stream` after seq `after`, oldest first. */
  after(stream: string, after: number): { id: string; data: string }[] {
    const log = this.streams.get(stream);
    if (!log) return [];
    return log.events.filter((e) => e.seq > after).map((e) => ({ id: `${stream}.${e.seq}`, data: e.data }));
  }

  forget(stream: string): void {
    const log = this.streams.get(stream);
    if (!log) return;
    this.streams.delete(stream);
    for (const e of log.events) {
      this.bytes -= e.data.length;
      this.count--;
    }
    // Their entries in `order` are skipped by evictOldest; rebuilt when they outnumber the rest.
    if (this.streams.size === 0) this.order.length = 0;
    else if (this.order.length > 2 * this.count + 64) this.compact();
  }

  private compact(): void {
    const kept = new Set<number>();
    for (const log of this.streams.values()) for (const e of log.events) kept.add(e.seq);
    const live = this.order.filter((o) => kept.has(o.seq));
    this.order.length = 0;
    this.order.push(...live);
  }

  private evictOldest(): void {
    for (;;) {
      const first = this.order.shift();
      if (!first) return;
      const log = this.streams.get(first.stream);
      if (log?.events[0]?.seq !== first.seq) continue; // forgotten already
      log.events.shift();
      this.bytes -= first.bytes;
      this.count--;
      return;
    }
  }
}

/** `<stream>.<seq>` → its parts, or undefined for anything else. */
export function parseEventId(id: string): { stream: string; seq: number } | undefined {
  const dot = id.lastIndexOf(".");
  if (dot <= 0) return undefined;
  const seq = Number(id.slice(dot + 1));
  if (!Number.isSafeInteger(seq) || seq < 0) return undefined;
  return { stream: id.slice(0, dot), seq };
}

function seqOf(id: string): number {
  return Number(id.slice(id.lastIndexOf(".") + 1));
}
