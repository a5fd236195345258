// JSON-RPC 2.0 messages as MCP accepts them, checked by hand. The SDK checks every message it
// reads with a zod union (JSONRPCMessageSchema), which showed up in the gateway's profile on every
// call, on the way in from a client and again from a downstream; this accepts and refuses exactly
// what that union does (strict top-level keys, integer or string ids, object params/result, a
// typed _meta), while each method's params and result are still checked where they are used.
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

export type MessageKind = "request" | "notification" | "response" | "error";


export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** A request id or progress token: a string or a (safe) integer. */
export const isId = (v: unknown): v is RequestId => typeof v === "string" || Number.isSafeInteger(v);
export const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** Request, notification and result `_meta`: an object whose progress token and related task are typed. */
function metaOk(holder: Record<string, unknown>): boolean {
  const meta = holder._meta;
  if (meta === undefined) return true;
  if (!isObject(meta)) return false;
  if (meta.progressToken !== undefined && !isId(meta.progressToken)) return false;
  const task = meta[RELATED_TASK];
  return task === undefined || (isObject(task) && typeof task.taskId === "string");
}

const paramsOk = (params: unknown) => params === undefined || (isObject(params) && metaOk(params));

/** What kind of message `m` is, or undefined when it is not a valid JSON-RPC message. */
export function messageKind(m: unknown): MessageKind | undefined {
  if (!isObject(m) || m.jsonrpc !== "2.0") return undefined;
  let keys = 1; // jsonrpc
  let kind: MessageKind;
  if (m.method !== undefined) {
    if (typeof m.method !== "string" || !paramsOk(m.params) || m.result !== undefined || m.error !== undefined) return undefined;
    if (m.id !== undefined) {
      if (!isId(m.id)) return undefined;
      kind = "request";
      keys++;
    } else {
      kind = "notification";
    }
    keys += 1 + (m.params !== undefined ? 1 : 0);
  } else if (m.result !== undefined) {
    if (!isId(m.id) || !isObject(m.result) || !metaOk(m.result)) return undefined;
    kind = "response";
    keys += 2;
  } else if (m.error !== undefined) {
    const e = m.error;
    if (!isObject(e) || !Number.isSafeInteger(e.code) || typeof e.message !== "string") return undefined;
    if (m.id !== undefined && !isId(m.id)) return undefined;
    kind = "error";
    keys += m.id !== undefined ? 2 : 1;
  } else {
    return undefined;
  }
  // Strict like the SDK's schemas: no key beyond the ones counted above.
  for (const k in m) if (Object.hasOwn(m, k)) keys--;
  return keys === 0 ? kind : undefined;
}

export const isResponse = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } => "result" in m || "error" in m;

/** The progress token a request asks for, if any: its answer then streams from the start. */
export function progressTokenOf(m: JSONRPCMessage): unknown {
  const params = (m as { params?: { _meta?: { progressToken?: unknown } } }).params;
  return params?._meta?.progressToken;
}
