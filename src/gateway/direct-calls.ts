// tools/call, the gateway's hot path, answered without the SDK Server's per-call overhead. For
// each tools/call the SDK's Protocol and Server run six zod parses: three to tell what kind of
// message it is, the request against CallToolRequestSchema twice (Protocol, then Server), and the
// result against CallToolResultSchema before sending it. The result was already checked when the
// downstream answered, and the transport already checked the message's JSON-RPC shape, so this
// takes ordinary tools/call requests from the transport before the Server sees them, checks their
// params by hand, runs the session's own handler and sends the answer (or the error, shaped as the
// Protocol shapes it) through the same transport. Everything else goes to the Server unchanged,
// including any tools/call this does not take (a task-augmented one, or malformed params, which
// the Server answers with its usual error); a request's related-task `_meta` is dropped first
// (dropRelatedTask). Cancellation and session close abort the handler's
// signal exactly as the Protocol does for its own handlers.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  type CallToolResult,
  type JSONRPCMessage,
  type RequestId,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { isId, isObject, RELATED_TASK } from "../util/json/jsonrpc.js";

export interface CallParams {
  name: string;
  arguments?: Record<string, unknown>;
}

/** What the tools/call handler gets besides the params, on either path. */
export interface CallExtra {
  signal: AbortSignal;
  requestId: RequestId;
  progressToken?: string | number;
  /** Sends a notification about this request (progress) on its stream. */
  notify(n: ServerNotification): Promise<void>;
  /** The HTTP request's headers (an HTTP client's traceparent is read from them). */
  headers?: Record<string, string | string[] | undefined> | undefined;
}

export type CallHandler = (params: CallParams, extra: CallExtra) => Promise<CallToolResult>;

/** The params of a tools/call this path takes, or undefined to leave the message to the Server. */
export function directCallParams(m: JSONRPCMessage): { id: RequestId; params: CallParams; progressToken?: string | number } | undefined {
  if ((m as { method?: unknown }).method !== "tools/call") return undefined;
  const id = (m as { id?: unknown }).id;
  const p = (m as { params?: unknown }).params;
  if (!isId(id) || !isObject(p) || typeof p.name !== "string" || p.task !== undefined) return undefined;
  if (p.arguments !== undefined && !isObject(p.arguments)) return undefined;
  const meta = p._meta;
  let progressToken: string | number | undefined;
  if (meta !== undefined) {
    if (!isObject(meta) || meta[RELATED_TASK] !== undefined) return undefined;
    if (meta.progressToken !== undefined) {
      if (!isId(meta.progressToken)) return undefined;
      progressToken = meta.progressToken;
    }
  }
  const params: CallParams = p.arguments !== undefined ? { name: p.name, arguments: p.arguments } : { name: p.name };
  return progressToken !== undefined ? { id, params, progressToken } : { id, params };
}

/**
 * A client's request that names a task (related-task `_meta`) is taken as an ordinary request:
 * the tasks mcphub runs belong to the gateway, a client has no request to make within one, and
 * the SDK would otherwise hold the answer back in that task's queue (for tasks/result) instead of
 * sending it. tasks/* requests name their task in params, not here, and are left as they are.
 */
function dropRelatedTask(m: JSONRPCMessage): void {
  const method = (m as { method?: unknown }).method;
  if (typeof method !== "string" || method.startsWith("tasks/") || !isId((m as { id?: unknown }).id)) return;
  const meta = (m as { params?: { _meta?: unknown } }).params?._meta;
  if (isObject(meta) && RELATED_TASK in meta) delete meta[RELATED_TASK];
}

/**
 * Puts the direct path in front of `server` on `transport`; call right after server.connect().
 * Returns how many handlers are running (for tests and stats).
 */
export function routeCallsDirectly(server: Server, transport: Transport, handler: CallHandler): () => number {
  const toServer = transport.onmessage;
  const running = new Map<RequestId, AbortController>();

  // One async function per call: a chain of then/catch/finally made seven promises a call here.
  const run = async (id: RequestId, params: CallParams, progressToken: string | number | undefined, headers: CallExtra["headers"]): Promise<void> => {
    const ac = new AbortController();
    running.set(id, ac);
    const extra: CallExtra = {
      signal: ac.signal,
      requestId: id,
      progressToken,
      headers,
      notify: async (n) => {
        if (!ac.signal.aborted) await server.notification(n, { relatedRequestId: id });
      },
    };
    try {
      // The handler starts a microtask later, as the Protocol starts its own: the rest of the
      // messages read with this one are taken first.
      await undefined;
      let reply: JSONRPCMessage;
      try {
        const result = await handler(params, extra);
        if (ac.signal.aborted) return;
        reply = { jsonrpc: "2.0", id, result };
      } catch (err) {
        if (ac.signal.aborted) return;
        const error = err as { code?: unknown; message?: unknown; data?: unknown } | undefined;
        const code = Number.isSafeInteger(error?.code) ? (error?.code as number) : ErrorCode.InternalError;
        const message = typeof error?.message === "string" ? error.message : "Internal error";
        reply = { jsonrpc: "2.0", id, error: { code, message, ...(error?.data !== undefined ? { data: error.data } : {}) } };
      }
      await transport.send(reply);
    } catch (err) {
      server.onerror?.(new Error(`Failed to send response: ${String(err)}`));
    } finally {
      if (running.get(id) === ac) running.delete(id);
    }
  };

  transport.onmessage = (message, extra) => {
    const call = directCallParams(message);
    if (call) {
      void run(call.id, call.params, call.progressToken, extra?.requestInfo?.headers);
      return;
    }
    dropRelatedTask(message);
    if ((message as { method?: unknown }).method === "notifications/cancelled") {
      const params = (message as { params?: { requestId?: unknown; reason?: unknown } }).params;
      const ac = isId(params?.requestId) ? running.get(params.requestId) : undefined;
      if (ac) {
        running.delete(params?.requestId as RequestId);
        ac.abort(params?.reason);
      }
    }
    toServer?.(message, extra);
  };
  const onclose = transport.onclose;
  transport.onclose = () => {
    for (const ac of running.values()) ac.abort();
    running.clear();
    onclose?.();
  };
  return () => running.size;
}
