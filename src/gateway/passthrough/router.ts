// The one place that routes protocol traffic between downstream connections and upstream
// sessions (docs/protocol.md):
// - server→client requests (sampling, elicitation, roots) go to the upstream session that owns
//   the connection they came on, and the answer goes back; never to a session chosen by guess;
// - notifications: log messages to their owner (renamed `server[/logger]`, filtered by level),
//   resource updates to the sessions subscribed to that resource, under the public URI;
// - per-connection state the upstream sessions set: logging levels, resource subscriptions
//   (reference-counted on shared connections, re-applied after a reconnect, released when a
//   session ends), roots changes.
// Ownership: a stdio gateway has exactly one upstream session, which owns every connection. In
// the daemon a `connection: per-session` server gets a connection per session (owned by it);
// a shared connection is owned by the one session that has requests in flight on it, and a
// request that arrives while none or several do is refused with an error saying so. roots/list
// is never answered for a shared daemon connection (the server keeps roots as state for every
// later call), unless the server's roots are pinned in config. A request that names the task it
// belongs to (the related-task `_meta` of a downstream's task-augmented tool call) goes to the
// call that created that task, even on a shared connection with other sessions' calls in flight.
// A downstream's task-augmented sampling or elicitation is run with mcphub as its receiver
// (client-tasks.ts).
import {
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  ResultSchema,
  type CompleteRequest,
  type CompleteResult,
  type LoggingLevel,
  type RequestId,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { isPerSession, type Config } from "../../config/schema.js";
import type { Supervisor } from "../../downstream/supervisor.js";
import type { CallOptions, ClientHooks, ConnectionOrigin, PeerMessage } from "../../downstream/types.js";
import { errorText } from "../../util/errors.js";
import type { Logger } from "../../util/log.js";
import { toWire, WireError } from "./errors.js";
import { DOWNSTREAM_CLIENT_CAPABILITIES, isForwardedMethod, missingCapability, takesTask, type ForwardedMethod } from "./capabilities.js";
import { ClientTasks, isClientTaskMethod, type StatusUpdate } from "./client-tasks.js";
import { connKey, ownedBy } from "./keys.js";
import { LogLevels } from "./levels.js";
import { LOG_LEVELS, type UpstreamPeer } from "./peer.js";
import { RootsBarrier, rootOf, rootPaths } from "./roots.js";
import { Subscriptions } from "./subscriptions.js";

/** Who a downstream request is made for: the session, and the upstream request being served. */
export interface Caller {
  peer: UpstreamPeer;
  /** The upstream request (tools/call, prompts/get, ...) in flight, so related messages ride its stream. */
  requestId?: RequestId;
  /** The upstream task the call runs for: requests it causes are queued for that task's tasks/result. */
  task?: UpstreamTaskLink;
}

/** A call that runs for an upstream MCP task (the session's client created it). */
export interface UpstreamTaskLink {
  /** The task id the client knows (mcphub's own). */
  taskId: string;
  /** A request for the client's input is out (true) or answered (false): the task is input_required meanwhile. */
  waiting(on: boolean): void;
}

export interface PassthroughDeps {
  config: Config;
  /** Late-bound: the supervisor is built with this router's hooks. */
  supervisor: () => Supervisor;
  log: Logger;
  /** A stdio gateway serves exactly one upstream session, which owns every connection. */
  singleSession: boolean;
}

/** Counters and gauges for tests and status: nothing may stay behind once sessions end. */
export interface PassthroughStats {
  sessions: number;
  requests_in_flight: number;
  forwarded_pending: number;
  subscriptions: number;
  dedicated_connections: number;
  forwarded_total: number;
  refused_total: number;
  logs_dropped_total: number;
  /** Tasks downstreams asked mcphub to run (task-augmented sampling, elicitation) still kept. */
  client_tasks: number;
}

interface InFlight {
  peer: UpstreamPeer;
  requestId?: RequestId;
  task?: UpstreamTaskLink;
}

type Target = { peer: UpstreamPeer; related?: RequestId; task?: UpstreamTaskLink };

const MAX_URL_ELICITATIONS = 1024;

export class Passthrough {
  readonly hooks: ClientHooks;
  private readonly peers = new Map<string, UpstreamPeer>();
  /** connection key → requests in flight on that connection, oldest first. */
  private readonly inflight = new Map<string, InFlight[]>();
  private readonly forwarded = new Map<UpstreamPeer, Set<AbortController>>();
  /** Calls wait for the roots answers their connection is still waiting for. */
  private readonly roots = new RootsBarrier();
  private readonly subscriptions: Subscriptions;
  private readonly levels: LogLevels;
  /** Sessions whose dedicated connections exist (or are closing once their calls drain). */
  private readonly dedicated = new Set<string>();
  private readonly counters = { forwarded: 0, refused: 0, logsDropped: 0 };
  /** URL-mode elicitations forwarded: connection key + elicitationId → the session asked. */
  private readonly urlElicitations = new Map<string, UpstreamPeer>();
  /** connection key → the downstream's task id → the request in flight that created the task. */
  private readonly tasks = new Map<string, Map<string, InFlight>>();
  private readonly clientTasks: ClientTasks;
  /** Set when the gateway shuts down: clean-up requests to dying downstreams are not worth a warning. */
  private closing = false;
  /** Waiting for a first session to attach (a stdio gateway's sandboxed server wants its roots). */
  private readonly attachWaiters = new Set<() => void>();

  constructor(private readonly deps: PassthroughDeps) {
    const shared = { supervisor: deps.supervisor, timeoutMs: deps.config.connect_timeout, warn: (m: string) => this.warn(m) };
    this.subscriptions = new Subscriptions({ ...shared, sessionAlive: (id) => this.peers.has(id) });
    this.levels = new LogLevels({ ...shared, sessionsOf: (server, connection) => this.sessionsOf(server, connection) });
    this.clientTasks = new ClientTasks(() => this.config.call_timeout);
    this.hooks = {
      capabilities: DOWNSTREAM_CLIENT_CAPABILITIES,
      request: (origin, req, signal) => this.onRequest(origin, req, signal),
      notification: (origin, n) => this.onNotification(origin, n),
      connected: (origin) => setImmediate(() => this.onConnected(origin)),
      roots: (origin, signal) => this.rootsFor(origin, signal),
    };
  }

  private get supervisor(): Supervisor {
    return this.deps.supervisor();
  }

  private get config(): Config {
    return this.deps.config;
  }

  // ---- sessions -------------------------------------------------------------------------------

  attach(peer: UpstreamPeer): void {
    this.peers.set(peer.id, peer);
    for (const w of [...this.attachWaiters]) w();
  }

  /**
   * The session ended: its forwarded requests are cancelled (the downstream gets an error), its
   * subscriptions released, its log level forgotten, and its dedicated connections closed once
   * the calls still running on them (detached calls) have finished.
   */
  detach(peer: UpstreamPeer): void {
    if (!this.peers.delete(peer.id)) return;
    peer.markClosed();
    const pending = this.forwarded.get(peer);
    this.forwarded.delete(peer);
    for (const ctl of pending ?? []) ctl.abort(new WireError(ErrorCode.ConnectionClosed, "the upstream session ended before it answered"));
    this.subscriptions.releaseSession(peer.id);
    this.clientTasks.releasePeer(peer);
    for (const [key, owner] of this.urlElicitations) if (owner === peer) this.urlElicitations.delete(key);
    for (const server of Object.keys(this.config.servers)) void this.levels.apply(server);
    this.closeDrained(peer);
  }

  /** The gateway is shutting down (its downstreams are about to close). */
  close(): void {
    this.closing = true;
  }

  private warn(message: string): void {
    if (!this.closing) this.deps.log.warn(message);
  }

  stats(): PassthroughStats {
    let inflight = 0;
    for (const list of this.inflight.values()) inflight += list.length;
    let pending = 0;
    for (const set of this.forwarded.values()) pending += set.size;
    return {
      sessions: this.peers.size,
      requests_in_flight: inflight,
      forwarded_pending: pending,
      subscriptions: this.subscriptions.size,
      dedicated_connections: [...this.dedicated].reduce((n, tag) => n + this.supervisor.dedicatedServers(tag).length, 0),
      forwarded_total: this.counters.forwarded,
      refused_total: this.counters.refused,
      logs_dropped_total: this.counters.logsDropped,
      client_tasks: this.clientTasks.size,
    };
  }

  // ---- requests made for an upstream session ------------------------------------------------

  /** The dedicated connection tag this session uses for a server, if it has one. */
  connectionFor(peer: UpstreamPeer, server: string): string | undefined {
    if (this.deps.singleSession) return undefined;
    const cfg = this.config.servers[server];
    return cfg && isPerSession(cfg) ? peer.id : undefined;
  }

  /**
   * Runs one downstream request for a caller: picks its connection, waits for a roots answer
   * that connection is still waiting for (a call must not overtake it), and records the request
   * as in flight so server→client traffic it causes can be attributed. When the downstream runs
   * the request as a task (`onTask`), requests naming that task are attributed to it.
   */
  async run<T>(caller: Caller | undefined, server: string, fn: (opts: Pick<CallOptions, "connection" | "onTask">) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const connection = caller ? this.connectionFor(caller.peer, server) : undefined;
    const key = connKey(server, connection);
    const roots = this.roots.settled(key, this.config.connect_timeout, signal);
    if (roots) await roots;
    if (!caller) return fn({});
    if (connection !== undefined) this.dedicated.add(connection);
    // One shape for every record (spread optional parts made a literal the runtime builds slowly).
    const rec: InFlight = { peer: caller.peer, requestId: caller.requestId, task: caller.task };
    const list = this.inflight.get(key) ?? [];
    list.push(rec);
    this.inflight.set(key, list);
    const bound = new Set<string>();
    const onTask = (task: { taskId: string }) => {
      if (bound.has(task.taskId)) return;
      bound.add(task.taskId);
      let mine = this.tasks.get(key);
      if (!mine) {
        mine = new Map();
        this.tasks.set(key, mine);
      }
      mine.set(task.taskId, rec);
    };
    try {
      return await fn(connection !== undefined ? { connection, onTask } : { onTask });
    } finally {
      const now = this.inflight.get(key);
      const i = now?.indexOf(rec) ?? -1;
      if (now && i >= 0) now.splice(i, 1);
      if (now?.length === 0) this.inflight.delete(key);
      const mine = this.tasks.get(key);
      for (const id of bound) if (mine?.get(id) === rec) mine.delete(id);
      if (mine?.size === 0) this.tasks.delete(key);
      if (caller.peer.closed) this.closeDrained(caller.peer);
    }
  }

  async complete(caller: Caller, server: string, params: CompleteRequest["params"], signal?: AbortSignal): Promise<CompleteResult> {
    const timeoutMs = this.config.connect_timeout;
    return this.run(caller, server, (o) => this.supervisor.complete(server, params, { ...o, timeoutMs, ...(signal ? { signal } : {}) }), signal);
  }

  /** logging/setLevel from a session: remembered, and applied to every connection it reaches. */
  async setLevel(peer: UpstreamPeer, level: LoggingLevel): Promise<void> {
    peer.level = level;
    const jobs: Promise<void>[] = [];
    for (const server of Object.keys(this.config.servers)) {
      if (!peer.view.scope.allowsServer(server)) continue;
      jobs.push(this.levels.apply(server, this.connectionFor(peer, server)));
    }
    await Promise.all(jobs);
  }

  /** resources/subscribe: one downstream subscription per connection and URI, shared by sessions. */
  async subscribe(peer: UpstreamPeer, server: string, uri: string, publicUri: string): Promise<void> {
    const connection = this.connectionFor(peer, server);
    if (connection !== undefined) this.dedicated.add(connection);
    await this.subscriptions.subscribe(peer.id, server, connection, uri, publicUri);
    if (peer.closed) this.subscriptions.unsubscribe(peer.id, server, connection, uri);
  }

  unsubscribe(peer: UpstreamPeer, server: string, uri: string): void {
    this.subscriptions.unsubscribe(peer.id, server, this.connectionFor(peer, server), uri);
  }

  /** notifications/roots/list_changed from a session: passed to the connections it owns. */
  rootsChanged(peer: UpstreamPeer): void {
    for (const [server, cfg] of Object.entries(this.config.servers)) {
      if (cfg.roots !== undefined || !peer.view.scope.allowsServer(server)) continue;
      const connection = this.connectionFor(peer, server);
      if (connection !== undefined) {
        if (this.supervisor.connectionSnapshot(server, connection)) void this.supervisor.sendRootsListChanged(server, { connection });
      } else if (this.deps.singleSession) {
        void this.supervisor.sendRootsListChanged(server);
      }
      // A shared daemon connection has no single session whose roots it follows: not forwarded.
    }
  }

  // ---- roots for sandboxes --------------------------------------------------------------------

  /**
   * The local paths a sandboxed server's `roots` stand for, asked before its process starts (its
   * mounts are fixed at launch): the pinned `roots:` when set, else the roots of the session that
   * owns the connection (a stdio gateway's one session, waited for if it has not attached or
   * initialized yet; a per-session connection's session). A connection the daemon shares between
   * sessions has no such session: refused, as roots/list is there. Only file:// roots count.
   */
  private async rootsFor(origin: ConnectionOrigin, signal?: AbortSignal): Promise<string[]> {
    const { server } = origin;
    const cfg = this.config.servers[server];
    if (cfg?.roots !== undefined) return rootPaths(cfg.roots.map(rootOf));
    const timeoutMs = this.config.connect_timeout;
    let peer: UpstreamPeer | undefined;
    if (origin.connection !== undefined) {
      peer = this.peers.get(origin.connection);
      if (!peer) throw new Error("the upstream session this connection was opened for has ended");
    } else if (this.deps.singleSession) {
      peer = await this.firstPeer(timeoutMs, signal);
      if (!peer) throw new Error(`no client connected to the gateway within connect_timeout (${timeoutMs}ms) to give its roots`);
    } else if (cfg && isPerSession(cfg)) {
      // The connection mcphub keeps only for listing tools: no session's roots apply to it.
      return [];
    } else {
      throw new Error("the mcphub daemon shares this server's connection between sessions, so no one session's roots can apply");
    }
    if (!(await peer.whenInitialized(timeoutMs, signal))) {
      throw new Error(peer.closed ? "the client's session ended before it gave its roots" : `the client did not finish initializing within connect_timeout (${timeoutMs}ms)`);
    }
    if (!peer.capabilities?.roots) {
      throw new Error(`the client${peer.agent !== undefined ? ` (agent "${peer.agent}")` : ""} did not declare the roots capability`);
    }
    try {
      const answer = await peer.server.listRoots(undefined, { timeout: timeoutMs, ...(signal ? { signal } : {}) });
      return rootPaths(answer.roots);
    } catch (err) {
      throw new Error(`the client did not answer roots/list: ${errorText(err)}`);
    }
  }

  private firstPeer(timeoutMs: number, signal?: AbortSignal): Promise<UpstreamPeer | undefined> {
    const now = () => [...this.peers.values()].find((p) => !p.closed);
    const found = now();
    if (found || signal?.aborted) return Promise.resolve(found);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.attachWaiters.delete(done);
        resolve(now());
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      signal?.addEventListener("abort", done, { once: true });
      this.attachWaiters.add(done);
    });
  }

  // ---- server→client traffic ------------------------------------------------------------------

  private async onRequest(origin: ConnectionOrigin, req: PeerMessage, signal: AbortSignal): Promise<Record<string, unknown>> {
    const key = connKey(origin.server, origin.connection);
    if (isClientTaskMethod(req.method)) return this.clientTasks.handle(key, req.method, req.params, signal);
    if (!isForwardedMethod(req.method)) throw new WireError(ErrorCode.MethodNotFound, `mcphub does not forward ${req.method}`);
    const method = req.method;
    const pinned = this.config.servers[origin.server]?.roots;
    if (method === "roots/list" && pinned !== undefined) return { roots: pinned.map(rootOf) };
    let target: Target;
    try {
      target = this.ownerOf(origin, method, relatedTaskOf(req.params));
    } catch (err) {
      this.counters.refused++;
      throw err;
    }
    // The downstream's task id stays here: the session never sees it.
    const params = withoutRelatedTask(req.params);
    const elicitationId = method === "elicitation/create" && params?.mode === "url" ? params.elicitationId : undefined;
    if (typeof elicitationId === "string") this.rememberUrlElicitation(`${key}\u0001${elicitationId}`, target.peer);
    const task = method !== "roots/list" ? params?.task : undefined;
    if (task !== undefined && params) return this.runAsClientTask(key, target, method, params, task);
    const answer = this.forward(target, method, params, signal);
    if (method === "roots/list") this.roots.track(key, answer);
    return answer;
  }

  /**
   * A task-augmented sampling or elicitation: mcphub answers with a task of its own and forwards
   * the request to the session, as a task when that client takes one for the method. A client
   * that cannot answer it at all is refused now, not by a task that fails later.
   */
  private runAsClientTask(key: string, target: Target, method: ForwardedMethod, params: Record<string, unknown>, task: unknown): Record<string, unknown> {
    const { task: _task, ...plain } = params;
    const missing = target.peer.capabilities ? missingCapability(method, plain, target.peer.capabilities) : undefined;
    if (missing !== undefined) {
      this.counters.refused++;
      const who = target.peer.agent !== undefined ? `the upstream client (agent "${target.peer.agent}")` : "the upstream client";
      throw new WireError(ErrorCode.MethodNotFound, `${method}: ${who} did not declare ${missing}, so mcphub cannot forward this request`);
    }
    const ttl = typeof task === "object" && task !== null && typeof (task as { ttl?: unknown }).ttl === "number" ? (task as { ttl: number }).ttl : undefined;
    const created = this.clientTasks.create(key, target.peer, ttl, (signal, status) => this.forward(target, method, plain, signal, { ...(ttl !== undefined ? { ttl } : {}), status }));
    return { task: created };
  }

  /** The session a server→client request belongs to; an McpError says why there is none. */
  private ownerOf(origin: ConnectionOrigin, method: ForwardedMethod, relatedTask?: string): Target {
    const { server } = origin;
    const what = `${method} from server "${server}"`;
    const list = this.inflight.get(connKey(server, origin.connection)) ?? [];
    const byTask = relatedTask !== undefined ? this.tasks.get(connKey(server, origin.connection))?.get(relatedTask) : undefined;
    let target: Target;
    if (byTask) {
      // The request names the task of a call in flight: it belongs to that call's session.
      target = targetOf(byTask);
    } else if (origin.connection !== undefined) {
      const peer = this.peers.get(origin.connection);
      if (!peer) throw new WireError(ErrorCode.InvalidRequest, `${what}: the upstream session this connection was opened for has ended`);
      target = withRelated(peer, list);
    } else if (this.deps.singleSession) {
      const peer = [...this.peers.values()][0];
      if (!peer) throw new WireError(ErrorCode.InvalidRequest, `${what}: no upstream session is connected to the gateway`);
      target = withRelated(peer, list);
    } else {
      const cfg = this.config.servers[server];
      if (cfg && isPerSession(cfg)) {
        throw new WireError(
          ErrorCode.InvalidRequest,
          `${what} arrived on the connection mcphub keeps only for listing the server's tools (each session uses its own connection, connection: per-session); no session owns it, so it was refused`,
        );
      }
      if (method === "roots/list") {
        // The server keeps the answer as state for later calls, whoever makes them: on a shared
        // connection one session's roots would leak into the others' calls.
        throw new WireError(
          ErrorCode.InvalidRequest,
          `${what} arrived on the connection the mcphub daemon shares between sessions, where one session's roots would apply to every session's calls, so it was refused; set connection: per-session for "${server}" in the mcphub config, or pin its roots with roots: [...]`,
        );
      }
      const owners = new Set(list.map((r) => r.peer));
      if (owners.size !== 1) {
        const why =
          owners.size === 0
            ? "no upstream session had a request in flight on it"
            : `requests from ${owners.size} upstream sessions were in flight on it`;
        throw new WireError(
          ErrorCode.InvalidRequest,
          `${what} arrived on the connection the mcphub daemon shares between sessions while ${why}, so it cannot tell which session the request is for and refused it; set connection: per-session for "${server}" in the mcphub config`,
        );
      }
      const [peer] = owners as Set<UpstreamPeer>;
      target = withRelated(peer as UpstreamPeer, list);
    }
    if (!target.peer.view.scope.allowsServer(server)) {
      throw new WireError(ErrorCode.InvalidRequest, `${what}: the server is out of scope for the upstream session`);
    }
    return target;
  }

  /**
   * Sends one request to the session and returns its answer. `asTask`: the downstream asked for
   * a task (mcphub is its receiver); when this client takes the method as a task too, it is sent
   * as one and followed to its result, each status reported.
   */
  private async forward(
    target: Target,
    method: ForwardedMethod,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
    asTask?: { ttl?: number; status: (s: StatusUpdate) => void },
  ): Promise<Record<string, unknown>> {
    const { peer } = target;
    if (!(await peer.whenInitialized(this.config.connect_timeout, signal))) {
      this.counters.refused++;
      if (peer.closed) throw new WireError(ErrorCode.ConnectionClosed, `${method}: the upstream session ended`);
      if (signal.aborted) throw new WireError(ErrorCode.RequestTimeout, `${method}: cancelled by the server`);
      throw new WireError(ErrorCode.InternalError, `${method}: the upstream client did not finish initializing within ${this.config.connect_timeout}ms`);
    }
    const missing = missingCapability(method, params, peer.capabilities);
    if (missing !== undefined) {
      this.counters.refused++;
      const who = peer.agent !== undefined ? `the upstream client (agent "${peer.agent}")` : "the upstream client";
      throw new WireError(ErrorCode.MethodNotFound, `${method}: ${who} did not declare ${missing}, so mcphub cannot forward this request`);
    }
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    let mine = this.forwarded.get(peer);
    if (!mine) {
      mine = new Set();
      this.forwarded.set(peer, mine);
    }
    mine.add(ctl);
    this.counters.forwarded++;
    // A request for an upstream task is queued for that task's tasks/result (the spec's
    // input_required flow); the task says input_required until it is answered.
    const task = target.task;
    task?.waiting(true);
    try {
      const request = { method, ...(params ? { params } : {}) } as ServerRequest;
      const options = {
        signal: ctl.signal,
        timeout: this.config.call_timeout,
        ...(target.related !== undefined ? { relatedRequestId: target.related } : {}),
        ...(task ? { relatedTask: { taskId: task.taskId } } : {}),
      };
      if (asTask && takesTask(method, peer.capabilities)) return await this.followClientTask(peer, request, options, asTask);
      try {
        return await peer.server.request(request, ResultSchema, options);
      } catch (err) {
        // The request it belonged to was answered meanwhile (a caller that stopped waiting):
        // the session's own stream carries it instead.
        if (target.related === undefined || !streamGone(err) || ctl.signal.aborted) throw err;
        const { relatedRequestId: _gone, ...rest } = options;
        return await peer.server.request(request, ResultSchema, rest);
      }
    } catch (err) {
      if (peer.closed) throw new WireError(ErrorCode.ConnectionClosed, `${method}: the upstream session ended before it answered`);
      if (err instanceof McpError || err instanceof WireError) throw toWire(err);
      throw new WireError(ErrorCode.InternalError, `${method}: ${errorText(err)}`);
    } finally {
      task?.waiting(false);
      signal.removeEventListener("abort", onAbort);
      mine.delete(ctl);
      if (mine.size === 0 && this.forwarded.get(peer) === mine) this.forwarded.delete(peer);
    }
  }

  /** The request sent to the session as a task of its own, followed with the SDK's requestStream. */
  private async followClientTask(
    peer: UpstreamPeer,
    request: ServerRequest,
    options: { signal: AbortSignal; timeout: number; relatedRequestId?: RequestId; relatedTask?: { taskId: string } },
    asTask: { ttl?: number; status: (s: StatusUpdate) => void },
  ): Promise<Record<string, unknown>> {
    const stream = peer.server.experimental.tasks.requestStream(request, ResultSchema, { ...options, task: asTask.ttl !== undefined ? { ttl: asTask.ttl } : {} });
    for await (const m of stream) {
      if (m.type === "taskCreated" || m.type === "taskStatus") {
        asTask.status({ status: m.task.status, ...(m.task.statusMessage !== undefined ? { statusMessage: m.task.statusMessage } : {}) });
      } else if (m.type === "result") {
        return withoutRelatedTask(m.result) ?? {};
      } else {
        throw m.error;
      }
    }
    throw new WireError(ErrorCode.InternalError, `${request.method}: the client's task ended without a result`);
  }

  private onNotification(origin: ConnectionOrigin, n: PeerMessage): void {
    if (n.method === "notifications/message") this.relayLog(origin, n.params ?? {});
    else if (n.method === "notifications/resources/updated") this.relayUpdated(origin, n.params ?? {});
    else if (n.method === "notifications/elicitation/complete") this.relayElicitationComplete(origin, n.params ?? {});
  }

  /** The out-of-band part of a URL-mode elicitation finished: tell the session that was asked. */
  private relayElicitationComplete(origin: ConnectionOrigin, params: Record<string, unknown>): void {
    if (typeof params.elicitationId !== "string") return;
    const key = `${connKey(origin.server, origin.connection)}\u0001${params.elicitationId}`;
    const peer = this.urlElicitations.get(key);
    this.urlElicitations.delete(key);
    if (peer && !peer.closed && peer.capabilities?.elicitation?.url) notify({ peer }, { method: "notifications/elicitation/complete", params });
  }

  private rememberUrlElicitation(key: string, peer: UpstreamPeer): void {
    this.urlElicitations.set(key, peer);
    // Bounded: a server that never completes its URL elicitations cannot grow this without end.
    while (this.urlElicitations.size > MAX_URL_ELICITATIONS) {
      const oldest = this.urlElicitations.keys().next().value;
      if (oldest === undefined) break;
      this.urlElicitations.delete(oldest);
    }
  }

  private relayLog(origin: ConnectionOrigin, params: Record<string, unknown>): void {
    const { server } = origin;
    const level = LOG_LEVELS.includes(params.level as LoggingLevel) ? (params.level as LoggingLevel) : "info";
    const logger = typeof params.logger === "string" && params.logger !== "" ? `${server}/${params.logger}` : server;
    const list = this.inflight.get(connKey(server, origin.connection)) ?? [];
    const relatedTask = relatedTaskOf(params);
    const byTask = relatedTask !== undefined ? this.tasks.get(connKey(server, origin.connection))?.get(relatedTask) : undefined;
    let targets: Target[];
    if (byTask) {
      targets = [targetOf(byTask)];
    } else if (origin.connection !== undefined) {
      const peer = this.peers.get(origin.connection);
      targets = peer ? [withRelated(peer, list)] : [];
    } else if (this.deps.singleSession) {
      targets = [...this.peers.values()].map((p) => withRelated(p, list));
    } else {
      const owners = new Set(list.map((r) => r.peer));
      if (owners.size === 1) {
        targets = [...owners].map((p) => withRelated(p, list));
      } else if (owners.size === 0) {
        // Nothing in flight: a message about the server itself, for sessions that asked for logs.
        targets = [...this.peers.values()].filter((p) => p.level !== undefined && this.connectionFor(p, server) === undefined).map((peer) => ({ peer }));
      } else {
        // Several sessions' requests in flight: the message may describe any one's work.
        this.counters.logsDropped++;
        return;
      }
    }
    for (const t of targets) {
      if (t.peer.closed || !t.peer.wantsLog(level) || !t.peer.view.scope.allowsServer(server)) continue;
      notify(t, { method: "notifications/message", params: { ...withoutRelatedTask(params), level, logger } });
    }
  }

  private relayUpdated(origin: ConnectionOrigin, params: Record<string, unknown>): void {
    if (typeof params.uri !== "string") return;
    for (const [peerId, publicUri] of this.subscriptions.holders(origin, params.uri)) {
      const peer = this.peers.get(peerId);
      if (peer) notify({ peer }, { method: "notifications/resources/updated", params: { ...params, uri: publicUri } });
    }
  }

  /** A connection (re)connected: its log level and subscriptions are set again. */
  private onConnected(origin: ConnectionOrigin): void {
    this.levels.reconnected(origin.server, origin.connection);
    this.subscriptions.resubscribe(origin);
  }

  // ---- helpers --------------------------------------------------------------------------------

  /** The sessions a connection serves: its owner, or every session in scope sharing it. */
  private sessionsOf(server: string, connection?: string): UpstreamPeer[] {
    if (connection !== undefined) {
      const owner = this.peers.get(connection);
      return owner ? [owner] : [];
    }
    return [...this.peers.values()].filter((p) => p.view.scope.allowsServer(server) && this.connectionFor(p, server) === undefined);
  }

  /** Closes a finished session's dedicated connections once nothing runs on them any more. */
  private closeDrained(peer: UpstreamPeer): void {
    if (!this.dedicated.has(peer.id)) return;
    for (const [key, list] of this.inflight) {
      if (ownedBy(key, peer.id) && list.length > 0) return;
    }
    this.dedicated.delete(peer.id);
    this.levels.forget(peer.id);
    void this.supervisor.closeConnections(peer.id);
  }
}

/** The task a request says it belongs to (its related-task `_meta`), if any. */
function relatedTaskOf(params: Record<string, unknown> | undefined): string | undefined {
  const meta = params?._meta;
  if (typeof meta !== "object" || meta === null) return undefined;
  const related = (meta as Record<string, unknown>)[RELATED_TASK_META_KEY];
  if (typeof related !== "object" || related === null) return undefined;
  const id = (related as { taskId?: unknown }).taskId;
  return typeof id === "string" ? id : undefined;
}

/** The params without their related-task `_meta` (a downstream's task id, which stays in mcphub). */
function withoutRelatedTask<P extends Record<string, unknown>>(params: P | undefined): P | undefined {
  const meta = params?._meta;
  if (!params || typeof meta !== "object" || meta === null || !(RELATED_TASK_META_KEY in meta)) return params;
  const { [RELATED_TASK_META_KEY]: _dropped, ...rest } = meta as Record<string, unknown>;
  const { _meta: _old, ...body } = params;
  return (Object.keys(rest).length > 0 ? { ...body, _meta: rest } : body) as P;
}

/**
 * The peer, with its newest call in flight on the connection that names a place for related
 * messages: the upstream request (messages ride its stream) or the upstream task (queued for it).
 */
function withRelated(peer: UpstreamPeer, list: readonly InFlight[]): Target {
  for (let i = list.length - 1; i >= 0; i--) {
    const r = list[i];
    if (r && r.peer === peer && (r.requestId !== undefined || r.task)) return targetOf(r);
  }
  return { peer };
}

function targetOf(r: InFlight): Target {
  return { peer: r.peer, ...(r.requestId !== undefined ? { related: r.requestId } : {}), ...(r.task ? { task: r.task } : {}) };
}

/** The transport no longer has the stream of the request a message was related to. */
function streamGone(err: unknown): boolean {
  return err instanceof Error && err.message.includes("No connection established for request ID");
}

/** Best effort: on the related request's stream when there is one, else on the session's own. */
function notify(target: Target, n: { method: string; params: Record<string, unknown> }): void {
  const send = (related?: RequestId) =>
    target.peer.server.notification(n as Parameters<typeof target.peer.server.notification>[0], related !== undefined ? { relatedRequestId: related } : undefined);
  void send(target.related).catch(() => (target.related !== undefined ? send().catch(() => undefined) : undefined));
}
