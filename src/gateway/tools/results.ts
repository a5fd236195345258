// mcphub_get_result and mcphub_poll_result: paging through stored results and polling detached
// calls. Scope (and ownership) is checked from the stored metadata before any byte is returned.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { JsonObject } from "../../catalog/types.js";
import { CursorOutOfRangeError, VaultTamperedError } from "../../vault/errors.js";
import { ResultNotFoundError } from "../../vault/results.js";
import { allowedFor, DetachedError } from "../detached.js";
import { errorText } from "../../util/errors.js";
import { releaseMemory } from "../../util/memory.js";
import { jsonBytes, pageDocument, pageSize } from "../receipts.js";
import { badRequest, jsonResult, parseArgs, type ToolContext } from "./context.js";

const getArgs = z.strictObject({
  callId: z.string().trim().min(1, "callId is required"),
  cursor: z.number().int().min(0, "cursor must be zero or positive").optional(),
});

export async function getResult(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = parseArgs(getArgs, raw, '{callId: "<from the receipt>", cursor: 0}');
  const cursor = args.cursor ?? 0;
  const { hub, view } = ctx;
  const store = await hub.resultStore();
  if (!store) return badRequest(`stored results are unavailable: ${(await hub.vaultProblem()) ?? "the vault is not open"}`);
  const unavailable = (): CallToolResult =>
    jsonResult({ status: "unavailable", reason: "The callId is unknown or its stored result has expired.", callId: args.callId });
  let meta;
  try {
    meta = await store.meta(args.callId);
  } catch (err) {
    if (err instanceof VaultTamperedError) return badRequest(`stored result ${args.callId} failed its integrity check and was not returned`);
    return badRequest(`read stored result: ${errorText(err)}`);
  }
  if (!meta) return unavailable();
  if (!allowedFor(view, meta.server, meta.tool, meta.namespaced, meta.agent)) {
    return badRequest(`stored result for ${meta.namespaced} is out of scope for this agent`);
  }
  if (cursor > meta.totalBytes) {
    return jsonResult({
      status: "cursor_out_of_range",
      reason: "cursor is beyond the end of the stored result",
      callId: args.callId,
      cursor,
      totalBytes: meta.totalBytes,
    });
  }
  const budget = hub.config.response_budget;
  let size = pageSize(budget);
  for (;;) {
    let page;
    try {
      page = await store.read(args.callId, cursor, size);
    } catch (err) {
      if (err instanceof VaultTamperedError) return badRequest(`stored result ${args.callId} failed its integrity check and was not returned`);
      // Expired (and pruned) between meta() and read(): the same answer as an unknown id.
      if (err instanceof ResultNotFoundError) return unavailable();
      if (err instanceof CursorOutOfRangeError) {
        return jsonResult({ status: "cursor_out_of_range", reason: "cursor is beyond the end of the stored result", callId: args.callId, cursor, totalBytes: meta.totalBytes });
      }
      return badRequest(`read stored result: ${errorText(err)}`);
    }
    settleAfterPages();
    const doc = pageDocument({ callId: args.callId, data: page.data, cursor, totalBytes: meta.totalBytes, mediaType: meta.mediaType });
    const result = jsonResult(doc, { compactText: true });
    // The page envelope itself must fit the budget; shrink the page rather than flood.
    if (budget === 0 || size <= 1 || jsonBytes(result) <= budget) return result;
    size = Math.max(1, Math.floor(size * 0.8));
  }
}

/**
 * Paging a 200 MB result is 25,600 requests whose short-lived garbage V8 would otherwise let
 * grow the old generation by tens of MB before collecting it; a full collection every few
 * thousand pages (milliseconds, against seconds of round trips) keeps the gateway's memory flat.
 */
const PAGES_PER_COLLECTION = 2048;
let pagesServed = 0;

function settleAfterPages(): void {
  pagesServed++;
  if (pagesServed % PAGES_PER_COLLECTION === 0) releaseMemory();
}

const pollArgs = z.strictObject({ callId: z.string().trim().min(1, "callId is required") });

export async function pollResult(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = parseArgs(pollArgs, raw, '{callId: "<from the accepted receipt>"}');
  try {
    const answer = await ctx.hub.detached.poll(ctx.view, args.callId);
    if (answer.result) return answer.result;
    return jsonResult(answer.doc as JsonObject);
  } catch (err) {
    if (err instanceof DetachedError) return badRequest(err.message);
    return badRequest(`poll ${args.callId}: ${errorText(err)}`);
  }
}
