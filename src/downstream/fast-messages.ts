// The downstream connection's hot path without zod for the ordinary case. Each tools/call answered
// by a stdio server used to cost two schema parses in the SDK's Client: the whole message against
// JSONRPCMessageSchema (a union of four strict objects, tried in turn) and the result against
// CallToolResultSchema (every content block against a union of content types). For the shapes
// almost every answer has (a result response; a result of text blocks, isError, structuredContent)
// a hand check accepts exactly what the schema accepts and yields what it yields, so the schema runs
// only for everything else, whose output and errors are then the schema's own. Progress,
// cancellation and timeouts stay the SDK Protocol's: only the parsing is replaced.
import { CallToolResultSchema, JSONRPCMessageSchema, type CallToolResult, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { z } from "zod";

type Plain = Record<string, unknown>;

function isPlain(v: unknown): v is Plain {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// zod copies an object key by key into a fresh one; an own `__proto__` key would become the copy's
// prototype, so an object carrying one is left to zod to get its exact output.
const hasProtoKey = (o: Plain) => Object.hasOwn(o, "__proto__");

function isRequestId(v: unknown): boolean {
  return typeof v === "string" || (typeof v === "number" && Number.isInteger(v));
}

/**
 * `{"jsonrpc":"2.0","id":…,"result":{…}}` with nothing else and no `_meta` in the result: what
 * JSONRPCResultResponseSchema accepts unchanged (its result is a loose object whose only checked
 * key is `_meta`).
 */
export function isPlainResultResponse(m: Plain): boolean {
  let keys = 0;
  for (const k in m) {
    if (k !== "jsonrpc" && k !== "id" && k !== "result") return false;
    keys++;
  }
  if (keys !== 3 || m.jsonrpc !== "2.0" || !isRequestId(m.id)) return false;
  const result = m.result;
  return isPlain(result) && result._meta === undefined && !Object.hasOwn(result, "_meta") && !hasProtoKey(result);
}

/** One line from a stdio server as the SDK's deserializeMessage parses it (same errors). */
export function parseMessageLine(line: string): JSONRPCMessage {
  const value: unknown = JSON.parse(line);
  if (isPlain(value) && isPlainResultResponse(value)) return value as JSONRPCMessage;
  return JSONRPCMessageSchema.parse(value);
}

/** `{"type":"text","text":"…"}` and nothing else: TextContentSchema's output is the block itself. */
function isPlainTextBlock(b: unknown): boolean {
  if (!isPlain(b)) return false;
  let keys = 0;
  for (const k in b) {
    if (k !== "type" && k !== "text") return false;
    keys++;
  }
  return keys === 2 && b.type === "text" && typeof b.text === "string";
}

/** A tools/call result CallToolResultSchema would return unchanged (no default to fill in). */
export function isPlainCallResult(v: unknown): v is CallToolResult {
  if (!isPlain(v) || hasProtoKey(v)) return false;
  for (const k in v) {
    const x = v[k];
    if (k === "content") {
      if (!Array.isArray(x)) return false;
      for (const b of x) if (!isPlainTextBlock(b)) return false;
    } else if (k === "isError") {
      if (typeof x !== "boolean") return false;
    } else if (k === "structuredContent") {
      if (!isPlain(x) || hasProtoKey(x)) return false;
    } else {
      // _meta (checked by its schema) or anything else: the schema decides.
      return false;
    }
  }
  return Array.isArray(v.content);
}

/**
 * CallToolResultSchema for `client.request(…)`: the hand check, else the schema itself. A result
 * the schema refuses throws the schema's own ZodError, which the Protocol rejects the call with
 * exactly as before.
 */
export const CallToolResultFastSchema = z.unknown().transform((value): CallToolResult => {
  if (isPlainCallResult(value)) return value;
  const parsed = CallToolResultSchema.safeParse(value);
  if (!parsed.success) throw parsed.error;
  return parsed.data;
});

/**
 * The same check for Protocol.request()'s result, without zod's machinery around it. The SDK
 * parses a result with any schema that has no zod-4 internals through its own safeParse (its
 * zod-3 path, sdk/server/zod-compat.ts); a plain result passes as it is, anything else gets
 * CallToolResultSchema's own verdict and output. (A zod transform cost a parse context, a pipe
 * and a payload per call on the hot path.)
 */
const requestResultParser = {
  safeParse(value: unknown): { success: true; data: CallToolResult } | { success: false; error: z.ZodError } {
    if (isPlainCallResult(value)) return { success: true, data: value };
    return CallToolResultSchema.safeParse(value);
  },
};
export const CallToolResultRequestSchema = requestResultParser as unknown as typeof CallToolResultSchema;

/** The parts of the SDK Protocol (a Client, SDK 1.32) the response fast path reaches. */
interface ProtocolInternals {
  _onresponse?: (message: JSONRPCMessage) => void;
  _requestResolvers?: Map<number, (response: JSONRPCMessage) => void>;
  _responseHandlers?: Map<number, (response: JSONRPCMessage) => void>;
  _progressHandlers?: Map<number, unknown>;
  _taskProgressTokens?: Map<string, number>;
  _cleanupTimeout?: (messageId: number) => void;
}

/**
 * Protocol._onresponse for a response isPlainResultResponse accepted, step for step, without its
 * two zod parses of the message (which, for such a response, always succeed). False when the SDK
 * does not have the parts this needs: the caller then hands the response to _onresponse itself.
 */
function onPlainResult(p: ProtocolInternals, response: Plain): boolean {
  const resolvers = p._requestResolvers;
  const handlers = p._responseHandlers;
  const progress = p._progressHandlers;
  const taskTokens = p._taskProgressTokens;
  if (!(resolvers instanceof Map && handlers instanceof Map && progress instanceof Map && taskTokens instanceof Map) || typeof p._cleanupTimeout !== "function") return false;
  const messageId = Number(response.id);
  const message = response as JSONRPCMessage;
  const resolver = resolvers.get(messageId);
  if (resolver) {
    resolvers.delete(messageId);
    resolver(message);
    return true;
  }
  const handler = handlers.get(messageId);
  // An unknown id: the Protocol's own path reports it.
  if (handler === undefined) return false;
  handlers.delete(messageId);
  p._cleanupTimeout(messageId);
  // A CreateTaskResult keeps its progress handler (the task reports progress later).
  const task = (response.result as Plain).task as { taskId?: unknown } | null | undefined;
  if (task !== null && typeof task === "object" && typeof task.taskId === "string") taskTokens.set(task.taskId, messageId);
  else progress.delete(messageId);
  handler(message);
  return true;
}

/**
 * Puts a fast path in front of the Client on its transport (call right after connect): a plain
 * result response, which the Protocol would recognise only after three zod parses of the whole
 * message (isJSONRPCResultResponse in its message router, twice more in _onresponse), is handled
 * as _onresponse handles it (onPlainResult); every other message takes the Protocol's own route.
 * Only what isPlainResultResponse accepts is taken, all of which the Protocol's check accepts.
 */
export function routeResponsesDirectly(client: object, transport: Transport): void {
  const internals = client as ProtocolInternals;
  const onresponse = internals._onresponse;
  const protocol = transport.onmessage;
  if (typeof onresponse !== "function" || !protocol) return;
  const respond = onresponse.bind(client);
  transport.onmessage = (message, extra) => {
    if (!(isPlain(message) && isPlainResultResponse(message))) protocol(message, extra);
    else if (!onPlainResult(internals, message)) respond(message);
  };
}
