// The daemon's table of open MCP sessions and their lifetime. A harness that goes away without a
// DELETE leaves its session behind; without expiry the daemon would keep every one of them (and
// their SDK servers and listeners) forever. So:
//  - a session with no request in flight and no open stream for `idleMs` is closed by a sweep;
//  - each agent may hold at most `perAgent` sessions: a new one evicts that agent's longest-idle
//    session, and is refused (the caller answers 429) only when every one of them is busy;
//  - a closed session's id is simply gone, so the transport answers 404 and clients re-initialize.
// Transport-agnostic on purpose: the listener calls add/get/activity/admit; closing is the
// entry's own `close()`.
import { releaseMemory } from "../../util/memory.js";

export interface SessionLimits {
  /** Close a session after this long without requests or open streams. */
  idleMs: number;
  /** Open sessions per agent (the unscoped daemon counts as one agent). */
  perAgent: number;
}

export interface Closable {
  close(): Promise<void>;
}

interface Row<T> {
  value: T;
  agent: string;
  /** Requests or streams of this session still open. */
  open: number;
  /** When it last became idle (or was created). */
  idleSince: number;
  opened: number;
  /** When its latest request started. */
  lastSeen: number;
}

/** A full collection after closing this many sessions at once gives their memory back promptly. */
const COLLECT_AFTER = 64;

export class SessionTable<T extends Closable> {
  private readonly rows = new Map<string, Row<T>>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly limits: SessionLimits,
    private readonly hooks: { now?: () => number; onClosed?: (count: number) => void } = {},
  ) {}

  private now(): number {
    return this.hooks.now?.() ?? Date.now();
  }

  get size(): number {
    return this.rows.size;
  }

  countFor(agent: string | undefined): number {
    const key = agent ?? "";
    let n = 0;
    for (const r of this.rows.values()) if (r.agent === key) n++;
    return n;
  }

  add(id: string, agent: string | undefined, value: T): void {
    const now = this.now();
    this.rows.set(id, { value, agent: agent ?? "", open: 0, idleSince: now, opened: now, lastSeen: now });
  }

  /** Who holds a session and since when (for the status page). */
  list(): { agent: string | undefined; opened: number; lastSeen: number }[] {
    return [...this.rows.values()].map((r) => ({ agent: r.agent === "" ? undefined : r.agent, opened: r.opened, lastSeen: r.lastSeen }));
  }

  get(id: string): { value: T; agent: string | undefined } | undefined {
    const r = this.rows.get(id);
    return r ? { value: r.value, agent: r.agent === "" ? undefined : r.agent } : undefined;
  }

  /** Forgets a session (it closed by itself, or was deleted). */
  delete(id: string): void {
    this.rows.delete(id);
  }

  /** A request or stream of the session started; call the returned function when it ends. */
  activity(id: string): () => void {
    const r = this.rows.get(id);
    if (!r) return () => {};
    r.open++;
    r.lastSeen = this.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      r.open--;
      if (r.open === 0) r.idleSince = this.now();
    };
  }

  /**
   * Makes room for one more session of `agent`: at the cap its longest-idle session is closed.
   * False when the agent is at the cap and every session is busy.
   */
  async admit(agent: string | undefined): Promise<boolean> {
    const key = agent ?? "";
    const mine = [...this.rows.entries()].filter(([, r]) => r.agent === key);
    if (mine.length < this.limits.perAgent) return true;
    const idle = mine.filter(([, r]) => r.open === 0).sort((a, b) => a[1].idleSince - b[1].idleSince);
    const excess = mine.length - this.limits.perAgent + 1;
    if (idle.length < excess) return false;
    await this.closeRows(idle.slice(0, excess).map(([id]) => id));
    return true;
  }

  /** Closes every session idle for longer than the limit; returns how many. */
  async sweep(): Promise<number> {
    const cutoff = this.now() - this.limits.idleMs;
    const stale = [...this.rows.entries()].filter(([, r]) => r.open === 0 && r.idleSince <= cutoff).map(([id]) => id);
    await this.closeRows(stale);
    return stale.length;
  }

  /** Sweeps periodically (a fraction of the idle limit, at most once a minute) until stop(). */
  start(): void {
    if (this.timer) return;
    const every = Math.max(100, Math.min(60_000, Math.floor(this.limits.idleMs / 4)));
    this.timer = setInterval(() => void this.sweep(), every);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Closes every session (shutdown). */
  async closeAll(): Promise<void> {
    this.stop();
    await this.closeRows([...this.rows.keys()]);
  }

  private async closeRows(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const values: T[] = [];
    for (const id of ids) {
      const r = this.rows.get(id);
      if (!r) continue;
      this.rows.delete(id);
      values.push(r.value);
    }
    await Promise.all(values.map((v) => v.close().catch(() => undefined)));
    this.hooks.onClosed?.(values.length);
    if (values.length >= COLLECT_AFTER) releaseMemory();
  }
}
