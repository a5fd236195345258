// One MCP server session (one harness connection) bound to an agent's view. Uses the SDK's
// low-level Server because the gateway serves raw JSON schemas and a tool list that changes at
// run time. Answers initialize and tools/list from config and the cached catalogue, before any
// downstream is up. After a config reload the session uses the agent's rebuilt view.
import { InMemoryTaskMessageQueue } from "@modelcontextprotocol/sdk/experimental/tasks";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type CompleteResult,
  type CreateTaskResult,
} from "@modelcontextprotocol/sdk/types.js";
import { isNamespaced } from "../config/schema.js";
import { canonicalJson } from "../util/json/canonical.js";
import { nestedTooDeep } from "../util/json/depth.js";
import { VERSION } from "../version.js";
import { callContext, downstreamFailure, LIMITED_ERROR_CODE, limitErrorData, runCall } from "./call/index.js";
import { routeCallsDirectly, type CallHandler } from "./direct-calls.js";
import { errorText } from "../util/errors.js";
import { logsCarryRequests, withLogRequest } from "../util/log.js";
import { errorClassOf, spanName, startCallTrace, tracingEnabled, type CallTrace } from "../telemetry/index.js";
import type { Hub } from "./hub.js";
import {
  HOWTO_URI,
  listPrompts,
  listResources,
  listResourceTemplates,
  published,
  resolvePrompt,
  resolveResource,
  resolveTemplate,
  type Published,
} from "./listings.js";
import { advertisedName, managementToolFor } from "./management.js";
import { type Caller, isWireError, toWire, UPSTREAM_SERVER_CAPABILITIES, UpstreamPeer, WireError } from "./passthrough/index.js";
import { renderTask, runManagementTool, startCallToolTask } from "./tools/index.js";
import { SessionTaskStore } from "./tasks/index.js";
import { mountConflicts } from "./tools/list-servers.js";
import { badRequest, jsonResult, type ToolContext } from "./tools/context.js";
import type { AgentView } from "./view.js";

export interface Session {
  server: Server;
  /** Connects the session to its transport (the Server, with tools/call on the direct path). */
  connect(transport: Transport): Promise<void>;
  /** This session as the protocol pass-through knows it. */
  peer: UpstreamPeer;
  /** Stops listening for catalogue changes and releases what the session held; idempotent. */
  dispose(): void;
}

/** Management tools whose answer time is the metrics' discovery latency. */
const DISCOVERY: ReadonlySet<string> = new Set(["search_tools", "resolve_tool", "describe_tool", "list_servers"]);
/** Numbers sessions within the process, so a log line's request id names its session too. */
let sessions = 0;
/** Deeper tool arguments are refused (no real tool takes them; far deeper ones overflow the stack). */
export const MAX_ARGUMENT_DEPTH = 512;

export function createSession(hub: Hub, initialView: AgentView): Session {
  let view = initialView;
  const sessionNo = ++sessions;
  const server = new Server(
    { name: "mcphub", version: VERSION },
    {
      capabilities: UPSTREAM_SERVER_CAPABILITIES,
      instructions: view.instructions,
      // MCP tasks: the SDK's tasks/get, tasks/result, tasks/list and tasks/cancel handlers read
      // the detached registry through this store (bound to the agent, not to this session), and
      // deliver what a task asks of the client through this session's queue on tasks/result.
      taskStore: new SessionTaskStore(hub.detached, () => view),
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  const peer = new UpstreamPeer(server, view);
  hub.passthrough.attach(peer);
  server.oninitialized = () => peer.markInitialized();
  const pass = hub.passthrough;
  const caller = (requestId: Caller["requestId"]): Caller => ({ peer, requestId, task: undefined });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: view.advertisement().tools }));

  // Every upstream tools/call: a span of its own when tracing is on (the root of the call's tree,
  // or a child of the client's traceparent), and its id on every log line it causes (JSON logs).
  const callTool: CallHandler = (params, extra) => {
    const trace = tracingEnabled()
      ? startCallTrace(spanName("tools/call", params.name), { "mcp.method.name": "tools/call", "gen_ai.tool.name": params.name, "mcphub.agent": view.owner, "mcphub.session": sessionNo }, extra.headers)
      : undefined;
    const run = trace ? () => traced(trace, handleCall(params, extra, trace)) : () => handleCall(params, extra, undefined);
    return logsCarryRequests() ? withLogRequest(`${sessionNo}:${String(extra.requestId).slice(0, 64)}`, run, trace?.traceId) : run();
  };
  const handleCall = async (params: Parameters<CallHandler>[0], extra: Parameters<CallHandler>[1], trace: CallTrace | undefined): ReturnType<CallHandler> => {
    const token = extra.progressToken;
    const ctx: ToolContext = {
      hub,
      view,
      signal: extra.signal,
      caller: caller(extra.requestId),
      trace,
      onProgress:
        token !== undefined
          ? (p: { progress: number; total?: number; message?: string }) => {
              void extra.notify({ method: "notifications/progress", params: { progressToken: token, ...p } }).catch(() => undefined);
            }
          : undefined,
    };
    const name = params.name;
    // Recursive walks further on (schema validation, canonical JSON) would overflow the stack.
    const deep = params.arguments !== undefined ? nestedTooDeep(params.arguments, MAX_ARGUMENT_DEPTH) : undefined;
    if (deep !== undefined) {
      return badRequest(`arguments of ${name} nest more than ${MAX_ARGUMENT_DEPTH} levels deep (at arguments.${deep}); nothing was sent: flatten them`);
    }
    // No published downstream name is a management alias: the mount plan refuses those.
    const management = managementToolFor(name);
    if (management && hub.metrics.enabled && DISCOVERY.has(management)) {
      const started = performance.now();
      try {
        return await runManagementTool(management, ctx, params.arguments);
      } finally {
        hub.metrics.discovery(management, (performance.now() - started) / 1000);
      }
    }
    if (management) return runManagementTool(management, ctx, params.arguments);
    return callMounted(ctx, name, params.arguments);
  };
  // A task-augmented tools/call: the call is located, checked and confirmed while this request is
  // open, then runs in the background; the answer is its task.
  const startTask = async (name: string, args: unknown, ttl: number | undefined, extra: { signal: AbortSignal; requestId: Caller["requestId"]; requestInfo?: { headers: Record<string, string | string[] | undefined> } | undefined }): Promise<CreateTaskResult> => {
    const trace = tracingEnabled()
      ? startCallTrace(spanName("tools/call", name), { "mcp.method.name": "tools/call", "gen_ai.tool.name": name, "mcphub.agent": view.owner, "mcphub.session": sessionNo, "mcphub.task": true }, extra.requestInfo?.headers)
      : undefined;
    const started = startTaskCall(name, args, ttl, { hub, view, signal: extra.signal, caller: caller(extra.requestId), trace });
    return trace ? traced(trace, started) : started;
  };
  const startTaskCall = async (name: string, args: unknown, ttl: number | undefined, ctx: ToolContext): Promise<CreateTaskResult> => {
    const management = managementToolFor(name);
    if (management === "call_tool") return startCallToolTask(ctx, args, ttl);
    if (management) {
      throw new McpError(ErrorCode.MethodNotFound, `${name} does not run as a task (only ${advertisedName("call_tool", view.naming)} and downstream tools do); call it without task augmentation`);
    }
    const call = callContext({
      ports: hub.calls,
      view,
      target: { kind: "published", name },
      args: (args ?? {}) as Record<string, unknown>,
      via: "mount",
      mode: "task",
      taskTtl: ttl,
      signal: ctx.signal,
      caller: ctx.caller,
      trace: ctx.trace,
    });
    return renderTask(await runCall(call), call.entry?.namespaced ?? name);
  };
  // Ordinary calls take the direct path (direct-calls.ts); this handler answers the rest.
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
    const task = req.params.task;
    if (task) return startTask(req.params.name, req.params.arguments, task.ttl, extra);
    const token = extra._meta?.progressToken;
    return callTool(req.params, {
      signal: extra.signal,
      requestId: extra.requestId,
      headers: extra.requestInfo?.headers,
      notify: (n) => extra.sendNotification(n),
      ...(token !== undefined ? { progressToken: token } : {}),
    });
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: listResources(published(hub, view)) }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: listResourceTemplates(published(hub, view)) }));

  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const uri = req.params.uri;
    if (uri === HOWTO_URI) return { contents: [{ uri, mimeType: "text/markdown", text: howto(view) }] };
    const owned = await resolveOrWait(hub, view, (p) => resolveResource(hub, view, p, uri));
    const bare = !isNamespaced(hub.config.servers[owned.server] ?? { enabled: true });
    try {
      const result = await pass.run(
        caller(extra.requestId),
        owned.server,
        (o) => hub.supervisor.readResource(owned.server, owned.name, { ...o, signal: extra.signal }),
        extra.signal,
      );
      if (bare) return result;
      return { ...result, contents: result.contents.map((c) => ({ ...c, uri: c.uri === owned.name ? uri : `mcphub://${encodeURIComponent(owned.server)}/${encodeURIComponent(c.uri)}` })) };
    } catch (err) {
      if (isWireError(err)) throw toWire(err);
      throw new WireError(ErrorCode.InternalError, `read ${uri}: ${errorText(err)}`);
    }
  });

  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    const uri = req.params.uri;
    if (uri === HOWTO_URI) return {}; // static: never updated
    const owned = await resolveOrWait(hub, view, (p) => resolveResource(hub, view, p, uri));
    await pass.subscribe(peer, owned.server, owned.name, uri);
    return {};
  });

  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    const uri = req.params.uri;
    if (uri === HOWTO_URI) return {};
    const owned = resolveResource(hub, view, published(hub, view), uri);
    if (!("error" in owned)) pass.unsubscribe(peer, owned.server, owned.name);
    return {};
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: listPrompts(published(hub, view)) }));

  server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
    const name = req.params.name;
    const owned = await resolveOrWait(hub, view, (p) => resolvePrompt(hub, view, p, name));
    try {
      return await pass.run(
        caller(extra.requestId),
        owned.server,
        (o) => hub.supervisor.getPrompt(owned.server, owned.name, req.params.arguments, { ...o, signal: extra.signal }),
        extra.signal,
      );
    } catch (err) {
      if (isWireError(err)) throw toWire(err);
      throw new WireError(ErrorCode.InternalError, `get prompt ${name}: ${errorText(err)}`);
    }
  });

  server.setRequestHandler(CompleteRequestSchema, async (req, extra): Promise<CompleteResult> => {
    const ref = req.params.ref;
    const owned = await resolveOrWait(hub, view, (p) =>
      ref.type === "ref/prompt" ? resolvePrompt(hub, view, p, ref.name) : resolveTemplate(hub, view, p, ref.uri),
    );
    const snap = hub.supervisor.snapshot(owned.server);
    // A server without completions has no suggestions to offer: an empty answer, not an error.
    if (snap?.connected && !snap.capabilities?.completions) return { completion: { values: [], hasMore: false } };
    const params = { ...req.params, ref: ref.type === "ref/prompt" ? { ...ref, name: owned.name } : { ...ref, uri: owned.name } };
    try {
      return await pass.complete(caller(extra.requestId), owned.server, params, extra.signal);
    } catch (err) {
      if (isWireError(err)) throw toWire(err);
      throw new WireError(ErrorCode.InternalError, `completion/complete: ${errorText(err)}`);
    }
  });

  server.setRequestHandler(SetLevelRequestSchema, async (req) => {
    await pass.setLevel(peer, req.params.level);
    return {};
  });

  server.setNotificationHandler(RootsListChangedNotificationSchema, () => pass.rootsChanged(peer));

  // list_changed only when what this session advertises really changed, so a harness's prompt
  // cache survives downstream churn that does not touch its listing.
  const resourcesOf = (p: Published) => canonicalJson([listResources(p), listResourceTemplates(p)]);
  let toolsPrint = view.advertisement().fingerprint;
  let resourcesPrint = resourcesOf(published(hub, view));
  let promptsPrint = canonicalJson(listPrompts(published(hub, view)));
  let scheduled = false;
  const check = () => {
    scheduled = false;
    if (!server.transport) return;
    reportConflicts(hub, view);
    const t = view.advertisement().fingerprint;
    if (t !== toolsPrint) {
      toolsPrint = t;
      void server.sendToolListChanged().catch(() => undefined);
    }
    const now = published(hub, view);
    const r = resourcesOf(now);
    if (r !== resourcesPrint) {
      resourcesPrint = r;
      void server.sendResourceListChanged().catch(() => undefined);
    }
    const p = canonicalJson(listPrompts(now));
    if (p !== promptsPrint) {
      promptsPrint = p;
      void server.sendPromptListChanged().catch(() => undefined);
    }
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(check);
  };
  const offCatalog = hub.catalog.onChange(schedule);
  const offSupervisor = hub.supervisor.onChange(schedule);
  const offGuard = hub.guard.onChange(schedule);
  const offReload = hub.onReload(() => {
    try {
      view = hub.view(view.agent);
    } catch {
      // The agent left the config: keep the last view; the daemon refuses its next request.
    }
    schedule();
  });
  let disposed = false;
  const dispose = () => {
    if (disposed) return;
    disposed = true;
    offCatalog();
    offSupervisor();
    offGuard();
    offReload();
    pass.detach(peer);
  };
  server.onclose = dispose;
  const connect = async (transport: Transport) => {
    await server.connect(transport);
    routeCallsDirectly(server, transport, callTool);
  };
  return { server, connect, peer, dispose };
}

const reported = new WeakMap<Hub, Set<string>>();

/** Logs each refused unprefixed name once per gateway process, so an operator sees it. */
function reportConflicts(hub: Hub, view: AgentView): void {
  let seen = reported.get(hub);
  if (!seen) {
    seen = new Set();
    reported.set(hub, seen);
  }
  for (const c of mountConflicts({ hub, view })) {
    const message = String(c.message);
    if (seen.has(message)) continue;
    seen.add(message);
    hub.log.warn(message);
  }
}

/**
 * Resolves a public prompt/resource name; when it is unknown while in-scope servers are still
 * connecting, waits for them (bounded) and tries once more, so a request made right after
 * startup works. Throws InvalidParams with the resolver's message otherwise.
 */
async function resolveOrWait(hub: Hub, view: AgentView, resolve: (p: Published) => { server: string; name: string } | { error: string }) {
  let r = resolve(published(hub, view));
  if ("error" in r && (await hub.waitForPending(view))) r = resolve(published(hub, view));
  if ("error" in r) throw new WireError(ErrorCode.InvalidParams, r.error);
  return r;
}

/** tools/call of a published tool name: through the call pipeline, rendered as tools/call answers. */
async function callMounted(ctx: ToolContext, name: string, args: unknown): Promise<CallToolResult> {
  const call = callContext({
    ports: ctx.hub.calls,
    view: ctx.view,
    target: { kind: "published", name },
    args: (args ?? {}) as Record<string, unknown>,
    via: "mount",
    mode: "wait",
    signal: ctx.signal,
    caller: ctx.caller,
    onProgress: ctx.onProgress,
    trace: ctx.trace,
  });
  const outcome = await runCall(call);
  switch (outcome.kind) {
    case "result":
      return outcome.result;
    case "bad_reference":
      // A refused bare name crosses as is; the rest are the SDK's InvalidParams errors.
      if (outcome.conflict) throw new WireError(ErrorCode.InvalidParams, outcome.message);
      throw new McpError(ErrorCode.InvalidParams, outcome.message);
    case "out_of_scope":
    case "busy":
      throw new McpError(ErrorCode.InvalidParams, outcome.message);
    case "limited":
      // Answered at once, as a protocol error a client can tell apart: the limit and when to retry.
      throw new WireError(LIMITED_ERROR_CODE, outcome.message, limitErrorData(outcome.refusal));
    case "not_found":
      throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}" (${String(outcome.document.error)}); try ${advertisedName("search_tools", ctx.view.naming)}`);
    case "accepted":
      // A task-required tool that outlived the call's wait: it goes on in the background.
      return jsonResult(outcome.document);
    case "not_sent":
    case "task":
      // Invalid arguments, a guardrail refusal, a declined confirmation: nothing was sent.
      return { ...jsonResult(outcome.document), isError: true };
    case "failed": {
      const err = outcome.error;
      // The client must see this one as the protocol error it is: its data lists the URLs to open.
      if (err instanceof McpError && err.code === ErrorCode.UrlElicitationRequired) throw toWire(err);
      return { content: [{ type: "text", text: downstreamFailure(call.entry?.namespaced ?? name, err) }], isError: true };
    }
  }
}

function howto(view: AgentView): string {
  const n = (t: Parameters<typeof advertisedName>[0]) => advertisedName(t, view.naming);
  return [
    "# Using the mcphub gateway",
    "",
    "Downstream tools are named `server__tool`.",
    "",
    `1. \`${n("resolve_tool")}\` {query: "what you want to do"} recommends one tool with an argument template.`,
    "   Run it only when `status` is `confident`; with `ambiguous`, compare the alternatives or search.",
    `2. \`${n("search_tools")}\` {query} lists ranked candidates; an empty query lists everything.`,
    `3. \`${n("describe_tool")}\` {tool: "server__tool"} shows the full input schema.`,
    `4. \`${n("call_tool")}\` {tool: "server__tool", arguments: {...}} calls it. Add detach: true for long calls and poll with \`${n("poll_result")}\`.`,
    `5. A result over the response budget comes back as a receipt: read it with \`${n("get_result")}\` {callId, format: "text"}, following nextCursor until done, or search it with {callId, find: "text or /regex/"}.`,
    "",
  ].join("\n");
}

/** Ends the request's span when its answer is settled (a throw marks it failed by its class). */
function traced<T>(trace: CallTrace, answer: Promise<T>): Promise<T> {
  return answer.then(
    (v) => {
      trace.end();
      return v;
    },
    (err: unknown) => {
      trace.end({ error: errorClassOf(err) });
      throw err;
    },
  );
}
