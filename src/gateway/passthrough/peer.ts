// One upstream session as the pass-through sees it: the SDK Server it speaks through, the agent
// view it is bound to, what its client declared, its logging level, and whether it has finished
// initializing. Nothing here routes; the router (router.ts) decides what reaches which peer.
import { randomUUID } from "node:crypto";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { ClientCapabilities, LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { AgentView } from "../view.js";

/** Severity order of MCP logging levels (RFC 5424), least severe first. */
export const LOG_LEVELS: readonly LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

export function severity(level: LoggingLevel): number {
  return LOG_LEVELS.indexOf(level);
}

export class UpstreamPeer {
  /** Also the tag of its dedicated downstream connections (`connection: per-session`). */
  readonly id = randomUUID();
  /** The level the client asked for with logging/setLevel; undefined = never asked. */
  level: LoggingLevel | undefined;
  closed = false;
  private initialized = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly server: Server,
    readonly view: AgentView,
  ) {}

  get agent(): string | undefined {
    return this.view.agent;
  }

  /** What the client declared in initialize (undefined before it did). */
  get capabilities(): ClientCapabilities | undefined {
    return this.server.getClientCapabilities();
  }

  /** Called on notifications/initialized. */
  markInitialized(): void {
    this.initialized = true;
    for (const w of [...this.waiters]) w();
  }

  /** Called when the session ends: wakes every waiter (they then see `closed`). */
  markClosed(): void {
    this.closed = true;
    for (const w of [...this.waiters]) w();
  }

  /**
   * Resolves true once the client is initialized, false when the session closed or the wait
   * timed out. A downstream may ask (roots/list right after its own handshake) before the
   * harness has finished initializing the gateway.
   */
  whenInitialized(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.initialized || this.closed) return Promise.resolve(this.initialized && !this.closed);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.waiters.delete(done);
        resolve(this.initialized && !this.closed);
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      signal?.addEventListener("abort", done, { once: true });
      this.waiters.add(done);
    });
  }

  /** Whether a log message of this level passes the client's requested level. */
  wantsLog(level: LoggingLevel): boolean {
    return this.level === undefined || severity(level) >= severity(this.level);
  }
}
