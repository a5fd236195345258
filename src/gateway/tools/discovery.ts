// The discovery tools: search_tools, resolve_tool and describe_tool. Ranking and the exact
// response documents live in src/catalog/search; this file binds them to the agent's scope and
// catalogue revision, and resolves tool references for describe.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { markListingPending, markResolvePending } from "../../catalog/search/pending.js";
import { buildResolveResponse, buildSearchResponse, MAX_QUERIES } from "../../catalog/search/responses.js";
import type { JsonObject } from "../../catalog/types.js";
import type { Presenter } from "../../catalog/search/compact.js";
import { locateTool } from "../call/index.js";
import { BadRequest, jsonResult, OutOfScope, parseArgs, type ToolContext } from "./context.js";
import { rankerFor } from "./ranking.js";

const searchArgs = z.strictObject({
  query: z.string().optional(),
  // More than 10 are not refused: the first 10 are searched and the answer says so.
  queries: z.array(z.string()).optional(),
  max_hits: z.number().int().optional(),
});

export async function searchTools(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = parseArgs(searchArgs, raw, '{query: "what you want to do"} or {queries: ["...", "..."]}, optionally max_hits (1-100)');
  const { view, hub } = ctx;
  const pending = await hub.awaitDiscovery(view, ctx.signal);
  const { ranker, note } = await rankerFor(ctx, [...(args.query !== undefined ? [args.query] : []), ...(args.queries ?? []).slice(0, MAX_QUERIES)]);
  const doc = buildSearchResponse(ranker, args, {
    revision: view.revision(),
    filter: (e) => view.allows(e),
    all: view.entries(),
    capabilities: view.capabilities,
    present: presenter(ctx),
  });
  return jsonResult(markListingPending({ ...doc, ...note }, pending));
}

// A missing query is answered like an empty one (no_match, query_too_generic), not refused: the
// answer then still has the contract's shape and a hint saying what to send.
const resolveArgs = z.strictObject({ query: z.string().default(""), max_hits: z.number().int().optional() });

export async function resolveTool(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = parseArgs(resolveArgs, raw, '{query: "the goal in plain words"}, optionally max_hits (1-10)');
  const { view, hub } = ctx;
  const pending = await hub.awaitDiscovery(view, ctx.signal);
  const { ranker, note } = await rankerFor(ctx, [args.query]);
  const doc = buildResolveResponse(ranker, args, {
    revision: view.revision(),
    filter: (e) => view.allows(e),
    capabilities: view.capabilities,
    present: presenter(ctx),
  });
  return jsonResult(markResolvePending(markRefusedTop({ ...doc, ...note }), pending));
}

/** Each match with its effect class, and why this agent cannot call it when it cannot. */
function presenter(ctx: ToolContext): Presenter {
  const { guard } = ctx.hub;
  return (entry) => ({ entry: guard.present(entry), fields: guard.fields(ctx.view.agent, entry) });
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

const describeArgs = z.strictObject({ tool: z.string(), server: z.string().optional() });

export async function describeTool(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = parseArgs(describeArgs, raw, '{tool: "server__tool"} or {server: "name", tool: "tool"}');
  const found = await locateTool(ctx.hub.calls.servers, ctx.view, args.server, args.tool, { signal: ctx.signal });
  if ("doc" in found) return jsonResult(found.doc);
  if ("bad" in found) throw new BadRequest(found.bad);
  if ("outside" in found) throw new OutOfScope(found.outside);
  const e = ctx.hub.guard.present(found.entry);
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
  };
  return jsonResult(doc);
}

function downstreamTaskSupport(v: unknown): JsonObject {
  return v === "required" || v === "optional" ? { downstream_task_support: v } : {};
}

export { BadRequest };
