// Logging levels as the pass-through applies them: each session's `logging/setLevel` is
// remembered on its peer; a connection gets the most verbose level of the sessions it serves (its
// own session for a dedicated connection), sent only when it changes and again after a reconnect.
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { Supervisor } from "../../downstream/supervisor.js";
import { errorText } from "../../util/errors.js";
import { connKey, ownedBy } from "./keys.js";
import { severity, type UpstreamPeer } from "./peer.js";

export interface LevelDeps {
  supervisor: () => Supervisor;
  timeoutMs: number;
  warn: (message: string) => void;
  /** The sessions a connection serves: its owner for a dedicated one, else every session using it. */
  sessionsOf: (server: string, connection?: string) => UpstreamPeer[];
}

export class LogLevels {
  /** connection key → the level last sent. */
  private readonly applied = new Map<string, LoggingLevel>();

  constructor(private readonly deps: LevelDeps) {}

  /** Sends the connection its level when that changed (connected servers declaring logging only). */
  async apply(server: string, connection?: string): Promise<void> {
    const supervisor = this.deps.supervisor();
    const snap = supervisor.connectionSnapshot(server, connection);
    if (!snap?.connected || !snap.capabilities?.logging) return; // applied on connect instead
    const level = this.desired(server, connection);
    const key = connKey(server, connection);
    if (level === undefined || this.applied.get(key) === level) return;
    this.applied.set(key, level);
    try {
      await supervisor.setLoggingLevel(server, level, { ...(connection !== undefined ? { connection } : {}), timeoutMs: this.deps.timeoutMs });
    } catch (err) {
      if (this.applied.get(key) === level) this.applied.delete(key);
      this.deps.warn(`${server}: logging/setLevel ${level} failed: ${errorText(err)}`);
    }
  }

  /** A connection reconnected: its new downstream session has no level yet. */
  reconnected(server: string, connection?: string): void {
    this.applied.delete(connKey(server, connection));
    void this.apply(server, connection);
  }

  /** A session's dedicated connections are gone. */
  forget(sessionId: string): void {
    for (const key of [...this.applied.keys()]) if (ownedBy(key, sessionId)) this.applied.delete(key);
  }

  private desired(server: string, connection?: string): LoggingLevel | undefined {
    let best: LoggingLevel | undefined;
    for (const p of this.deps.sessionsOf(server, connection)) {
      if (p.level !== undefined && (best === undefined || severity(p.level) < severity(best))) best = p.level;
    }
    return best;
  }
}
