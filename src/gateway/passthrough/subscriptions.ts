// Resource subscriptions as the pass-through keeps them: one downstream subscription per
// connection and URI, shared by every upstream session that subscribed to it (reference counted),
// each remembered with the URI it used (its public form) so updates go back under that name.
// Re-sent after the connection reconnects; released with the last session that holds it.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Supervisor } from "../../downstream/supervisor.js";
import type { ConnectionOrigin } from "../../downstream/types.js";
import { errorText } from "../../util/errors.js";
import { toWire, WireError } from "./errors.js";
import { connKey } from "./keys.js";

interface Subscription {
  server: string;
  connection?: string;
  uri: string;
  /** session id → the URI that session subscribed with. */
  holders: Map<string, string>;
  ready: Promise<void>;
  /** Ends the lease that keeps the server running while it is subscribed to. */
  release?: () => void;
}

export interface SubscriptionDeps {
  supervisor: () => Supervisor;
  timeoutMs: number;
  warn: (message: string) => void;
  /** Whether a dedicated connection's session is still there (a closing one is not unsubscribed). */
  sessionAlive: (sessionId: string) => boolean;
}

export class Subscriptions {
  private readonly subs = new Map<string, Subscription>();

  constructor(private readonly deps: SubscriptionDeps) {}

  get size(): number {
    return this.subs.size;
  }

  /** Subscribes one session; the first holder of a (connection, URI) subscribes downstream. */
  async subscribe(sessionId: string, server: string, connection: string | undefined, uri: string, publicUri: string): Promise<void> {
    const key = subKey(server, connection, uri);
    let sub = this.subs.get(key);
    if (!sub) {
      const created: Subscription = { server, ...(connection !== undefined ? { connection } : {}), uri, holders: new Map(), ready: Promise.resolve() };
      created.ready = (async () => {
        this.checkSubscribable(server, connection);
        const opts = this.opts(connection);
        await this.deps.supervisor().subscribeResource(server, uri, opts);
        // A subscription keeps its server running (see Downstream.lease).
        created.release = this.deps.supervisor().lease(server, opts);
        if (this.subs.get(key) !== created) this.releaseDownstream(created);
      })();
      sub = created;
      this.subs.set(key, sub);
    }
    sub.holders.set(sessionId, publicUri);
    try {
      await sub.ready;
    } catch (err) {
      if (this.subs.get(key) === sub) this.subs.delete(key);
      throw err instanceof McpError || err instanceof WireError ? toWire(err) : new WireError(ErrorCode.InternalError, `subscribe ${publicUri}: ${errorText(err)}`);
    }
  }

  unsubscribe(sessionId: string, server: string, connection: string | undefined, uri: string): void {
    const key = subKey(server, connection, uri);
    const sub = this.subs.get(key);
    if (sub && sub.holders.delete(sessionId) && sub.holders.size === 0) this.drop(key, sub);
  }

  /** A session ended: it lets go of everything it held. */
  releaseSession(sessionId: string): void {
    for (const [key, sub] of this.subs) {
      if (sub.holders.delete(sessionId) && sub.holders.size === 0) this.drop(key, sub);
    }
  }

  /** Who is subscribed to this URI on this connection, each with the URI it subscribed with. */
  holders(origin: ConnectionOrigin, uri: string): ReadonlyMap<string, string> {
    return this.subs.get(subKey(origin.server, origin.connection, uri))?.holders ?? new Map();
  }

  /** The connection reconnected: its new downstream session knows none of them yet. */
  resubscribe(origin: ConnectionOrigin): void {
    for (const sub of this.subs.values()) {
      if (sub.server !== origin.server || sub.connection !== origin.connection) continue;
      void sub.ready
        .then(() => this.deps.supervisor().subscribeResource(sub.server, sub.uri, this.opts(sub.connection)))
        .catch((err: unknown) => this.deps.warn(`${sub.server}: re-subscribing to ${sub.uri} after a reconnect failed: ${errorText(err)}`));
    }
  }

  private opts(connection: string | undefined) {
    return { ...(connection !== undefined ? { connection } : {}), timeoutMs: this.deps.timeoutMs };
  }

  private checkSubscribable(server: string, connection?: string): void {
    const snap = this.deps.supervisor().connectionSnapshot(server, connection);
    if (snap?.connected && !snap.capabilities?.resources?.subscribe) {
      throw new WireError(ErrorCode.MethodNotFound, `server "${server}" does not support resource subscriptions`);
    }
  }

  private drop(key: string, sub: Subscription): void {
    if (this.subs.get(key) !== sub) return;
    this.subs.delete(key);
    void sub.ready.then(
      () => this.releaseDownstream(sub),
      () => undefined,
    );
  }

  private releaseDownstream(sub: Subscription): void {
    sub.release?.();
    sub.release = undefined;
    const connection = sub.connection;
    if (connection !== undefined && !this.deps.sessionAlive(connection)) return; // that connection is closing
    const supervisor = this.deps.supervisor();
    if (!supervisor.connectionSnapshot(sub.server, connection)?.connected) return;
    void supervisor
      .unsubscribeResource(sub.server, sub.uri, this.opts(connection))
      .catch((err: unknown) => this.deps.warn(`${sub.server}: unsubscribing from ${sub.uri} failed: ${errorText(err)}`));
  }
}

function subKey(server: string, connection: string | undefined, uri: string): string {
  return `${connKey(server, connection)}\u0001${uri}`;
}
