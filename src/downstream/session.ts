// Opening one session with one downstream: resolve its secrets, build the transport, handshake,
// list tools (and resources/prompts when offered), all bounded by one connect timeout. Used by the
// supervisor for every (re)connect and by `doctor --probe`.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { traceHeaders } from "../telemetry/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CancelTaskRequestSchema,
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListRootsRequestSchema,
  ListTasksRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  TaskStatusNotificationSchema,
  ToolListChangedNotificationSchema,
  type ClientCapabilities,
  type CreateMessageResult,
  type ElicitResult,
  type ListRootsResult,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ServerConfig } from "../config/schema.js";
import { isSandboxed } from "../config/sandbox.js";
import { explainLaunchFailure, prepareSandbox, SandboxError, type SandboxSummary } from "../sandbox/index.js";
import { buildChildEnv, resolveChildCwd } from "./stdio/child-env.js";
import { SecretMask } from "./secret-mask.js";
import { routeResponsesDirectly } from "./fast-messages.js";
import { findCommand } from "./stdio/spawn-plan.js";
import { explainingLine, SENSITIVE_NAME_RE, sanitizeLine, sanitizeText, sensitiveEnvValues, summarizeStartupStderr } from "./sanitize.js";
import { ProcessGroupStdioTransport } from "./stdio/transport.js";
import { serverRunsToolTasks, TaskWatchers, taskSupportOf, type TaskSupport } from "./tasks.js";
import { LockedError, NeedsAuthError, type PeerMessage, type RemoteAuth, type RemoteAuthSession, type SecretResolver } from "./types.js";
import { collapseMcpPrefix } from "../util/errors.js";

export type ListKind = "tools" | "resources" | "prompts";

export interface OpenSessionOptions {
  name: string;
  cfg: ServerConfig;
  /** All configured servers, for env isolation. */
  allServers: Record<string, ServerConfig>;
  clientInfo: { name: string; version: string };
  secrets?: SecretResolver;
  /** OAuth for remote servers: signs requests, raises NeedsAuthError. */
  auth?: RemoteAuth;
  timeoutMs: number;
  /** Called when the downstream says one of its lists changed. */
  onListChanged?: (kind: ListKind) => void;
  /** Called once when the session's transport closes, for whatever reason. */
  onClose?: () => void;
  parentEnv?: NodeJS.ProcessEnv;
  /** Aborts the attempt (supervisor shutdown); the child, if any, is killed. */
  signal?: AbortSignal;
  /** Largest JSON-RPC line accepted from a stdio server (max_downstream_message_size). */
  maxMessageBytes?: number;
  /** Server→client traffic of this connection (see ClientHooks); omitted = declare nothing. */
  peer?: SessionPeer;
  /** A sandboxed server's `roots`: the client's roots as local paths (see ClientHooks.roots). */
  sandboxRoots?: (signal?: AbortSignal) => Promise<string[]>;
  /** More paths a sandboxed server never sees (the configured agents' harness files). */
  sandboxProtect?: readonly string[];
}

/** ClientHooks bound to one connection. */
export interface SessionPeer {
  capabilities: ClientCapabilities;
  request(request: PeerMessage, signal: AbortSignal): Promise<Record<string, unknown>>;
  notification(notification: PeerMessage): void;
}

const MAX_LIST_PAGES = 200;
const SESSION_CLOSE_TIMEOUT_MS = 5000;
const VAULT_REF_PREFIX = "vault://";

/** A live, handshaken session and what it listed at connect time. */
export class Session {
  closed = false;
  /** The OAuth session of a remote server, so a failed request can tell it needs sign-in. */
  auth?: RemoteAuthSession;
  /** taskSupport by tool name, for the tool list it was built from (see taskSupport()). */
  private supportIndex?: { of: Tool[]; byName: Map<string, TaskSupport> };
  /** Masks the secrets this connection was given in what it sends back; undefined when it has none. */
  mask?: SecretMask;
  /** How a sandboxed stdio server was confined (undefined = not sandboxed). */
  sandbox?: SandboxSummary;
  constructor(
    readonly client: Client,
    readonly transport: Transport,
    readonly stdio: ProcessGroupStdioTransport | undefined,
    /** Secret values this session was given (env secrets, header values), for redaction. */
    readonly secretValues: string[],
    public tools: Tool[],
    public resources: Resource[],
    public prompts: Prompt[],
    public resourceTemplates: ResourceTemplate[] = [],
    /** Status notifications of the tasks this session follows. */
    readonly tasks: TaskWatchers = new TaskWatchers(),
  ) {}

  /**
   * The tool's `execution.taskSupport`, or "forbidden" when the server takes no task-augmented
   * calls at all. Indexed once per tool list, and only for servers that take tasks: the lookup is
   * on every call's path.
   */
  taskSupport(tool: string): TaskSupport {
    if (!serverRunsToolTasks(this.capabilities)) return "forbidden";
    if (this.supportIndex?.of !== this.tools) {
      const byName = new Map<string, TaskSupport>();
      for (const t of this.tools) {
        const support = taskSupportOf(t);
        if (support !== "forbidden") byName.set(t.name, support);
      }
      this.supportIndex = { of: this.tools, byName };
    }
    return this.supportIndex.byName.get(tool) ?? "forbidden";
  }

  get capabilities(): ServerCapabilities {
    return this.client.getServerCapabilities() ?? {};
  }

  get instructions(): string | undefined {
    const text = this.client.getInstructions();
    return text !== undefined && this.mask ? this.mask.text(text) : text;
  }

  get serverVersion(): { name: string; version: string } | undefined {
    const v = this.client.getServerVersion();
    return v ? { name: v.name, version: v.version } : undefined;
  }

  /** Closes the client and transport (for stdio: kills the process tree). Never throws. */
  async close(): Promise<void> {
    this.closed = true;
    const t = this.transport;
    if (t instanceof StreamableHTTPClientTransport && t.sessionId !== undefined) {
      // Politely end the server-side session; a dead server must not stall shutdown.
      await withTimeout(t.terminateSession().catch(() => undefined), 1000);
    }
    await withTimeout(this.client.close().catch(() => undefined), SESSION_CLOSE_TIMEOUT_MS);
    if (this.stdio) await this.stdio.close();
  }
}

/** A connect attempt failed; `message` is sanitised and safe to show. */
export class ConnectError extends Error {
  override name = "ConnectError";
  /** The child's sanitised stderr tail, for stdio servers that wrote any. */
  readonly stderrTail?: string;
  constructor(message: string, stderrTail?: string) {
    super(message);
    if (stderrTail !== undefined) this.stderrTail = stderrTail;
  }
}

/** A fetch that adds the W3C trace context of the current span (a no-op while tracing is off). */
function tracedFetch(base: FetchLike): FetchLike {
  return (input, init) => {
    const trace = traceHeaders();
    if (!trace) return base(input, init);
    const headers = new Headers(init?.headers);
    for (const [k, v] of Object.entries(trace)) headers.set(k, v);
    return base(input, { ...init, headers });
  };
}

export async function openSession(opts: OpenSessionOptions): Promise<Session> {
  const { name, cfg, secrets } = opts;
  const parentEnv = opts.parentEnv ?? process.env;
  const controller = new AbortController();
  let phase = "resolving secrets";
  const timer = setTimeout(() => controller.abort(new ConnectError(`connect timed out after ${opts.timeoutMs}ms while ${phase}`)), opts.timeoutMs);
  timer.unref();
  const onOuterAbort = () => controller.abort(new ConnectError("connect abandoned: shutting down"));
  if (opts.signal?.aborted) onOuterAbort();
  opts.signal?.addEventListener("abort", onOuterAbort, { once: true });
  const redact: string[] = [...sensitiveEnvValues(parentEnv)];
  const secretValues: string[] = [];
  let transport: Transport | undefined;
  let stdio: ProcessGroupStdioTransport | undefined;
  let client: Client | undefined;
  let authSession: RemoteAuthSession | undefined;
  let sandbox: SandboxSummary | undefined;
  try {
    if (cfg.url !== undefined) {
      const headers = await withAbort(resolveHeaders(cfg, secrets, secretValues), controller.signal);
      const url = new URL(cfg.url);
      const requestInit: RequestInit = { headers };
      authSession = opts.auth?.sessionFor(name, cfg);
      // The current span's traceparent goes with every request (when tracing is on).
      const fetch = tracedFetch(authSession ? authSession.fetch : globalThis.fetch);
      transport = cfg.transport === "sse" ? new SSEClientTransport(url, { requestInit, fetch }) : new StreamableHTTPClientTransport(url, { requestInit, fetch });
    } else {
      let vaultEnv: Record<string, string> | undefined;
      if (cfg.vault !== undefined) {
        if (!secrets) throw new LockedError(`server "${name}" takes secrets from vault project "${cfg.vault}", but no vault is available`);
        vaultEnv = await withAbort(secrets.envFor(name, cfg), controller.signal);
        secretValues.push(...Object.values(vaultEnv));
      }
      const env = buildChildEnv({ server: name, cfg, allServers: opts.allServers, parentEnv, vaultEnv });
      redact.push(...sensitiveEnvValues(env));
      const command = cfg.command ?? "";
      const args = cfg.args ?? [];
      const cwd = resolveChildCwd(cfg.cwd);
      let launch: { command: string; args: string[]; env: Record<string, string>; cwd?: string | undefined; extraFds?: Buffer[]; onEnded?: () => void } = { command, args, env, cwd };
      if (isSandboxed(cfg.sandbox)) {
        // The sandbox decides the whole launch; when it cannot be set up, nothing is started.
        phase = "setting up the sandbox";
        const plan = await withAbort(
          prepareSandbox({
            server: name,
            settings: cfg.sandbox,
            command,
            resolvedCommand: findCommand({ command, platform: process.platform, env, ...(cwd ? { cwd } : {}) }),
            args,
            env,
            ownEnv: [...Object.keys(cfg.env ?? {}), ...Object.keys(vaultEnv ?? {})],
            cwd,
            ...(opts.sandboxRoots ? { roots: opts.sandboxRoots } : {}),
            gatewayEnv: parentEnv,
            ...(opts.sandboxProtect ? { protect: opts.sandboxProtect } : {}),
            signal: controller.signal,
          }),
          controller.signal,
        );
        sandbox = plan.summary;
        launch = { command: plan.command, args: plan.args, env: plan.env, cwd: plan.cwd, extraFds: plan.fds, ...(plan.cleanup ? { onEnded: plan.cleanup } : {}) };
      }
      stdio = new ProcessGroupStdioTransport({
        ...launch,
        ...(opts.maxMessageBytes !== undefined ? { maxMessageBytes: opts.maxMessageBytes } : {}),
      });
      transport = stdio;
    }
    redact.push(...secretValues);
    const auth = opts.auth;
    const mask = SecretMask.of(secretValues, authSession && auth ? () => auth.knownSecretValues() : undefined);
    const masked = <T>(v: T): T => (mask ? mask.value(v) : v);

    const peer = opts.peer;
    client = new Client(opts.clientInfo, { capabilities: peer?.capabilities ?? {} });
    const watchers = new TaskWatchers();
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => watchers.notify(n.params));
    if (peer) {
      // The gateway decides where these go; the SDK client has validated the request's shape and
      // validates the answer against the method's result schema before it goes back.
      const ask = <T>(req: { method: string; params?: unknown }, extra: { signal: AbortSignal }) =>
        peer.request({ method: req.method, ...(req.params ? { params: masked(req.params as Record<string, unknown>) } : {}) }, extra.signal) as Promise<T>;
      const caps = peer.capabilities;
      if (caps.sampling) client.setRequestHandler(CreateMessageRequestSchema, (req, extra) => ask<CreateMessageResult>(req, extra));
      if (caps.elicitation) client.setRequestHandler(ElicitRequestSchema, (req, extra) => ask<ElicitResult>(req, extra));
      if (caps.roots) client.setRequestHandler(ListRootsRequestSchema, (req, extra) => ask<ListRootsResult>(req, extra));
      // The tasks a server asked this client to run (task-augmented sampling or elicitation):
      // the gateway is their receiver and answers for them.
      if (caps.tasks) {
        client.setRequestHandler(GetTaskRequestSchema, (req, extra) => ask(req, extra));
        client.setRequestHandler(GetTaskPayloadRequestSchema, (req, extra) => ask(req, extra));
        if (caps.tasks.list) client.setRequestHandler(ListTasksRequestSchema, (req, extra) => ask(req, extra));
        if (caps.tasks.cancel) client.setRequestHandler(CancelTaskRequestSchema, (req, extra) => ask(req, extra));
      }
      const relay = (n: { method: string; params?: unknown }) =>
        peer.notification({ method: n.method, ...(n.params ? { params: masked(n.params as Record<string, unknown>) } : {}) });
      client.setNotificationHandler(LoggingMessageNotificationSchema, relay);
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, relay);
      if (caps.elicitation) client.setNotificationHandler(ElicitationCompleteNotificationSchema, relay);
    }
    const onListChanged = opts.onListChanged;
    if (onListChanged) {
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => onListChanged("tools"));
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => onListChanged("resources"));
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => onListChanged("prompts"));
    }
    let sessionRef: Session | undefined;
    let closedEarly = false;
    client.onclose = () => {
      if (sessionRef) sessionRef.closed = true;
      else closedEarly = true;
      opts.onClose?.();
    };
    client.onerror = () => {
      // Transport-level noise (a non-JSON stdout line, an SSE hiccup); a real failure closes
      // the transport or fails the request, which is handled where it happens.
    };

    const connectOpts = { signal: controller.signal, timeout: opts.timeoutMs };
    phase = "handshaking";
    await client.connect(transport, connectOpts);
    // A stdio server's answers skip the Protocol's zod look at every message (fast-messages.ts).
    if (stdio) routeResponsesDirectly(client, transport);
    phase = "listing tools";
    const tools = masked((await listAllOf("tools", client, connectOpts)) as Tool[]);
    const caps = client.getServerCapabilities() ?? {};
    phase = "listing resources and prompts";
    // Resources and prompts are optional extras: a failure to list them never fails the connect.
    const [resources, prompts, templates] = await Promise.all([
      caps.resources ? (listAllOf("resources", client, connectOpts) as Promise<Resource[]>).catch(() => []) : Promise.resolve([]),
      caps.prompts ? (listAllOf("prompts", client, connectOpts) as Promise<Prompt[]>).catch(() => []) : Promise.resolve([]),
      caps.resources ? listResourceTemplates(client, connectOpts).catch(() => []) : Promise.resolve([]),
    ]);
    if (controller.signal.aborted) throw controller.signal.reason;
    const session = new Session(client, transport, stdio, secretValues, tools, masked(resources), masked(prompts), masked(templates), watchers);
    if (authSession) session.auth = authSession;
    if (mask) session.mask = mask;
    if (sandbox) session.sandbox = sandbox;
    sessionRef = session;
    session.closed = closedEarly;
    return session;
  } catch (err) {
    const cause = controller.signal.aborted && controller.signal.reason instanceof Error ? controller.signal.reason : err;
    if (client) await withTimeout(client.close().catch(() => undefined), SESSION_CLOSE_TIMEOUT_MS);
    else if (transport) await withTimeout(transport.close().catch(() => undefined), SESSION_CLOSE_TIMEOUT_MS);
    if (stdio) await stdio.close();
    const known = [...redact, ...(secrets?.knownSecretValues() ?? []), ...(opts.auth?.knownSecretValues() ?? [])];
    if (cause instanceof LockedError) throw new LockedError(sanitizeLine(cause.message, known));
    if (cause instanceof SandboxError) throw new ConnectError(sanitizeLine(cause.message, known, 1024));
    // Transports may wrap what the signed fetch threw; the auth session remembers it.
    const needsAuth = cause instanceof NeedsAuthError ? cause : authSession?.takeNeedsAuth();
    if (needsAuth) throw new NeedsAuthError(sanitizeLine(needsAuth.message, known), needsAuth.command, needsAuth.stepUp);
    const tail = stdio && stdio.stderrTail.byteLength > 0 ? sanitizeText(stdio.stderrTail.text(), known) : undefined;
    throw new ConnectError(describeFailure(cause, stdio, cfg, known), tail);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onOuterAbort);
  }
}

function describeFailure(err: unknown, stdio: ProcessGroupStdioTransport | undefined, cfg: ServerConfig, known: string[]): string {
  let msg = `connect failed: ${sanitizeLine(errorText(err), known, 512)}`;
  if (stdio?.exit) {
    const { code, signal } = stdio.exit;
    msg += signal ? ` (process killed by ${signal})` : ` (process exited with code ${code})`;
  }
  if (stdio && stdio.stderrTail.byteLength > 0) {
    const tail = sanitizeText(stdio.stderrTail.text(), known);
    // bubblewrap's own complaint: the sandbox could not be set up, not the server failing.
    const sandboxCause = isSandboxed(cfg.sandbox) ? explainLaunchFailure(tail, { command: cfg.command ?? "", args: cfg.args ?? [], network: cfg.sandbox.network ?? "none" }) : undefined;
    if (sandboxCause) return sanitizeLine(sandboxCause, known, 1024);
    if (tail.trim() !== "") {
      // The fixed summary says what kind of problem it is; the line (secrets already redacted)
      // says which file, option or variable, which is what an operator needs to fix it.
      const line = explainingLine(tail);
      msg += `; downstream stderr: ${summarizeStartupStderr(tail, stdio.stderrTail.truncated, cfg)}${line ? `: ${line}` : ""}`;
    }
  }
  return msg;
}

export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    // fetch() hides the useful part ("ECONNREFUSED") in cause.
    if (err.message === "fetch failed" && cause instanceof Error) return `${err.message}: ${cause.message}`;
    return collapseMcpPrefix(err.message || err.name);
  }
  return String(err);
}

async function resolveHeaders(cfg: ServerConfig, secrets: SecretResolver | undefined, secretValues: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(cfg.headers ?? {})) {
    if (v.startsWith(VAULT_REF_PREFIX)) {
      if (!secrets) throw new LockedError(`header ${k} refers to a vault secret, but no vault is available`);
      const value = await secrets.header(v);
      secretValues.push(value);
      out[k] = value;
    } else {
      // A literal credential header (a token written into the config) is a secret too.
      if (SENSITIVE_NAME_RE.test(k)) secretValues.push(v);
      out[k] = v;
    }
  }
  return out;
}

/** Every page of one list (bounded, in case a server loops its cursors). */
export async function listAllOf(kind: ListKind, client: Client, opts: RequestOptions): Promise<Tool[] | Resource[] | Prompt[]> {
  const out: unknown[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_LIST_PAGES; i++) {
    const params = cursor ? { cursor } : undefined;
    const r =
      kind === "tools"
        ? await client.listTools(params, opts).then((x) => ({ items: x.tools, next: x.nextCursor }))
        : kind === "resources"
          ? await client.listResources(params, opts).then((x) => ({ items: x.resources, next: x.nextCursor }))
          : await client.listPrompts(params, opts).then((x) => ({ items: x.prompts, next: x.nextCursor }));
    out.push(...r.items);
    if (!r.next || r.next === cursor) break;
    cursor = r.next;
  }
  return out as Tool[] | Resource[] | Prompt[];
}

/** Every page of the resource template list (bounded like listAllOf). */
export async function listResourceTemplates(client: Client, opts: RequestOptions): Promise<ResourceTemplate[]> {
  const out: ResourceTemplate[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_LIST_PAGES; i++) {
    const r = await client.listResourceTemplates(cursor ? { cursor } : undefined, opts);
    out.push(...r.resourceTemplates);
    if (!r.nextCursor || r.nextCursor === cursor) break;
    cursor = r.nextCursor;
  }
  return out;
}

function withAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(undefined), ms);
    t.unref();
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      () => {
        clearTimeout(t);
        resolve(undefined);
      },
    );
  });
}
