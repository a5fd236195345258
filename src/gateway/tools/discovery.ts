// The discovery tools: search_tools, resolve_tool and describe_tool. Ranking and the exact
// response documents live in src/catalog/search; this file binds them to the agent's scope, pins
// and catalogue revision, marks what cannot be served now (availability.ts), and resolves tool
// references for describe (the same name forms as call_tool, locate.ts).
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { markListingPending, markResolvePending } from "../../catalog/search/pending.js";
import { buildResolveResponse, buildSearchResponse, CAPABILITIES_MAX_BYTES, MAX_QUERIES, type ResponseContext } from "../../catalog/search/responses.js";
import type { JsonObject } from "../../catalog/types.js";
import type { Presenter } from "../../catalog/search/compact.js";
import { locateTool } from "../call/index.js";
import { BadRequest, jsonResult, normaliseToolName, OutOfScope, parseArgs, type ToolContext } from "./context.js";
import { availabilityOf } from "./availability.js";
import { rankerFor } from "./ranking.js";

const searchArgs = z.strictObject({
  query: z.string().optional(),
  // More than 10 are not refused: the first 10 are searched and the answer says so.
  queries: z.array(z.string()).optional(),
  max_hits: z.number().int().optional(),
});

/** What both search and resolve answer with: scope, pins, capability hints, presentation, availability. */
function responseContext(ctx: ToolContext): Omit<ResponseContext, "revision"> {
  const { view, hub } = ctx;
  const availability = availabilityOf(hub, view);
  return {
    filter: (e) => view.allows(e),
    prefer: (e) => view.isPinned(e),
    capabilities: view.capabilityHints(CAPABILITIES_MAX_BYTES),
    present: presenter(ctx),
    unavailable: availability.unavailable,
    ...(availability.offline ? { offline: availability.offline } : {}),
  };
}

export async function searchTools(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = parseArgs(searchArgs, raw, '{query: "what you want to do"} or {queries: ["...", "..."]}, optionally max_hits (1-100)');
  const { view, hub } = ctx;
  const pending = await hub.awaitDiscovery(view, ctx.signal);
  const { ranker, note } = await rankerFor(ctx, [...(args.query !== undefined ? [args.query] : []), ...(args.queries ?? []).slice(0, MAX_QUERIES)]);
  const doc = buildSearchResponse(ranker, args, { revision: view.revision(), all: view.entries(), ...responseContext(ctx) });
  return jsonResult(markListingPending({ ...doc, ...note }, pending));
}

const RESOLVE_USAGE = '{query: "the goal in plain words"}, optionally max_hits (1-10)';
const resolveArgs = z.strictObject({ query: z.string(), max_hits: z.number().int().optional() });

export async function resolveTool(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  // A missing query is the caller's mistake, not a request that matched nothing: an
  // invalid-params error saying what to send (an empty query still gets a contract answer).
  if (raw === undefined || raw === null || (typeof raw === "object" && !Array.isArray(raw) && !("query" in raw))) {
    throw new BadRequest(`invalid params: \`query\` is required. Send ${RESOLVE_USAGE}.`);
  }
  const args = parseArgs(resolveArgs, raw, RESOLVE_USAGE);
  const { view, hub } = ctx;
  const pending = await hub.awaitDiscovery(view, ctx.signal);
  const { ranker, note } = await rankerFor(ctx, [args.query]);
  const doc = buildResolveResponse(ranker, args, { revision: view.revision(), ...responseContext(ctx) });
  return jsonResult(markResolvePending(markRefusedTop({ ...doc, ...note }), pending));
}

/**
 * Each match with its effect class when it is not read-only (`write`, `destructive`: the
 * management tools' descriptions say that no effect means read-only; most matches read, and the
 * word would cost each of them 15 bytes), and why this agent cannot call it when it cannot.
 */
function presenter(ctx: ToolContext): Presenter {
  const { guard } = ctx.hub;
  return (entry) => {
    const fields = guard.fields(ctx.view.agent, entry);
    if (fields["effect"] === "read") delete fields["effect"];
    return { entry: guard.present(entry), fields };
  };
}

/**
 * A recommendation this agent cannot call (refused by its policy, or a definition awaiting an
 * operator) is never `confident`: running it would only be refused. The hint says to stop
 * looking for a way around it rather than to search on.
 */
function markRefusedTop(doc: JsonObject): JsonObject {
  const rec = doc.recommendation;
  if (rec === null || typeof rec !== "object" || Array.isArray(rec)) return doc;
  const why = rec.refused ?? rec.definition;
  if (typeof why !== "string") return doc;
  const reasons = Array.isArray(doc.reason_codes) ? doc.reason_codes.filter((r) => r !== "strong_coverage_and_margin" && r !== "clear_margin") : [];
  return {
    ...doc,
    status: "ambiguous",
    confidence: "low",
    reason_codes: [...reasons, "tool_refused"],
    ambiguous: true,
    hint: `the best match, ${String(rec.namespaced)}, cannot be called by this agent (${why}); do not run it, and do not look for another tool to do the same thing — tell the user`,
  };
}

const DESCRIBE_USAGE = '{tool: "server__tool"}, {server: "name", tool: "tool"}, or a tool name unique in the catalogue';
const describeArgs = z.strictObject({ tool: z.string(), server: z.string().optional() });

export async function describeTool(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = parseArgs(describeArgs, normaliseToolName(raw, Object.keys(describeArgs.shape), DESCRIBE_USAGE), DESCRIBE_USAGE);
  const found = await locateTool(ctx.hub.calls.servers, ctx.view, args.server, args.tool, { signal: ctx.signal });
  if ("doc" in found) return jsonResult(found.doc);
  if ("bad" in found) throw new BadRequest(found.bad);
  if ("outside" in found) throw new OutOfScope(found.outside);
  const e = ctx.hub.guard.present(found.entry);
  const down = availabilityOf(ctx.hub, ctx.view).unavailable(e.server);
  const doc: JsonObject = {
    contract_version: 1,
    catalog_revision: ctx.view.revision(),
    server: e.server,
    tool: e.tool,
    downstream: e.wire,
    namespaced: e.namespaced,
    ...(e.title !== undefined ? { title: e.title } : {}),
    description: e.description,
    input_schema: e.inputSchema,
    ...(e.outputSchema ? { output_schema: e.outputSchema } : {}),
    ...(e.annotations ? { annotations: e.annotations } : {}),
    // As mounted: the gateway takes a plain call or a task for every tool. What the downstream
    // itself says matters to a caller that cannot wait: a "required" tool runs as a task, and a
    // plain call of it may come back as an accepted callId to poll.
    execution: { taskSupport: "optional" },
    ...downstreamTaskSupport(found.entry.definition.execution?.taskSupport),
    ...(e.useWhen.length ? { use_when: e.useWhen } : {}),
    ...(e.toolUseWhen.length ? { tool_use_when: e.toolUseWhen } : {}),
    ...ctx.hub.guard.describe(ctx.view.agent, found.entry),
    // Known from the cache while its server cannot serve: say so, and what fixes it.
    ...(down ? { server_state: { state: down.state, ...(down.reason ? { reason: down.reason } : {}), ...(down.fix ? { fix: down.fix } : {}) } } : {}),
  };
  return jsonResult(doc);
}

function downstreamTaskSupport(v: unknown): JsonObject {
  return v === "required" || v === "optional" ? { downstream_task_support: v } : {};
}

export { BadRequest };
