// Transport-level refusals, with the SDK transport's status codes, JSON-RPC codes and messages
// (server/webStandardStreamableHttp.js), so a client sees the same answer from either transport.
import type { ServerResponse } from "node:http";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
export { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";

export function refuse(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

export const REFUSALS = {
  notAcceptablePost: [406, -32000, "Not Acceptable: Client must accept both application/json and text/event-stream"],
  notAcceptableGet: [406, -32000, "Not Acceptable: Client must accept text/event-stream"],
  unsupportedMedia: [415, -32000, "Unsupported Media Type: Content-Type must be application/json"],
  parseError: [400, -32700, "Parse error: Invalid JSON"],
  invalidMessage: [400, -32700, "Parse error: Invalid JSON-RPC message"],
  alreadyInitialized: [400, -32600, "Invalid Request: Server already initialized"],
  oneInitialize: [400, -32600, "Invalid Request: Only one initialization request is allowed"],
  notInitialized: [400, -32000, "Bad Request: Server not initialized"],
  sessionIdRequired: [400, -32000, "Bad Request: Mcp-Session-Id header is required"],
  sessionNotFound: [404, -32001, "Session not found"],
  getConflict: [409, -32000, "Conflict: Only one SSE stream is allowed per session"],
  invalidEventId: [400, -32000, "Invalid event ID format"],
} as const satisfies Record<string, readonly [number, number, string]>;

export function refuseWith(res: ServerResponse, which: keyof typeof REFUSALS): void {
  const [status, code, message] = REFUSALS[which];
  refuse(res, status, code, message);
}

export function methodNotAllowed(res: ServerResponse): void {
  refuse(res, 405, -32000, "Method not allowed.", { allow: "GET, POST, DELETE" });
}

/** undefined when the header is absent or a version this SDK speaks; else the 400 message. */
export function protocolVersionProblem(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const v = Array.isArray(header) ? header.join(", ") : header;
  if ((SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(v)) return undefined;
  return `Bad Request: Unsupported protocol version: ${v} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`;
}

/** Whether a media-type list (Accept) names `type`; a substring test like the SDK's. */
export const accepts = (header: string | undefined, type: string) => header !== undefined && header.includes(type);

const preferences = new Map<string, boolean>();

/**
 * Whether the client prefers an SSE stream to a JSON body: text/event-stream with a higher q, or
 * the same q and listed first (how Node servers commonly break ties, e.g. `negotiator`). The
 * SDK's client sends "application/json, text/event-stream" and gets JSON whenever a request needs
 * no stream; a client that lists text/event-stream first gets a stream for every request.
 */
export function prefersStream(accept: string): boolean {
  let known = preferences.get(accept);
  if (known !== undefined) return known;
  let json: { q: number; at: number } | undefined;
  let sse: { q: number; at: number } | undefined;
  accept.split(",").forEach((part, at) => {
    const [type = "", ...params] = part.split(";").map((x) => x.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (type === "application/json" && !json) json = { q: Number.isFinite(q) ? q : 1, at };
    if (type === "text/event-stream" && !sse) sse = { q: Number.isFinite(q) ? q : 1, at };
  });
  known = sse !== undefined && json !== undefined && (sse.q > json.q || (sse.q === json.q && sse.at < json.at));
  // Clients send one Accept header over and over; a handful of distinct ones are remembered.
  if (preferences.size < 64) preferences.set(accept, known);
  return known;
}

