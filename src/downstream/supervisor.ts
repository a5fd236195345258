// The supervisor holds one Downstream per configured server and decides when a process exists:
// it starts servers now or admits them to start on first use, stops idle ones (never while a call
// or lease holds them), publishes each as soon as it is ready, applies config changes server by
// server, and tells listeners what changed. The gateway never touches a transport: it asks the
// supervisor.
import type { CallToolResult, CompleteRequest, CompleteResult, GetPromptResult, LoggingLevel, ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { isPerSession, type ServerConfig } from "../config/schema.js";
import { DEFAULT_BACKOFF } from "./backoff.js";
import { Downstream, type DownstreamDeps } from "./downstream.js";
import { connectionKey } from "./identity.js";
import { canonicalJson } from "../util/json/canonical.js";
import { NotConnectedError, type CallOptions, type DownstreamSnapshot, type SupervisorOptions } from "./types.js";

/** What reconcile() did, server names sorted. */
export interface ReconcileResult {
  added: string[];
  removed: string[];
  /** Connection settings changed (or enabled flipped): the old session was closed, a new Downstream waits. */
  restarted: string[];
  /** Only settings outside the connection changed (metadata, start, idle_timeout): kept running. */
  updated: string[];
}

export class Supervisor {
  private readonly downstreams = new Map<string, Downstream>();
  /** Connections dedicated to one upstream session: tag → server → Downstream (see CallOptions.connection). */
  private readonly dedicated = new Map<string, Map<string, Downstream>>();
  private readonly listeners = new Set<(server: string) => void>();
  private readonly pending = new Set<string>();
  private readonly deps: DownstreamDeps;
  /** Downstreams replaced or removed by reconcile() that are still closing. */
  private readonly retiring = new Set<Promise<void>>();
  private flushScheduled = false;
  private closed = false;
  private closing?: Promise<void>;

  constructor(private readonly opts: SupervisorOptions) {
    const idle = opts.idleTimeoutMs;
    this.deps = {
      allServers: opts.servers,
      clientInfo: opts.clientInfo,
      secrets: opts.secrets,
      ...(opts.auth ? { auth: opts.auth } : {}),
      connectTimeoutMs: opts.connectTimeoutMs,
      backoff: opts.backoff ?? DEFAULT_BACKOFF,
      ...(opts.maxMessageBytes !== undefined ? { maxMessageBytes: opts.maxMessageBytes } : {}),
      log: opts.log ?? (() => {}),
      changed: (server) => this.changed(server),
      idleTimeoutMs: idle ? (name, cfg) => idle(name, cfg) : () => 0,
      ...(opts.hooks ? { hooks: opts.hooks } : {}),
      ...(opts.sandboxProtect ? { sandboxProtect: opts.sandboxProtect } : {}),
    };
    for (const [name, cfg] of Object.entries(opts.servers)) this.downstreams.set(name, this.create(name, cfg));
  }

  /** A connection to one server: the shared one, or one dedicated to a session's tag. */
  private create(name: string, cfg: ServerConfig, connection?: string): Downstream {
    if (connection === undefined) return new Downstream(name, cfg, this.deps);
    // The catalogue follows the shared connection; a dedicated one changes nothing visible. The
    // shared deps are its prototype, so a reloaded connect timeout reaches it as well.
    const deps = Object.assign(Object.create(this.deps) as DownstreamDeps, { changed: () => {}, connection });
    return new Downstream(name, cfg, deps);
  }

  /**
   * Puts a new config in place for one server (enable/disable from the status page): the old
   * connection is closed and its process tree stopped; the new one is neither admitted nor
   * started (call admit or start).
   */
  async replace(name: string, cfg: ServerConfig): Promise<void> {
    if (this.closed) throw new Error("the supervisor is closed");
    const old = this.get(name);
    this.downstreams.set(name, this.create(name, cfg));
    this.changed(name);
    // Sessions' own connections follow the new config too: they reopen on their next request.
    const dedicated: Downstream[] = [];
    for (const mine of this.dedicated.values()) {
      const d = mine.get(name);
      if (d) dedicated.push(d);
      mine.delete(name);
    }
    await Promise.all([old.close(), ...dedicated.map((d) => d.close())]);
  }

  /** Drops and re-opens one server's connection at once (see Downstream.reconnect). */
  reconnect(name: string): void {
    this.get(name).reconnect();
  }

  /**
   * Connects these enabled servers concurrently (default: every enabled server). Servers not
   * named are never spawned and their secrets are never resolved. May be called again to start
   * more; already started servers are left alone.
   */
  start(names?: string[]): void {
    for (const d of this.chosen(names)) d.start();
  }

  /**
   * Lets these servers start on first use (a call, prompt or resource read) without starting
   * them now; until then their state is `idle`. Servers neither admitted nor started are never
   * spawned.
   */
  admit(names: string[]): void {
    for (const d of this.chosen(names)) d.admit();
  }

  /** Calls in flight plus leases held on this server (0 for unknown servers). */
  busy(name: string): number {
    return this.downstreams.get(name)?.busy ?? 0;
  }

  /**
   * Applies a new set of server configs (hot reload). Removed servers are closed; servers whose
   * connection changed are closed and replaced by a fresh, not yet admitted Downstream (the
   * caller decides whether it starts now or on first use); others keep their sessions and
   * in-flight calls and only take the new settings.
   */
  reconcile(servers: Record<string, ServerConfig>): ReconcileResult {
    if (this.closed) throw new Error("the supervisor is closed");
    const out: ReconcileResult = { added: [], removed: [], restarted: [], updated: [] };
    this.deps.allServers = servers;
    for (const [name, d] of [...this.downstreams]) {
      if (Object.hasOwn(servers, name)) continue;
      this.downstreams.delete(name);
      this.retire(d, "it was removed from the configuration");
      this.retireDedicated(name, "it was removed from the configuration");
      out.removed.push(name);
      this.changed(name);
    }
    for (const [name, cfg] of Object.entries(servers)) {
      const d = this.downstreams.get(name);
      if (!d) {
        this.downstreams.set(name, this.create(name, cfg));
        out.added.push(name);
        this.changed(name);
      } else if (connectionKey(d.cfg) !== connectionKey(cfg)) {
        this.retire(d, "its configuration changed and it was restarted");
        this.retireDedicated(name, "its configuration changed and it was restarted");
        this.downstreams.set(name, this.create(name, cfg));
        out.restarted.push(name);
        this.changed(name);
      } else if (canonicalJson(d.cfg) !== canonicalJson(cfg)) {
        d.updateConfig(cfg);
        for (const mine of this.dedicated.values()) mine.get(name)?.updateConfig(cfg);
        out.updated.push(name);
        this.changed(name);
      }
    }
    for (const list of Object.values(out)) list.sort();
    return out;
  }

  /**
   * Ends a server's current session (if any) and puts a fresh Downstream in its place that is
   * neither admitted nor started: e.g. it left this gateway's scope on reload.
   */
  reset(name: string, reason: string): void {
    const d = this.get(name);
    this.retire(d, reason);
    this.retireDedicated(name, reason);
    this.downstreams.set(name, this.create(name, d.cfg));
    this.changed(name);
  }

  /** Resolves once every server replaced or removed by reconcile()/reset() has finished closing. */
  async settled(): Promise<void> {
    while (this.retiring.size > 0) await Promise.all([...this.retiring]);
  }

  /** Connect timeout for attempts that start from now on (hot reload). */
  setConnectTimeout(ms: number): void {
    this.deps.connectTimeoutMs = ms;
  }

  /** Undefined for unknown servers and for enabled servers that were neither admitted nor started. */
  snapshot(name: string): DownstreamSnapshot | undefined {
    const d = this.downstreams.get(name);
    if (!d || (!d.isAdmitted && d.cfg.enabled)) return undefined;
    return d.snapshot();
  }

  /** Whether snapshot(name)?.connected would be true, without building the snapshot. */
  isConnected(name: string): boolean {
    const d = this.downstreams.get(name);
    return d !== undefined && (d.isAdmitted || !d.cfg.enabled) && d.connected;
  }

  /** Admitted, started and disabled servers, sorted by name. */
  snapshots(): DownstreamSnapshot[] {
    return [...this.downstreams.keys()]
      .sort()
      .map((n) => this.snapshot(n))
      .filter((s): s is DownstreamSnapshot => s !== undefined);
  }

  /** Called with a server's name when its state, error or lists changed; bursts are coalesced. */
  onChange(listener: (server: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once the server is ready; NotConnectedError says why it is not. */
  async waitForServer(name: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<DownstreamSnapshot> {
    const d = this.get(name);
    await d.waitReady(opts.timeoutMs, opts.signal);
    return d.snapshot();
  }

  /** Calls a tool by its wire name. `isError` results are normal results. */
  callTool(server: string, wireTool: string, args: Record<string, unknown>, opts?: CallOptions): Promise<CallToolResult> {
    // Not async: the call's own promise is handed back, one hop fewer on every call.
    try {
      return this.pick(server, opts).callTool(wireTool, args, opts) as Promise<CallToolResult>;
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  async readResource(server: string, uri: string, opts?: CallOptions): Promise<ReadResourceResult> {
    return this.pick(server, opts).readResource(uri, opts);
  }

  async getPrompt(server: string, name: string, args: Record<string, string> | undefined, opts?: CallOptions): Promise<GetPromptResult> {
    return this.pick(server, opts).getPrompt(name, args, opts);
  }

  async complete(server: string, params: CompleteRequest["params"], opts?: CallOptions): Promise<CompleteResult> {
    return this.pick(server, opts).complete(params, opts);
  }

  async subscribeResource(server: string, uri: string, opts?: CallOptions): Promise<void> {
    await this.pick(server, opts).subscribeResource(uri, opts);
  }

  async unsubscribeResource(server: string, uri: string, opts?: CallOptions): Promise<void> {
    await this.pick(server, opts).unsubscribeResource(uri, opts);
  }

  async setLoggingLevel(server: string, level: LoggingLevel, opts?: CallOptions): Promise<void> {
    await this.pick(server, opts).setLoggingLevel(level, opts);
  }

  /** Tells one connection the client's roots changed (skipped while it is not connected). */
  async sendRootsListChanged(server: string, opts?: CallOptions): Promise<void> {
    const d = this.existing(server, opts?.connection);
    await d?.sendRootsListChanged();
  }

  /**
   * Holds a connection against idle stopping (a subscription, a stream, a long-lived detached
   * call) until the returned release is called (idempotent). Calls through the supervisor hold
   * one by themselves while in flight. See Downstream.lease.
   */
  lease(server: string, opts?: CallOptions): () => void {
    return this.pick(server, opts).lease();
  }

  /** The ready state and declared capabilities of one connection, without starting anything. */
  connectionSnapshot(server: string, connection?: string): DownstreamSnapshot | undefined {
    if (connection === undefined) return this.snapshot(server);
    return this.dedicated.get(connection)?.get(server)?.snapshot();
  }

  /** The servers a dedicated connection tag has open. */
  dedicatedServers(connection: string): string[] {
    return [...(this.dedicated.get(connection)?.keys() ?? [])].sort();
  }

  /** Closes every connection opened for one upstream session (its processes are killed). */
  async closeConnections(connection: string): Promise<void> {
    const mine = this.dedicated.get(connection);
    if (!mine) return;
    this.dedicated.delete(connection);
    await Promise.all([...mine.values()].map((d) => d.close()));
  }

  /** Skips the backoff wait of one server (or all), e.g. after the vault was unlocked. */
  retryNow(name?: string): void {
    for (const d of name === undefined ? this.downstreams.values() : [this.get(name)]) d.retryNow();
  }

  /** Stops reconnecting, closes every session and kills every stdio process tree. Idempotent. */
  close(): Promise<void> {
    if (!this.closing) {
      this.closed = true;
      const all = [...this.downstreams.values(), ...[...this.dedicated.values()].flatMap((m) => [...m.values()])];
      this.dedicated.clear();
      this.closing = Promise.all([...all.map((d) => d.close()), ...this.retiring]).then(() => undefined);
    }
    return this.closing;
  }

  private chosen(names: string[] | undefined): Downstream[] {
    if (this.closed) throw new Error("the supervisor is closed");
    const chosen = names ?? [...this.downstreams.keys()];
    const unknown = chosen.filter((n) => !this.downstreams.has(n));
    if (unknown.length > 0) throw new Error(`cannot start unknown server(s): ${unknown.join(", ")}`);
    return chosen.map((n) => this.downstreams.get(n) as Downstream);
  }

  private retire(d: Downstream, reason: string): void {
    const p: Promise<void> = d.close(reason).finally(() => this.retiring.delete(p));
    this.retiring.add(p);
  }

  /** Sessions' own connections to a server follow its config: closed now, reopened on next use. */
  private retireDedicated(name: string, reason: string): void {
    for (const mine of this.dedicated.values()) {
      const d = mine.get(name);
      if (!d) continue;
      mine.delete(name);
      this.retire(d, reason);
    }
  }

  /**
   * The connection a request goes to: the shared one, or for a `connection: per-session` server
   * asked with a tag, the tag's own connection, opened on first use.
   */
  private pick(name: string, opts?: CallOptions): Downstream {
    const shared = this.get(name);
    const tag = opts?.connection;
    if (tag === undefined || !isPerSession(shared.cfg) || !shared.cfg.enabled) return shared;
    if (this.closed) return shared; // its requests fail with "shutting down"
    let mine = this.dedicated.get(tag);
    if (!mine) {
      mine = new Map();
      this.dedicated.set(tag, mine);
    }
    let d = mine.get(name);
    if (!d) {
      d = this.create(name, shared.cfg, tag);
      mine.set(name, d);
      d.start();
    }
    return d;
  }

  private existing(name: string, tag: string | undefined): Downstream | undefined {
    return tag === undefined ? this.downstreams.get(name) : this.dedicated.get(tag)?.get(name);
  }

  private get(name: string): Downstream {
    const d = this.downstreams.get(name);
    if (!d) {
      const known = [...this.downstreams.keys()].sort();
      throw new NotConnectedError(
        name,
        "unknown",
        `unknown server "${name}"${known.length ? `; configured servers: ${known.join(", ")}` : " (no servers are configured)"}`,
      );
    }
    return d;
  }

  private changed(server: string): void {
    this.pending.add(server);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      const servers = [...this.pending].sort();
      this.pending.clear();
      for (const s of servers) {
        for (const l of [...this.listeners]) {
          try {
            l(s);
          } catch (err) {
            this.opts.log?.("error", `change listener failed: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      }
    });
  }
}
