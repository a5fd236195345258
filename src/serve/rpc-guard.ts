// JSON-RPC 2.0 hygiene at the edge of every upstream session, before the SDK sees a message:
// every malformed request gets exactly one error reply (the SDK would otherwise drop it, or answer
// a bad `params` with -32603 and a raw zod dump), and every error we send carries its text once
// (the SDK puts "MCP error -32602: " into McpError.message and then sends that message as is).
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ClientNotificationSchema,
  ClientRequestSchema,
  ErrorCode,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { directCallParams } from "../gateway/index.js";

export type RequestId = string | number;

/** An error reply; `id` is null when the request's id could not be read (JSON-RPC 2.0 §5). */
export interface RpcErrorReply {
  jsonrpc: "2.0";
  id: RequestId | null;
  error: { code: number; message: string };
}

export type Inspected = { message: JSONRPCMessage } | { reply: RpcErrorReply } | { drop: string };

/** Longest error text we put into a reply: a hint, not a dump. */
const MAX_ERROR_TEXT = 300;

export function errorReply(id: RequestId | null, code: number, message: string): RpcErrorReply {
  return { jsonrpc: "2.0", id, error: { code, message: clip(message) } };
}

const schemasByMethod = (() => {
  const map = new Map<string, z.ZodType>();
  for (const union of [ClientRequestSchema, ClientNotificationSchema]) {
    for (const option of union.options as readonly z.ZodObject[]) {
      const method = (option.shape as { method?: { value?: unknown } }).method?.value;
      if (typeof method === "string") map.set(method, option as z.ZodType);
    }
  }
  return map;
})();

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is RequestId => typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v));

/**
 * Classifies one decoded message from a client: pass it on (rebuilt from the JSON-RPC fields
 * only), answer it with an error, or drop it (an invalid notification: JSON-RPC never replies to
 * notifications, and the SDK would only log it).
 */
export function inspectIncoming(raw: unknown): Inspected {
  if (Array.isArray(raw)) {
    return { reply: errorReply(null, ErrorCode.InvalidRequest, "invalid request: JSON-RPC batches are not supported; send one message per line") };
  }
  if (!isPlainObject(raw)) {
    return { reply: errorReply(null, ErrorCode.InvalidRequest, `invalid request: expected a JSON-RPC object, got ${kind(raw)}`) };
  }
  const hasId = "id" in raw;
  const id = isId(raw.id) ? raw.id : null;
  const invalid = (why: string, withId: RequestId | null = id): Inspected => ({
    reply: errorReply(withId, ErrorCode.InvalidRequest, `invalid request: ${why}`),
  });
  if (raw.jsonrpc !== "2.0") return invalid(`"jsonrpc" must be "2.0" (got ${kind(raw.jsonrpc)})`);
  if (hasId && !isId(raw.id)) return invalid(`"id" must be a string or an integer (got ${kind(raw.id)})`, null);

  if (!("method" in raw)) {
    // A response to one of our requests (ping, sampling, elicitation, roots).
    const isResult = "result" in raw;
    const isError = "error" in raw;
    if (!hasId || isResult === isError) return invalid('a message needs "method", or "id" with exactly one of "result" or "error"', null);
    if (isResult) {
      if (!isPlainObject(raw.result)) return invalid('"result" must be an object', null);
      return { message: { jsonrpc: "2.0", id: raw.id as RequestId, result: raw.result } as JSONRPCMessage };
    }
    const e = raw.error;
    if (!isPlainObject(e) || typeof e.code !== "number" || typeof e.message !== "string") {
      return invalid('"error" must be {code: number, message: string}', null);
    }
    return { message: { jsonrpc: "2.0", id: raw.id as RequestId, error: e } as JSONRPCMessage };
  }
  if (typeof raw.method !== "string" || raw.method === "") return invalid(`"method" must be a non-empty string (got ${kind(raw.method)})`);
  if ("result" in raw || "error" in raw) return invalid('a request must not carry "result" or "error"');
  const method = raw.method;
  const params = raw.params;
  if (params !== undefined && !isPlainObject(params)) {
    if (!hasId) return { drop: `notification ${method} with non-object params` };
    return { reply: errorReply(id, ErrorCode.InvalidParams, `invalid params for ${method}: "params" must be an object (got ${kind(params)})`) };
  }
  const message = (hasId
    ? { jsonrpc: "2.0", id: raw.id as RequestId, method, ...(params !== undefined ? { params } : {}) }
    : { jsonrpc: "2.0", method, ...(params !== undefined ? { params } : {}) }) as JSONRPCMessage;
  // An ordinary tools/call (the hot path) has had everything its schema checks checked by
  // directCallParams; the zod parse is kept for every other message.
  const schema = directCallParams(message) ? undefined : schemasByMethod.get(method);
  if (schema) {
    const parsed = schema.safeParse(message);
    if (!parsed.success) {
      if (!hasId) return { drop: `notification ${method} with invalid params` };
      return { reply: errorReply(id, ErrorCode.InvalidParams, `invalid params for ${method}: ${firstIssue(parsed.error)}`) };
    }
  }
  return { message };
}

/** Strips the SDK's "MCP error <code>: " prefixes from an outgoing error's message. */
export function cleanOutgoing(message: JSONRPCMessage): JSONRPCMessage {
  const m = message as { error?: { code?: unknown; message?: unknown } };
  if (!isPlainObject(m.error) || typeof m.error.message !== "string") return message;
  const text = stripMcpPrefix(m.error.message);
  if (text === m.error.message) return message;
  return { ...message, error: { ...m.error, message: text } } as JSONRPCMessage;
}

const MCP_PREFIX_RE = /^(?:MCP error -?\d+: )+/;

/** "MCP error -32602: MCP error -32602: x" → "x". */
export function stripMcpPrefix(text: string): string {
  return text.replace(MCP_PREFIX_RE, "");
}

/**
 * Puts the guard in front of a connected transport: incoming messages are inspected before the
 * SDK's handler sees them, outgoing errors are cleaned. Call after `server.connect(transport)`.
 */
export function guardTransport(transport: Transport, onDrop?: (why: string) => void): void {
  const deliver = transport.onmessage;
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage, options?: TransportSendOptions) => send(cleanOutgoing(message), options);
  transport.onmessage = (raw, extra) => {
    const verdict = inspectIncoming(raw);
    if ("message" in verdict) deliver?.(verdict.message, extra);
    else if ("reply" in verdict) void send(verdict.reply as unknown as JSONRPCMessage).catch(() => undefined);
    else onDrop?.(verdict.drop);
  };
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "does not match the method's schema";
  const path = issue.path.length ? issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("").slice(1) : "message";
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : "";
  return `${path}: ${issue.message.replace(/^Invalid input: /, "")}${more}`;
}

function kind(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return `"${v.length > 20 ? `${v.slice(0, 20)}…` : v}"`;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return `a ${typeof v}`;
}

function clip(text: string): string {
  return text.length <= MAX_ERROR_TEXT ? text : `${text.slice(0, MAX_ERROR_TEXT - 1)}…`;
}
