// What the supervisor's snapshots do not remember: when each server entered its current state,
// and its last error after it recovered. Fed by the supervisor's change events from the moment
// the daemon starts, before any server is started.
import { serverStatus, type Hub } from "../../gateway/index.js";

export interface LastError {
  message: string;
  /** ms since the epoch. */
  at: number;
  /** The last non-empty line of the (sanitised) stderr tail when the error happened. */
  stderrLine?: string;
}

interface Track {
  state: string;
  since: number;
  error?: string;
  lastError?: LastError;
  /** Set at the first error since the server was last ready: a retrying server flips between
   * failed and connecting, and "since" alone would restart with every attempt. */
  failingSince?: number;
}

export class ServerTimeline {
  private readonly tracks = new Map<string, Track>();
  private readonly off: () => void;

  constructor(
    private readonly hub: Hub,
    private readonly now: () => number = Date.now,
  ) {
    this.off = hub.supervisor.onChange((server) => this.observe(server));
    // Every server is in some state from the start (idle, waiting for its first use, included):
    // a server that never changes state would otherwise be "idle for 0s" at the first look.
    for (const server of Object.keys(hub.config.servers)) this.observe(server);
  }

  /** When the server entered its current state (ms since the epoch). */
  since(server: string): number {
    return this.observe(server)?.since ?? this.now();
  }

  /** When the current run of failed attempts began; undefined while the server is not failing. */
  failingSince(server: string): number | undefined {
    return this.observe(server)?.failingSince;
  }

  lastError(server: string): LastError | undefined {
    return this.observe(server)?.lastError;
  }

  dispose(): void {
    this.off();
  }

  private observe(server: string): Track | undefined {
    const st = serverStatus(this.hub, server);
    if (!st) {
      this.tracks.delete(server);
      return undefined;
    }
    let t = this.tracks.get(server);
    if (!t) {
      t = { state: st.state, since: this.now() };
      this.tracks.set(server, t);
    } else if (t.state !== st.state) {
      t.state = st.state;
      t.since = this.now();
    }
    if (st.error && st.error !== t.error) {
      const line = lastLine(st.stderrTail);
      t.lastError = { message: st.error, at: this.now(), ...(line ? { stderrLine: line } : {}) };
    }
    t.error = st.error;
    if (st.state === "ready" || !st.enabled) t.failingSince = undefined;
    else if (st.error && t.failingSince === undefined) t.failingSince = t.lastError?.at ?? this.now();
    return t;
  }
}

/** The last non-blank line of a text, trimmed; undefined when there is none. */
export function lastLine(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = (lines[i] ?? "").trim();
    if (l) return l;
  }
  return undefined;
}
