// Bounds on what the management tools take and give back. Arguments are length-checked before
// any handler sees them, so an oversized value is refused in a short message that never quotes
// it; and every answer fits response_budget: an error message is clipped, and any other answer
// that is over the budget is stored like an oversized tool result and answered with a receipt
// (or, when the shared store cannot be reached, with an error that says so).
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { jsonByteLength, jsonPieces, jsonTextOf } from "../../util/json/stream.js";
import { clipUtf8 } from "../../util/text.js";
import { StoreUnavailableError } from "../../store/index.js";
import { unreachableStore } from "../call/finalize.js";
import { advertisedName, type ManagementTool } from "../management.js";
import { buildReceipt, receiptBudget } from "../receipts.js";
import { BadRequest, badRequest, isOwnError, type ToolContext } from "./context.js";

/** Longest accepted value of each string argument, in characters. */
const STRING_LIMITS: Record<string, number> = {
  callId: 128,
  since: 64,
  server: 256,
  tool: 512,
  name: 512,
  format: 16,
  lines: 40,
  find: 1024,
};
/** Any other string argument (search and resolve apply their own, smaller, query bound). */
const DEFAULT_STRING_LIMIT = 64 * 1024;
const MAX_KEY_CHARS = 64;
const MAX_ARRAY_ITEMS = 100;
/** All arguments of one management call together (call_tool's `arguments` go downstream and are not counted). */
const MAX_ARGS_BYTES = 256 * 1024;
/** An error message never carries more than this. */
export const MAX_ERROR_BYTES = 1024;

function tooLong(name: string, length: number, limit: number): BadRequest {
  return new BadRequest(`${name} is ${length} characters long; at most ${limit} are accepted`);
}

/** Throws BadRequest for an argument that is too long to be a real request. Quotes none of it. */
export function checkArgumentBounds(tool: ManagementTool, raw: unknown): void {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return; // the handler's schema says what to send
  let counted = 0;
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (key.length > MAX_KEY_CHARS) throw new BadRequest(`an argument name is ${key.length} characters long; ${tool} takes short names such as callId, tool or query`);
    if (tool === "call_tool" && key === "arguments") continue;
    const limit = STRING_LIMITS[key] ?? DEFAULT_STRING_LIMIT;
    if (typeof value === "string") {
      if (value.length > limit) throw tooLong(key, value.length, limit);
      counted += value.length;
    } else if (Array.isArray(value)) {
      if (value.length > MAX_ARRAY_ITEMS) throw new BadRequest(`${key} has ${value.length} items; at most ${MAX_ARRAY_ITEMS} are accepted`);
      for (const item of value) {
        if (typeof item === "string" && item.length > limit) throw tooLong(`an item of ${key}`, item.length, limit);
      }
      counted += jsonByteLength(value);
    } else if (value !== null && typeof value === "object") {
      counted += jsonByteLength(value);
    }
    if (counted > MAX_ARGS_BYTES) throw new BadRequest(`the arguments are over ${MAX_ARGS_BYTES / 1024} KiB; ${tool} takes a few short fields`);
  }
}

/**
 * The reply's JSON size. call_tool answers with the downstream's result object itself, which the
 * call's finalize stage has just measured: its text is kept (jsonTextOf) and is exactly what the
 * transport will send, so it is measured from that text instead of being serialised again.
 */
function measuredBytes(reply: CallToolResult): number {
  const text = jsonTextOf(reply);
  return text !== undefined ? Buffer.byteLength(text, "utf8") : jsonByteLength(reply);
}

/**
 * Makes an answer fit the response budget (none with `verbatim: true` or a budget of 0).
 * get_result answers are already fitted (and must stay pages); the gateway's own error messages
 * are clipped. Any other answer over the budget is first sent once instead of twice: its document
 * as compact JSON in the one text block, which every client reads (local-agent and the SDK's
 * helpers take the text when there is no structuredContent). Still over, it (a downstream's error
 * result included) is stored in the vault and replaced by a receipt owned by this agent.
 */
export async function boundReply(ctx: ToolContext, tool: ManagementTool, reply: CallToolResult): Promise<CallToolResult> {
  if (isOwnError(reply)) return clipError(reply, ctx.hub.config.response_budget);
  const budget = receiptBudget(ctx.hub.config);
  if (budget === undefined || tool === "get_result") return reply;
  if (measuredBytes(reply) <= budget) return reply;
  const single = sentOnce(reply);
  if (single && jsonByteLength(single) <= budget) return single;
  if (tool === "list_servers" && single) return shrinkServerList(single, budget);
  // resolve_tool's document is the contract hosts parse (and bounded by its own limits: a 2 KiB
  // query, 10 alternatives, compact descriptions): a receipt in its place would only fail them.
  if (tool === "resolve_tool" && single) return single;
  const bytes = jsonByteLength(reply);
  const store = await ctx.hub.resultStore();
  if (!store) {
    ctx.hub.log.warn(`the ${tool} answer (${bytes} bytes) is over the response budget and the vault is unavailable; returning it in full`);
    return reply;
  }
  const name = advertisedName(tool, ctx.view.naming);
  try {
    const meta = await store.put({ server: "mcphub", tool, namespaced: `mcphub__${tool}`, agent: ctx.view.owner, kind: "reply" }, { pieces: jsonPieces(reply), totalBytes: bytes });
    return buildReceipt(
      {
        callId: meta.callId,
        server: "mcphub",
        tool,
        namespaced: `mcphub__${tool}`,
        downstream: name,
        originalBytes: bytes,
        budgetBytes: budget,
        getResultName: advertisedName("get_result", ctx.view.naming),
        view: meta.view,
      },
      reply,
    );
  } catch (err) {
    // The shared store is down (team mode): an error that says so, not a flood (call/finalize.ts).
    if (err instanceof StoreUnavailableError) {
      ctx.hub.log.warn(`storing the ${tool} answer failed (${err.message}); answering with an error instead of the ${bytes} bytes`);
      return unreachableStore(name, bytes, budget, err);
    }
    ctx.hub.log.warn(`storing the ${tool} answer failed (${err instanceof Error ? err.message : String(err)}); returning it in full`);
    return reply;
  }
}

/** A management document sent once (compact JSON text, no structuredContent); undefined for other answers. */
function sentOnce(reply: CallToolResult): CallToolResult | undefined {
  const doc = reply.structuredContent;
  const only = reply.content?.length === 1 ? reply.content[0] : undefined;
  if (!doc || only?.type !== "text") return undefined;
  return { content: [{ type: "text", text: JSON.stringify(doc) }], ...(reply.isError ? { isError: true } : {}) };
}

/**
 * list_servers under a small budget, in steps until it fits: the per-server descriptions, tags and
 * hints and the budget report go first; then each server keeps only its name, state, tool count
 * and a clipped error, and the document only what hosts read (servers, total_tools, expose,
 * catalog_revision); then servers from the end of the list (`servers_truncated` says how many are
 * listed of how many).
 */
function shrinkServerList(single: CallToolResult, budget: number): CallToolResult {
  const text = (single.content?.[0] as { text: string }).text;
  const doc = JSON.parse(text) as Record<string, unknown> & { servers?: Record<string, unknown>[] };
  const once = (d: Record<string, unknown>): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(d) }] });
  const fits = (r: CallToolResult) => jsonByteLength(r) <= budget;
  const all = doc.servers ?? [];
  const { tool_schema_budget: _report, ...lighter } = doc;
  const first = once({ ...lighter, servers: all.map(({ description: _d, tags: _t, use_when: _u, ...rest }) => rest) });
  if (fits(first)) return first;
  const servers = all.map((v) => ({
    name: v.name,
    state: v.state,
    tools: v.tools,
    ...(typeof v.error === "string" ? { error: clipUtf8(v.error, 80) } : {}),
  }));
  const core = { contract_version: doc.contract_version, catalog_revision: doc.catalog_revision, total_tools: doc.total_tools, expose: doc.expose };
  for (let keep = servers.length; keep >= 0; keep--) {
    const candidate = once({ ...core, servers: servers.slice(0, keep), ...(keep < servers.length ? { servers_truncated: { listed: keep, total: servers.length } } : {}) });
    if (keep === 0 || fits(candidate)) return candidate;
  }
  return first;
}

function clipError(reply: CallToolResult, budget: number): CallToolResult {
  const limit = budget === 0 ? MAX_ERROR_BYTES : Math.min(MAX_ERROR_BYTES, Math.max(64, budget - 128));
  const text = (reply.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
  return Buffer.byteLength(text, "utf8") <= limit ? reply : badRequest(clipUtf8(text, limit));
}
