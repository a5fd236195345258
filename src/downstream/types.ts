// Public types of the downstream layer: what the gateway sees of each downstream MCP server and
// the errors it must tell apart (not connected, vault locked, outcome unknown), and what mcphub
// declares to every downstream as a client.
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { SandboxSummary } from "../sandbox/index.js";
import type { ClientCapabilities, Prompt, Resource, ResourceTemplate, ServerCapabilities, Task, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "../config/schema.js";

/**
 * What mcphub declares to every downstream server it connects to, as a client: sampling (with
 * context and tools), both elicitation modes, roots. One constant for the gateway and for `doctor
 * --probe`: a server may list different tools depending on what its client declares
 * (server-everything adds its sampling, elicitation and roots tools), so a probe that declared
 * less would count fewer tools than the gateway shows.
 */
export const DOWNSTREAM_CLIENT_CAPABILITIES: ClientCapabilities = {
  sampling: { context: {}, tools: {} },
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
  // Tasks: a downstream may ask for sampling or elicitation as a task, with mcphub as the receiver
  // (gateway/passthrough/client-tasks.ts), whatever the upstream client supports.
  tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
};

/**
 * `idle`: may run, but has no process or session now (not started yet under `start: auto|lazy`,
 * or stopped after `idle_timeout`); the next call, prompt or resource read starts it.
 */
export type ServerState = "idle" | "connecting" | "ready" | "failed" | "locked" | "needs_auth" | "disabled";

export interface DownstreamSnapshot {
  name: string;
  state: ServerState;
  connected: boolean;
  tools: Tool[];
  resources: Resource[];
  prompts: Prompt[];
  /** Resource templates, listed with the resources (empty when the server has none). */
  resourceTemplates: ResourceTemplate[];
  /** What the server declared at its handshake (logging, completions, resources.subscribe, ...). */
  capabilities?: ServerCapabilities;
  instructions?: string;
  serverVersion?: { name: string; version: string };
  /** Last connect/transport error, already sanitised (never secrets). */
  error?: string;
  /** Increments on every (re)connect or re-list, so consumers can tell a fresh list from a stale one. */
  generation: number;
  /** Sanitised tail of the child's stderr (stdio only), bounded to 8 KiB. */
  stderrTail?: string;
  /** How the running process is confined (a sandboxed stdio server with a session). */
  sandbox?: SandboxSummary;
}

/** Provided by the vault; optional. */
export interface SecretResolver {
  /** Vault secrets to add to a stdio child's env (server has `vault: PROJECT`). Throws LockedError. */
  envFor(server: string, cfg: ServerConfig): Promise<Record<string, string>>;
  /** Resolves a header value such as "vault://PROJECT/KEY". Throws LockedError. */
  header(ref: string): Promise<string>;
  /** Every secret value currently known, so stderr/errors can be redacted. */
  knownSecretValues(): string[];
}

/**
 * Provided by src/auth: signs the requests of remote servers (OAuth). The downstream layer only
 * hands the session's fetch to the transport; it never sees a token.
 */
export interface RemoteAuth {
  /** The auth session for one connection attempt of a remote server; undefined when it needs none. */
  sessionFor(server: string, cfg: ServerConfig): RemoteAuthSession | undefined;
  /** Calls `listener` when the server's sign-in changed (in this or another process). */
  onChange(server: string, listener: () => void): () => void;
  /** Token values currently known, so errors can be redacted. */
  knownSecretValues(): string[];
}

export interface RemoteAuthSession {
  /** Adds the Authorization header, refreshes, and rejects with NeedsAuthError when a person must sign in. */
  fetch: FetchLike;
  /** The NeedsAuthError a request of this session ran into (transports may wrap the thrown one). */
  takeNeedsAuth(): NeedsAuthError | undefined;
}

/**
 * A remote server needs a person to sign in (no token, or its refresh token was refused), or a
 * call needs a broader scope (`stepUp`). Like LockedError it never retries hot; the message names
 * the exact command to run.
 */
export class NeedsAuthError extends Error {
  override name = "NeedsAuthError";
  constructor(
    message: string,
    readonly command: string,
    /** True when only this request needs more scope; the session itself is fine. */
    readonly stepUp = false,
  ) {
    super(message);
  }
}

/** A secret a server needs is locked or missing: that server fails closed, the rest keep working. */
export class LockedError extends Error {
  override name = "LockedError";
}

/** Why a call's outcome is unknown; only "transport" and "timeout" invalidate the session. */
export type OutcomeUnknownReason = "transport" | "timeout" | "cancelled";

/**
 * A call was sent but no trustworthy answer came back (transport failure, timeout, cancellation).
 * The downstream may or may not have acted on it; the request is never replayed.
 */
export class OutcomeUnknownError extends Error {
  override name = "OutcomeUnknownError";
  readonly server: string;
  readonly tool: string;
  readonly reason: OutcomeUnknownReason;
  /** `interrupted`: true for a gateway shutdown, or why the server's session was ended on purpose. */
  constructor(server: string, tool: string, reason: OutcomeUnknownReason, detail: string, interrupted: boolean | string = false) {
    super(outcomeUnknownMessage(server, tool, reason, detail, interrupted));
    this.server = server;
    this.tool = tool;
    this.reason = reason;
  }
}

function outcomeUnknownMessage(server: string, tool: string, reason: OutcomeUnknownReason, detail: string, interrupted: boolean | string): string {
  const what = `call to ${server}__${tool}`;
  if (interrupted === true) {
    return `${what} was interrupted because the gateway is shutting down; the outcome is unknown, the request was not retried and no reconnect was attempted (${detail})`;
  }
  if (typeof interrupted === "string") {
    return `${what} was interrupted because ${interrupted}; the outcome is unknown and the request was not retried (${detail})`;
  }
  switch (reason) {
    case "cancelled":
      return `${what} was cancelled before an answer arrived; the outcome is unknown and the request was not retried (${detail})`;
    case "timeout":
      // The session is kept (see Downstream.classify): say so, a reconnect would mislead.
      return `${what} timed out: ${detail}; the outcome is unknown and the request was not retried. The server was sent notifications/cancelled and its connection stays up for other calls`;
    case "transport":
      return `${what} lost its connection; the outcome is unknown and the request was not retried; the connection is being re-established for future calls (${detail})`;
  }
}

export type NotConnectedKind = "unknown" | "disabled" | "not_published" | "not_connected" | "closed" | "cancelled";

/** The server cannot take a request right now; the message says why. */
export class NotConnectedError extends Error {
  override name = "NotConnectedError";
  readonly server: string;
  readonly kind: NotConnectedKind;
  constructor(server: string, kind: NotConnectedKind, message: string) {
    super(message);
    this.server = server;
    this.kind = kind;
  }
}

/**
 * Which connection a message came from: the server, and for a connection dedicated to one
 * upstream session (`connection: per-session`), the tag the gateway opened it with.
 */
export interface ConnectionOrigin {
  server: string;
  connection?: string;
}

/** A JSON-RPC request or notification as it crosses the downstream boundary. */
export interface PeerMessage {
  method: string;
  params?: Record<string, unknown>;
}

/**
 * How server→client traffic leaves the downstream layer. The downstream only exposes these hooks;
 * the gateway decides where each message goes (docs/protocol.md).
 */
export interface ClientHooks {
  /** Client capabilities declared to every downstream: what the gateway can route. */
  capabilities: ClientCapabilities;
  /** sampling/createMessage, elicitation/create, roots/list: resolve with the result or throw an McpError. */
  request(origin: ConnectionOrigin, request: PeerMessage, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** notifications/message, notifications/resources/updated, notifications/elicitation/complete. */
  notification(origin: ConnectionOrigin, notification: PeerMessage): void;
  /** A (re)connect finished: per-connection state (log level, subscriptions) must be applied again. */
  connected(origin: ConnectionOrigin): void;
  /**
   * The client's roots as local paths, for a sandboxed server whose `read:`/`write:` list
   * `roots` (asked before its process starts: a sandbox's mounts are fixed at launch). Throws an
   * Error whose message says why there are none to be had (e.g. a connection shared by sessions).
   */
  roots?(origin: ConnectionOrigin, signal?: AbortSignal): Promise<string[]>;
}

/** A task a downstream runs for a call, as its receiver reported it (tasks/get, notifications/tasks/status). */
export type DownstreamTask = Task;

export interface CallOptions {
  /**
   * The tag of a connection dedicated to one upstream session, for servers with
   * `connection: per-session`; omitted = the shared connection.
   */
  connection?: string;
  /** Hard cap for this request; when omitted an idle timeout applies that progress resets. */
  timeoutMs?: number;
  /** Without timeoutMs: how long the call may go without an answer or a progress notification. */
  idleTimeoutMs?: number;
  /** Without timeoutMs: the cap on the whole call, progress or not (call_timeout). */
  maxTotalMs?: number;
  signal?: AbortSignal;
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
  /**
   * The caller wants the call run as a task downstream (an upstream task, a detached call): done
   * for tools with taskSupport "optional" on servers that take tasks; a "required" tool always
   * runs as one. `ttl` is the lifetime asked for.
   */
  task?: { ttl?: number };
  /**
   * Called with the downstream's task when the call runs as one: as created, then at every
   * status change. The task id is the downstream's own; it must not be shown upstream.
   */
  onTask?: (task: DownstreamTask) => void;
}

export interface SupervisorOptions {
  servers: Record<string, ServerConfig>;
  connectTimeoutMs: number;
  /** "mcphub" or "mcphub/<agent>"; version = the mcphub version. */
  clientInfo: { name: string; version: string };
  secrets?: SecretResolver;
  /** OAuth for remote servers (src/auth). */
  auth?: RemoteAuth;
  log?: (level: "info" | "warn" | "error", msg: string) => void;
  /** Reconnect backoff; defaults to 500ms → 30s with full jitter. */
  backoff?: { initialMs: number; maxMs: number };
  /** Largest JSON-RPC line accepted from a stdio server; longer answers fail their own call. */
  maxMessageBytes?: number;
  /** Where server→client requests and notifications go; without hooks the client declares nothing. */
  hooks?: ClientHooks;
  /**
   * How long a ready server may go without a call, lease or subscription before it is stopped
   * (0 = never). Asked each time the idle clock starts, so a reloaded config applies at once.
   * Default: never.
   */
  idleTimeoutMs?: (name: string, cfg: ServerConfig) => number;
  /** Paths a sandboxed server never sees beyond the built-in ones (the agents' harness files). */
  sandboxProtect?: () => readonly string[];
}
