// One downstream server: its state machine (idle → connecting → ready → failed/locked/needs_auth,
// or disabled), start on first use, stop when idle (never while leased), background reconnect with
// backoff, coalesced re-lists on list_changed, and calls with timeout, progress, cancellation and
// outcome-unknown handling. The supervisor owns one per server.
import { ErrorCode, McpError, type CompleteRequest, type LoggingLevel, type ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { CallToolResultRequestSchema } from "./fast-messages.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Prompt, Resource, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "../config/schema.js";
import { formatDuration } from "../util/units.js";
import { outsideLogRequest } from "../util/log.js";
import { outsideTrace } from "../telemetry/index.js";
import { backoffDelay, type BackoffPolicy } from "./backoff.js";
import type { SecretMask } from "./secret-mask.js";
import { sanitizeLine, sanitizeText, sensitiveEnvValues } from "./sanitize.js";
import { ConnectError, errorText, listAllOf, listResourceTemplates, openSession, type ListKind, type Session } from "./session.js";
import { callAsTask, goesAsTask, type TaskCallOptions } from "./tasks.js";
import {
  LockedError,
  NeedsAuthError,
  NotConnectedError,
  OutcomeUnknownError,
  type CallOptions,
  type ClientHooks,
  type ConnectionOrigin,
  type DownstreamSnapshot,
  type RemoteAuth,
  type SecretResolver,
  type ServerState,
} from "./types.js";

/** Shared by every Downstream of one supervisor; fields may change at run time (hot reload). */
export interface DownstreamDeps {
  allServers: Record<string, ServerConfig>;
  clientInfo: { name: string; version: string };
  secrets?: SecretResolver;
  auth?: RemoteAuth;
  connectTimeoutMs: number;
  backoff: BackoffPolicy;
  maxMessageBytes?: number;
  log: (level: "info" | "warn" | "error", msg: string) => void;
  /** Something visible changed (state, lists, error). */
  changed: (server: string) => void;
  /** Idle timeout for this server in ms (0 = never stopped for idleness). */
  idleTimeoutMs: (name: string, cfg: ServerConfig) => number;
  /** Server→client traffic; see ClientHooks. */
  hooks?: ClientHooks;
  /** Set for a connection dedicated to one upstream session (`connection: per-session`). */
  connection?: string;
  /** Paths a sandboxed server never sees beyond the built-in ones (the agents' harness files). */
  sandboxProtect?: () => readonly string[];
}

/** Without an explicit timeoutMs a call may run as long as it keeps reporting progress. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/** Waiting for a server that is still connecting is bounded by connect timeout + this. */
export const PUBLISH_GRACE_MS = 5_000;
/** A server waiting for sign-in retries this rarely on its own; a new sign-in retries it at once. */
export const NEEDS_AUTH_RETRY_MS = 5 * 60_000;

interface SessionToken {
  session?: Session;
  dirty: Set<ListKind>;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

export class Downstream {
  private state: ServerState;
  private error?: string;
  private generation = 0;
  private session?: Session;
  private token?: SessionToken;
  private tools: Tool[] = [];
  private resources: Resource[] = [];
  private prompts: Prompt[] = [];
  private resourceTemplates: ResourceTemplate[] = [];
  private instructions?: string;
  private serverVersion?: { name: string; version: string };
  private stderrTail?: string;

  /** May be started on first use (it is in this process's scope). */
  private admitted = false;
  /** A session is wanted: start() was called and the server was not stopped since. */
  private started = false;
  private closed = false;
  /** Why close() was called when it was not a gateway shutdown (config change, removal). */
  private closeReason?: string;
  /** Calls in flight plus explicit leases; a server with any is never stopped for idleness. */
  private leases = 0;
  private lastActivity = Date.now();
  private idleTimer?: NodeJS.Timeout;
  /** Consecutive failed connect attempts (reset by a successful connect). */
  private failures = 0;
  /** Sessions lost soon after connecting (reset by a session that stays up). */
  private quickDrops = 0;
  private readyAt = 0;
  /** The failure last logged; a retry that fails the same way is not logged again. */
  private loggedFailure?: string;
  private retryTimer?: NodeJS.Timeout;
  /** Unsubscribes from sign-in changes (set while the server needs sign-in). */
  private authWatch?: () => void;
  /** retryNow() came while an attempt was running: try again as soon as it fails. */
  private retryRequested = false;
  /**
   * The client's roots changed while this server's sandbox shows the roots it had at launch: the
   * process is replaced (with the new roots) as soon as nothing holds it.
   */
  private rootsRestart = false;
  private connecting?: Promise<void>;
  private readonly shutdown = new AbortController();
  private readonly closing = new Set<Promise<void>>();
  private waiters = new Set<Waiter>();
  private readonly relist: Record<ListKind, { running: boolean; pending: boolean }> = {
    tools: { running: false, pending: false },
    resources: { running: false, pending: false },
    prompts: { running: false, pending: false },
  };

  constructor(
    readonly name: string,
    private config: ServerConfig,
    private readonly deps: DownstreamDeps,
  ) {
    this.state = config.enabled ? "idle" : "disabled";
  }

  get cfg(): ServerConfig {
    return this.config;
  }

  get isStarted(): boolean {
    return this.started;
  }

  get isAdmitted(): boolean {
    return this.admitted;
  }

  /** Ready, with a session (snapshot().connected). */
  get connected(): boolean {
    return this.state === "ready" && this.session !== undefined;
  }

  /** Calls in flight plus held leases. */
  get busy(): number {
    return this.leases;
  }

  /** Allows the server to be started on first use, without starting it now. */
  admit(): void {
    this.admitted = true;
  }

  start(): void {
    this.admitted = true;
    if (this.started || this.closed || !this.config.enabled) return;
    this.started = true;
    this.connect();
  }

  /**
   * Replaces settings that do not touch the connection (routing metadata, start mode, idle
   * timeout); the supervisor replaces the whole Downstream when the connection changes.
   */
  updateConfig(cfg: ServerConfig): void {
    this.config = cfg;
    this.armIdle();
  }

  /**
   * Marks the connection as needed (a call in flight, a resource subscription, a stream) until the
   * returned release is called (idempotent): a server with a holder is never stopped for
   * idleness, and its idle clock restarts when the last holder lets go.
   */
  lease(): () => void {
    this.leases++;
    this.lastActivity = Date.now();
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.leases--;
      this.lastActivity = Date.now();
      if (this.leases === 0 && this.rootsRestart) this.restartForRoots();
      this.armIdle();
    };
  }

  /**
   * The operator's "reconnect": drops the current connection, if any (calls in flight on it end
   * with an unknown outcome, as on any lost connection), and connects again at once, without
   * backoff. Starts a server that was not started yet. A connect already under way is kept.
   */
  reconnect(): void {
    if (this.closed || !this.cfg.enabled) return;
    if (!this.started) return this.start();
    if (this.connecting) return;
    const s = this.session;
    if (s) {
      this.session = undefined;
      this.token = undefined;
      this.track(s.close());
    }
    this.failures = 0;
    this.quickDrops = 0;
    this.connect();
  }

  private restartForRoots(): void {
    this.rootsRestart = false;
    const s = this.session;
    if (this.closed || !s || this.connecting) return;
    this.deps.log("info", `${this.name}: the client's roots changed; restarting it so its sandbox shows the new ones`);
    this.session = undefined;
    this.token = undefined;
    this.track(s.close());
    this.connect();
  }

  /** Skip any backoff wait and try now (e.g. after the vault was unlocked). */
  retryNow(): void {
    if (!this.started || this.closed || this.session) return;
    // The attempt under way may have read the old secrets or sign-in.
    if (this.connecting) this.retryRequested = true;
    else this.connect();
  }

  snapshot(): DownstreamSnapshot {
    const snap: DownstreamSnapshot = {
      name: this.name,
      state: this.state,
      connected: this.connected,
      tools: this.tools,
      resources: this.resources,
      prompts: this.prompts,
      resourceTemplates: this.resourceTemplates,
      generation: this.generation,
    };
    const caps = this.session?.capabilities;
    if (caps) snap.capabilities = caps;
    if (this.instructions !== undefined) snap.instructions = this.instructions;
    if (this.serverVersion !== undefined) snap.serverVersion = this.serverVersion;
    if (this.error !== undefined) snap.error = this.error;
    const tail = this.session?.stdio ? this.currentStderr(this.session) : this.stderrTail;
    if (tail) snap.stderrTail = tail;
    if (this.session?.sandbox) snap.sandbox = this.session.sandbox;
    return snap;
  }

  /** Resolves when ready; rejects at once when the server cannot become ready by waiting. */
  async waitReady(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const immediate = this.readiness();
    if (immediate === "ready") return;
    if (immediate instanceof Error) throw immediate;
    if (signal?.aborted) throw this.cancelledWait();
    await new Promise<void>((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.waiters.delete(waiter);
      };
      const waiter: Waiter = {
        resolve: () => {
          cleanup();
          resolve();
        },
        reject: (err) => {
          cleanup();
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        waiter.reject(
          new NotConnectedError(
            this.name,
            "not_published",
            `server "${this.name}" did not become ready within ${timeoutMs}ms: it is still connecting, or it is not started for this agent's scope`,
          ),
        );
      }, timeoutMs);
      timer.unref();
      const onAbort = () => waiter.reject(this.cancelledWait());
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.add(waiter);
    });
  }

  callTool(tool: string, args: Record<string, unknown>, opts: CallOptions = {}) {
    // A raw tools/call, not client.callTool(): the result goes back verbatim, without the SDK's
    // client-side output-schema checks (the gateway is a proxy, not the consumer). A tool the
    // server runs as a task is followed to its result (tasks.ts) within the same limits.
    return this.request(tool, opts, (client, req, s) => {
      if (goesAsTask(s.capabilities, s.taskSupport(tool), opts.task !== undefined)) {
        return callAsTask(client, s.tasks, tool, args, req, taskLimits(opts));
      }
      return client.request({ method: "tools/call", params: { name: tool, arguments: args } }, CallToolResultRequestSchema, req);
    });
  }

  readResource(uri: string, opts: CallOptions = {}) {
    return this.request(uri, opts, (client, req) => client.readResource({ uri }, req));
  }

  getPrompt(name: string, args: Record<string, string> | undefined, opts: CallOptions = {}) {
    return this.request(name, opts, (client, req) => client.getPrompt(args ? { name, arguments: args } : { name }, req));
  }

  complete(params: CompleteRequest["params"], opts: CallOptions = {}) {
    return this.request("completion/complete", opts, (client, req) => client.complete(params, req));
  }

  subscribeResource(uri: string, opts: CallOptions = {}) {
    return this.request(uri, opts, (client, req) => client.subscribeResource({ uri }, req));
  }

  unsubscribeResource(uri: string, opts: CallOptions = {}) {
    return this.request(uri, opts, (client, req) => client.unsubscribeResource({ uri }, req));
  }

  setLoggingLevel(level: LoggingLevel, opts: CallOptions = {}) {
    return this.request("logging/setLevel", opts, (client, req) => client.setLoggingLevel(level, req));
  }

  /**
   * Tells the server the client's roots changed; a no-op while it is not connected. A server
   * whose sandbox shows the roots is restarted instead (its mounts were fixed at launch), once
   * nothing holds it: its next process asks for the roots again and sees the new ones.
   */
  async sendRootsListChanged(): Promise<void> {
    const s = this.session;
    if (s?.sandbox?.roots !== undefined) {
      this.rootsRestart = true;
      if (this.leases === 0) this.restartForRoots();
      return;
    }
    if (!s || this.state !== "ready") return;
    await s.client.sendRootsListChanged().catch((err: unknown) => {
      this.deps.log("warn", `${this.name}: roots/list_changed was not delivered: ${this.clean(errorText(err))}`);
    });
  }

  /** Whether some holder asked to keep this connection (see lease()). */
  get leased(): boolean {
    return this.leases > 0;
  }

  /** Ends the server for good. `reason` (e.g. "its configuration changed") replaces "shutting down" in errors. */
  async close(reason?: string): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      if (reason !== undefined) this.closeReason = reason;
      clearTimeout(this.retryTimer);
      this.unwatchAuth();
      clearTimeout(this.idleTimer);
      this.shutdown.abort();
      const err = new NotConnectedError(this.name, "closed", this.closedMessage());
      for (const w of [...this.waiters]) w.reject(err);
      const s = this.session;
      this.session = undefined;
      this.token = undefined;
      if (s) this.track(s.close());
    }
    await this.connecting?.catch(() => undefined);
    while (this.closing.size > 0) await Promise.all([...this.closing]);
  }

  // ---- connecting -------------------------------------------------------------------------

  private connect(): void {
    if (this.closed || this.connecting) return;
    this.retryRequested = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.setState("connecting");
    const token: SessionToken = { dirty: new Set() };
    // The connection is shared, not the call's that may have started it: its events (and their
    // log lines) belong to no request and no trace.
    this.connecting = outsideTrace(() => outsideLogRequest(() => this.open(token)));
  }

  private open(token: SessionToken): Promise<void> {
    return (async () => {
      try {
        const session = await openSession({
          name: this.name,
          cfg: this.cfg,
          allServers: this.deps.allServers,
          clientInfo: this.deps.clientInfo,
          secrets: this.deps.secrets,
          ...(this.deps.auth ? { auth: this.deps.auth } : {}),
          timeoutMs: this.deps.connectTimeoutMs,
          signal: this.shutdown.signal,
          ...(this.deps.maxMessageBytes !== undefined ? { maxMessageBytes: this.deps.maxMessageBytes } : {}),
          onListChanged: (kind) => this.onListChanged(token, kind),
          onClose: () => this.onTransportClosed(token),
          ...(this.deps.hooks ? { peer: this.peerHooks(this.deps.hooks) } : {}),
          ...this.sandboxHooks(),
        });
        token.session = session;
        if (this.closed) {
          this.track(session.close());
          return;
        }
        this.install(session, token);
      } catch (err) {
        if (this.closed) return;
        this.onConnectFailed(err);
      }
    })().finally(() => {
      this.connecting = undefined;
    });
  }

  private install(session: Session, token: SessionToken): void {
    this.unwatchAuth();
    this.session = session;
    this.token = token;
    this.tools = session.tools;
    this.resources = session.resources;
    this.prompts = session.prompts;
    this.resourceTemplates = session.resourceTemplates;
    this.instructions = session.instructions;
    this.serverVersion = session.serverVersion;
    this.error = undefined;
    this.failures = 0;
    this.readyAt = Date.now();
    this.generation++;
    if (this.loggedFailure !== undefined) {
      // Its failures were logged: say it recovered at the same level.
      this.deps.log("warn", `${this.name}: ready again (${session.tools.length} tools)`);
      this.loggedFailure = undefined;
    } else {
      this.deps.log("info", `${this.name}: ready (${session.tools.length} tools)`);
    }
    this.setState("ready");
    for (const w of [...this.waiters]) w.resolve();
    if (session.closed) {
      this.lose(token, "the connection closed right after the handshake");
      return;
    }
    this.lastActivity = Date.now();
    this.armIdle();
    // A list_changed that raced the initial listing: list again.
    for (const kind of token.dirty) this.onListChanged(token, kind);
    this.deps.hooks?.connected(this.origin());
  }

  private origin(): ConnectionOrigin {
    return this.deps.connection !== undefined ? { server: this.name, connection: this.deps.connection } : { server: this.name };
  }

  /** What a sandboxed server's launch needs from above: the client's roots, more protected paths. */
  private sandboxHooks(): { sandboxRoots?: (signal?: AbortSignal) => Promise<string[]>; sandboxProtect?: readonly string[] } {
    const hooks = this.deps.hooks;
    const origin = this.origin();
    const protect = this.deps.sandboxProtect?.();
    return {
      ...(hooks?.roots ? { sandboxRoots: (signal?: AbortSignal) => hooks.roots?.(origin, signal) ?? Promise.resolve([]) } : {}),
      ...(protect ? { sandboxProtect: protect } : {}),
    };
  }

  private peerHooks(hooks: ClientHooks) {
    const origin = this.origin();
    return {
      capabilities: hooks.capabilities,
      request: (req: { method: string; params?: Record<string, unknown> }, signal: AbortSignal) => hooks.request(origin, req, signal),
      notification: (n: { method: string; params?: Record<string, unknown> }) => hooks.notification(origin, n),
    };
  }

  private onConnectFailed(err: unknown): void {
    if (err instanceof NeedsAuthError) return this.onNeedsAuth(err);
    this.unwatchAuth();
    const locked = err instanceof LockedError;
    this.error = locked ? `locked: ${err.message}` : err instanceof ConnectError ? err.message : `connect failed: ${this.clean(errorText(err))}`;
    if (err instanceof ConnectError && err.stderrTail !== undefined) this.stderrTail = err.stderrTail;
    // Locked needs a person (or the vault) to act: retry rarely, never hot-loop.
    const delay = locked ? this.deps.backoff.maxMs : backoffDelay(this.failures++, this.deps.backoff);
    this.logFailure(locked ? "warn" : "error", `${this.error}`, delay);
    this.setState(locked ? "locked" : "failed");
    const err2 = new NotConnectedError(this.name, "not_connected", this.notConnectedMessage());
    for (const w of [...this.waiters]) w.reject(err2);
    this.scheduleRetry(this.retryRequested ? 0 : delay);
  }

  /** Only a person can fix this: say so once, wait for a new sign-in, retry rarely otherwise. */
  private onNeedsAuth(err: NeedsAuthError): void {
    const repeated = this.state === "needs_auth" && this.error === err.message;
    this.error = err.message;
    this.failures = 0;
    if (!repeated) this.deps.log("warn", `${this.name}: ${err.message}`);
    this.setState("needs_auth");
    const err2 = new NotConnectedError(this.name, "not_connected", this.notConnectedMessage());
    for (const w of [...this.waiters]) w.reject(err2);
    if (!this.authWatch && this.deps.auth) this.authWatch = this.deps.auth.onChange(this.name, () => this.retryNow());
    this.scheduleRetry(this.retryRequested ? 0 : Math.max(this.deps.backoff.maxMs, NEEDS_AUTH_RETRY_MS));
  }

  private unwatchAuth(): void {
    this.authWatch?.();
    this.authWatch = undefined;
  }

  private scheduleRetry(delayMs: number): void {
    if (this.closed) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), delayMs);
    this.retryTimer.unref();
  }

  private onTransportClosed(token: SessionToken): void {
    if (token.session && this.token === token) this.lose(token, "the connection closed");
  }

  /** Drops the current session (by identity) and reconnects in the background. */
  private lose(token: SessionToken, reason: string): void {
    if (this.token !== token || !token.session) return;
    const s = token.session;
    this.session = undefined;
    this.token = undefined;
    const error = reason;
    this.error = error;
    this.track(
      s.close().then(() => {
        // Once the process is reaped, say how it ended (and keep its last stderr), unless a
        // newer attempt has already replaced this error.
        this.stderrTail = this.currentStderr(s);
        const exit = s.stdio?.exit;
        if (exit && this.error === error && !this.closed) {
          this.error = `${reason}${exit.signal ? ` (process killed by ${exit.signal})` : ` (process exited with code ${exit.code})`}`;
          this.deps.changed(this.name);
        }
      }),
    );
    if (this.closed) return;
    if (this.leases === 0 && this.idleTimeout() > 0) {
      // Nobody is using it and it may idle: leave it stopped (a server that exits when idle is
      // not respawned in a loop); the next use starts it again.
      clearTimeout(this.idleTimer);
      this.started = false;
      this.deps.log("info", `${this.name}: ${reason} while idle; it starts again on next use`);
      this.setState("idle");
      return;
    }
    // The first drop reconnects at once (callers wait for it); a server that keeps dying soon
    // after connecting backs off, and reports "failed" while it waits so callers are not left
    // hanging. A session that stayed up for the maximum backoff clears the record.
    if (Date.now() - this.readyAt >= this.deps.backoff.maxMs) this.quickDrops = 0;
    if (this.quickDrops === 0) {
      this.quickDrops++;
      this.deps.log("warn", `${this.name}: ${reason}; reconnecting`);
      this.connect();
      return;
    }
    const delay = backoffDelay(this.quickDrops++, this.deps.backoff);
    this.logFailure("warn", `${reason} again soon after connecting`, delay);
    this.setState("failed");
    this.scheduleRetry(delay);
  }

  /**
   * One line per change of failure, with the next retry time: a server that keeps failing the
   * same way would otherwise fill the log with one line per backoff step.
   */
  private logFailure(level: "warn" | "error", what: string, delayMs: number): void {
    if (this.loggedFailure === what) return;
    this.loggedFailure = what;
    const at = new Date(Date.now() + delayMs).toISOString().slice(11, 19);
    this.deps.log(
      level,
      `${this.name}: ${what}; next retry in ${formatDuration(Math.max(1, Math.round(delayMs)))} (${at} UTC), then with backoff up to ${formatDuration(this.deps.backoff.maxMs)}; the same failure is not logged again`,
    );
  }

  private track(p: Promise<void>): void {
    const q = p.catch(() => undefined).finally(() => this.closing.delete(q));
    this.closing.add(q);
  }

  // ---- re-listing ---------------------------------------------------------------------------

  private onListChanged(token: SessionToken, kind: ListKind): void {
    if (this.closed) return;
    if (this.token !== token) {
      if (!token.session) token.dirty.add(kind); // still connecting: list again once installed
      return;
    }
    const r = this.relist[kind];
    if (r.running) {
      r.pending = true; // one in flight, one pending: a storm costs at most two lists
      return;
    }
    r.running = true;
    void (async () => {
      try {
        do {
          r.pending = false;
          await this.relistOnce(kind);
        } while (r.pending && !this.closed);
      } finally {
        r.running = false;
      }
    })();
  }

  private async relistOnce(kind: ListKind): Promise<void> {
    const s = this.session;
    if (!s) return;
    const opts: RequestOptions = { timeout: this.deps.connectTimeoutMs, signal: this.shutdown.signal };
    try {
      const mask = <V>(v: V): V => (s.mask ? s.mask.value(v) : v);
      const items = mask(await listAllOf(kind, s.client, opts));
      // Templates change with resources (one list_changed covers both).
      const templates = kind === "resources" ? mask(await listResourceTemplates(s.client, opts).catch(() => s.resourceTemplates)) : undefined;
      if (this.session !== s) return; // a newer session lists for itself
      if (kind === "tools") this.tools = s.tools = items as Tool[];
      else if (kind === "resources") {
        this.resources = s.resources = items as Resource[];
        if (templates) this.resourceTemplates = s.resourceTemplates = templates;
      } else this.prompts = s.prompts = items as Prompt[];
      this.generation++;
      this.deps.changed(this.name);
    } catch (err) {
      if (this.session === s) this.deps.log("warn", `${this.name}: re-listing ${kind} failed: ${this.clean(errorText(err))}`);
    }
  }

  // ---- calls --------------------------------------------------------------------------------

  /**
   * One request on the session, holding a lease on the server (idle stop) until it settles. One
   * async function for the whole request: every layer of await is a hop on every call.
   */
  private async request<T>(label: string, opts: CallOptions, send: (client: Client, req: RequestOptions, session: Session) => Promise<T>): Promise<T> {
    const release = this.lease();
    try {
      // Start on first use: concurrent first calls share the one start (connect() is idempotent).
      if (!this.started && this.admitted) this.start();
      // A ready session (every call but the first few) is taken without waiting on a promise.
      const s = this.state === "ready" && this.session ? this.session : await this.readySession(opts);
      const req: RequestOptions = { signal: opts.signal };
      if (opts.timeoutMs !== undefined) {
        // An explicit timeout is a hard cap, progress or not.
        req.timeout = opts.timeoutMs;
        req.maxTotalTimeout = opts.timeoutMs;
      } else {
        req.timeout = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
        req.resetTimeoutOnProgress = true;
        if (opts.maxTotalMs !== undefined) req.maxTotalTimeout = opts.maxTotalMs;
      }
      // Always ask for progress: it is what keeps a long call inside its idle timeout, whether or
      // not the caller wants to see it. The SDK keeps a task call's progress handler for as long
      // as the connection lives, so the caller's sink is let go once the call is over.
      let onProgress = opts.onProgress;
      req.onprogress = (p) => {
        if (!onProgress) return;
        const out: { progress: number; total?: number; message?: string } = { progress: p.progress };
        if (p.total !== undefined) out.total = p.total;
        if (p.message !== undefined) out.message = s.mask ? s.mask.text(p.message) : p.message;
        onProgress(out);
      };
      let result: T;
      try {
        result = await send(s.client, req, s);
      } catch (err) {
        throw this.classify(err, s, label, opts);
      } finally {
        onProgress = undefined;
      }
      // What the server sent back goes upstream: the secrets it was given must not.
      return s.mask ? s.mask.value(result) : result;
    } finally {
      release();
    }
  }

  /** Which limit a timed-out call ran into, in the words of the config. */
  private timeoutDetail(err: McpError, opts: CallOptions): string {
    if (opts.timeoutMs !== undefined) return `no answer within its timeout of ${formatDuration(opts.timeoutMs)}`;
    const total = (err.data as { maxTotalTimeout?: unknown } | undefined)?.maxTotalTimeout;
    if (typeof total === "number") return `it ran past call_timeout (${formatDuration(total)})`;
    return `no answer and no progress for ${formatDuration(opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS)} (call_idle_timeout)`;
  }

  private classify(err: unknown, s: Session, label: string, opts: CallOptions): Error {
    const signal = opts.signal;
    const detail = this.clean(errorText(err), s);
    if (this.closed) return new OutcomeUnknownError(this.name, label, "transport", detail, this.closeReason ?? true);
    if (signal?.aborted) {
      // notifications/cancelled went downstream; the session itself is fine.
      return new OutcomeUnknownError(this.name, label, "cancelled", detail);
    }
    // The server refused the request before acting on it: a known outcome, never replayed.
    const needsAuth = err instanceof NeedsAuthError ? err : s.auth?.takeNeedsAuth();
    if (needsAuth) {
      const clean = new NeedsAuthError(this.clean(needsAuth.message, s), needsAuth.command, needsAuth.stepUp);
      // A broader scope concerns this request only; a refused sign-in concerns the connection.
      if (!clean.stepUp) this.lose(this.tokenOf(s), clean.message);
      return clean;
    }
    if (err instanceof McpError && !s.closed) {
      if (err.code === ErrorCode.RequestTimeout) {
        // The SDK sent notifications/cancelled downstream, and the connection itself is healthy.
        // Restarting it would fail every other in-flight call on a shared server, so one slow
        // call only costs its own outcome (unknown, never replayed).
        return new OutcomeUnknownError(this.name, label, "timeout", this.timeoutDetail(err, opts));
      }
      // The downstream answered with a JSON-RPC error: a definite outcome, pass it on (masked:
      // a server may quote the secret it was given).
      return s.mask ? maskedError(err, s.mask) : err;
    }
    if (isZodError(err)) {
      return new Error(`server "${this.name}" answered ${label} with a malformed result: ${detail}`);
    }
    this.lose(this.tokenOf(s), "the connection failed during a call");
    return new OutcomeUnknownError(this.name, label, "transport", detail);
  }

  private tokenOf(s: Session): SessionToken {
    return this.token?.session === s ? this.token : { session: undefined, dirty: new Set() };
  }

  private async readySession(opts: CallOptions): Promise<Session> {
    if (!this.session || this.state !== "ready") {
      const wait = this.deps.connectTimeoutMs + PUBLISH_GRACE_MS;
      await this.waitReady(opts.timeoutMs !== undefined ? Math.min(wait, opts.timeoutMs) : wait, opts.signal);
    }
    const s = this.session;
    if (!s) throw new NotConnectedError(this.name, "not_connected", this.notConnectedMessage());
    return s;
  }

  private readiness(): "ready" | "wait" | Error {
    if (this.closed) return new NotConnectedError(this.name, "closed", this.closedMessage());
    if (this.state === "disabled") return new NotConnectedError(this.name, "disabled", `server "${this.name}" is disabled in the config`);
    if (this.state === "ready" && this.session) return "ready";
    if (!this.started || this.state === "connecting") return "wait";
    return new NotConnectedError(this.name, "not_connected", this.notConnectedMessage());
  }

  private closedMessage(): string {
    return this.closeReason ? `server "${this.name}" was closed because ${this.closeReason}` : `server "${this.name}" is shutting down`;
  }

  private notConnectedMessage(): string {
    const why = this.state === "locked" ? " (its secrets are locked)" : this.state === "needs_auth" ? " (it needs sign-in)" : "";
    return `server "${this.name}" is not connected${why}${this.error ? `: ${this.error}` : ""}`;
  }

  private cancelledWait(): NotConnectedError {
    return new NotConnectedError(this.name, "cancelled", `waiting for server "${this.name}" was cancelled`);
  }

  // ---- idle stopping ------------------------------------------------------------------------

  private idleTimeout(): number {
    return this.deps.idleTimeoutMs(this.name, this.config);
  }

  /** (Re)starts the idle clock when the server is ready and nothing holds it. */
  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.closed || !this.started || this.state !== "ready" || this.leases > 0) return;
    const ms = this.idleTimeout();
    if (!(ms > 0)) return;
    const remaining = Math.max(0, this.lastActivity + ms - Date.now());
    this.idleTimer = setTimeout(() => this.stopIfIdle(), remaining);
    this.idleTimer.unref();
  }

  private stopIfIdle(): void {
    this.idleTimer = undefined;
    if (this.closed || !this.started || this.state !== "ready" || this.leases > 0) return;
    const ms = this.idleTimeout();
    if (!(ms > 0)) return;
    if (Date.now() - this.lastActivity < ms) {
      this.armIdle();
      return;
    }
    // Only a ready session with nothing in flight gets here: no connect attempt is running.
    const s = this.session;
    this.session = undefined;
    this.token = undefined;
    this.started = false;
    this.quickDrops = 0;
    if (s) {
      this.track(
        s.close().then(() => {
          this.stderrTail = this.currentStderr(s);
        }),
      );
    }
    this.deps.log("info", `${this.name}: stopped after ${formatDuration(ms)} without use; it starts again on next use`);
    this.setState("idle");
  }

  // ---- helpers ------------------------------------------------------------------------------

  private setState(state: ServerState): void {
    this.state = state;
    this.deps.changed(this.name);
  }

  private redactions(s?: Session): string[] {
    return [...(this.deps.secrets?.knownSecretValues() ?? []), ...(this.deps.auth?.knownSecretValues() ?? []), ...sensitiveEnvValues(process.env), ...(s?.secretValues ?? []), ...sensitiveEnvValues(this.cfg.env ?? {})];
  }

  private clean(text: string, s?: Session): string {
    return sanitizeLine(text, this.redactions(s));
  }

  private currentStderr(s: Session): string | undefined {
    const tail = s.stdio?.stderrTail;
    if (!tail || tail.byteLength === 0) return undefined;
    return sanitizeText(tail.text(), this.redactions(s));
  }
}

/**
 * A task's limits are the call's: `timeoutMs` (a hard cap) or `maxTotalMs` (call_timeout) bound
 * the whole task, and each poll must be answered within the idle timeout.
 */
function taskLimits(opts: CallOptions): TaskCallOptions {
  const total = opts.timeoutMs ?? opts.maxTotalMs;
  return {
    deadline: total !== undefined ? Date.now() + total : Infinity,
    ...(opts.timeoutMs === undefined && opts.maxTotalMs !== undefined ? { totalMs: opts.maxTotalMs } : {}),
    pollTimeoutMs: opts.timeoutMs ?? opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    ...(opts.task?.ttl !== undefined ? { ttl: opts.task.ttl } : {}),
    ...(opts.onTask ? { onTask: opts.onTask } : {}),
  };
}

/** The same JSON-RPC error with its message and data masked (the error itself when clean). */
function maskedError(err: McpError, mask: SecretMask): McpError {
  const message = mask.text(err.message);
  const data = mask.value(err.data);
  if (message === err.message && data === err.data) return err;
  // McpError prefixes "MCP error <code>: "; keep the downstream's own text once.
  const own = message.replace(/^MCP error -?\d+: /, "");
  return new McpError(err.code, own, data);
}

function isZodError(err: unknown): boolean {
  return err instanceof Error && (err.name === "ZodError" || Array.isArray((err as { issues?: unknown }).issues));
}
