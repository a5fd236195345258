// The finalize-and-store stage: a result that fits the response budget passes through verbatim;
// a larger one is stored in the vault and the caller gets a receipt that pages it. Measured and
// stored piece by piece, so a huge result is never serialised into a second full-size string.
// Fails open: when the vault is unavailable or the store fails, the full result is returned.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CatalogEntry } from "../../catalog/types.js";
import { errorText } from "../../util/errors.js";
import { jsonByteLength, jsonPieces } from "../../util/json/stream.js";
import type { StoredMeta, StreamedPayload } from "../../vault/results.js";
import { advertisedName } from "../management.js";
import { buildReceipt, jsonBytes, receiptBudget } from "../receipts.js";
import { entryOf, type CallContext, type CallOutcome } from "./context.js";

export function finalize(ctx: CallContext): CallOutcome | Promise<CallOutcome> {
  const result = ctx.result;
  if (!result) throw new Error("internal error: the finalize stage ran before the call was dispatched");
  const bytes = jsonByteLength(result);
  const budget = receiptBudget(ctx.ports.servers.config());
  ctx.resultBytes = bytes;
  // Within the budget (nearly every result): answered as it is, without a promise to wait on.
  if (budget === undefined || bytes <= budget) {
    ctx.returnedBytes = bytes;
    return { kind: "result", result };
  }
  return storeAndReceipt(ctx, result, bytes, budget);
}

/** Over the budget: stored in the vault and answered by a receipt (in full when storing fails). */
async function storeAndReceipt(ctx: CallContext, result: CallToolResult, bytes: number, budget: number): Promise<CallOutcome> {
  const entry = entryOf(ctx);
  const stored = await store(ctx, entry, { pieces: jsonPieces(result), totalBytes: bytes }, result.isError === true);
  if (!stored) {
    ctx.returnedBytes = bytes;
    return { kind: "result", result };
  }
  const receipt = buildReceipt(
    {
      callId: stored.callId,
      view: stored.view,
      server: entry.server,
      tool: entry.tool,
      namespaced: entry.namespaced,
      downstream: entry.wire,
      originalBytes: bytes,
      budgetBytes: budget,
      getResultName: advertisedName("get_result", ctx.view.naming),
    },
    result,
  );
  ctx.returnedBytes = jsonBytes(receipt);
  return { kind: "result", result: receipt };
}

async function store(ctx: CallContext, entry: CatalogEntry, payload: StreamedPayload, isError: boolean): Promise<StoredMeta | undefined> {
  const { results, log } = ctx.ports;
  try {
    const store = await results.store();
    if (!store) {
      log.warn(`result of ${entry.namespaced} exceeds the response budget but the vault is unavailable (${(await results.problem()) ?? "not configured"}); returning it in full`);
      return undefined;
    }
    return await store.put({ server: entry.server, tool: entry.wire, namespaced: entry.namespaced, agent: ctx.view.owner, kind: "result", isError }, payload);
  } catch (err) {
    log.warn(`storing the result of ${entry.namespaced} failed (${errorText(err)}); returning it in full`);
    return undefined;
  }
}
