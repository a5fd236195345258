// The downstream connection's hot path without zod for the ordinary case. Each tools/call answered
// by a stdio server used to cost two schema parses in the SDK's Client: the whole message against
// JSONRPCMessageSchema (a union of four strict objects, tried in turn) and the result against
// CallToolResultSchema (every content block against a union of content types). For the shapes
// almost every answer has (a result response; a result of text blocks, isError, structuredContent)
// a hand check accepts exactly what the schema accepts and yields what it yields, so the schema runs
// only for everything else, whose output and errors are then the schema's own. Progress,
// cancellation and timeouts stay the SDK Protocol's: only the parsing is replaced.
import { CallToolResultSchema, JSONRPCMessageSchema, type CallToolResult, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
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
function isPlainResultResponse(m: Plain): boolean {
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
