// The finalize-and-store stage: a result that fits the response budget passes through verbatim;
// a larger one is stored in the vault and the caller gets a receipt that pages it. Measured and
// stored piece by piece, so a huge result is never serialised into a second full-size string.
// Fails open when the vault is unavailable or a local store fails: the full result is returned.
// Not when the shared store cannot be reached (PostgreSQL down or restarting, team mode): that is
// a passing fault with a retry, and a full result in its place would flood the model with exactly
// what the budget keeps out, so the call answers with an error that says so (unreachableStore).
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CatalogEntry, JsonObject } from "../../catalog/types.js";
import { StoreUnavailableError } from "../../store/index.js";
import { traceChild } from "../../telemetry/index.js";
import { errorText } from "../../util/errors.js";
import { jsonByteLength, jsonPieces } from "../../util/json/stream.js";
import type { StoredMeta, StreamedPayload } from "../../vault/results.js";
import { advertisedName } from "../management.js";
import { buildReceipt, jsonBytes, receiptBudget } from "../receipts.js";
import { entryOf, type CallContext, type CallOutcome } from "./context.js";

export async function finalize(ctx: CallContext): Promise<CallOutcome> {
  const entry = entryOf(ctx);
  const result = ctx.result;
  if (!result) throw new Error("internal error: the finalize stage ran before the call was dispatched");
  const bytes = jsonByteLength(result);
  const budget = receiptBudget(ctx.ports.servers.config());
  let returned = result;
  let returnedBytes = bytes;
  if (budget !== undefined && bytes > budget) {
    const stored = await store(ctx, entry, { pieces: jsonPieces(result), totalBytes: bytes }, result.isError === true);
    if (stored instanceof StoreUnavailableError) {
      const refused = unreachableStore(entry.namespaced, bytes, budget, stored);
      ctx.storeFailed = true;
      ctx.resultBytes = bytes;
      ctx.returnedBytes = jsonBytes(refused);
      return { kind: "result", result: refused };
    }
    if (stored) {
      returned = buildReceipt(
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
      returnedBytes = jsonBytes(returned);
    }
  }
  ctx.resultBytes = bytes;
  ctx.returnedBytes = returnedBytes;
  return { kind: "result", result: returned };
}

/**
 * The answer in place of a result over the budget that the shared store could not take: what
 * happened (the tool ran, its result was N bytes, so many over the budget), why (the store's own
 * message: where, and the cause), and what to do (call again later). Never the result itself.
 */
export function unreachableStore(namespaced: string, bytes: number, budget: number, err: StoreUnavailableError): CallToolResult {
  const doc: JsonObject = {
    error: "result not stored",
    tool: namespaced,
    resultBytes: bytes,
    budgetBytes: budget,
    overBudgetBytes: bytes - budget,
    reason: err.message,
    hint: `${namespaced} ran, but its result is ${bytes - budget} bytes over the response budget and the store that keeps such results for paging cannot be reached, so it is not returned. Call it again later (or with arguments that return less).`,
  };
  return { content: [{ type: "text", text: JSON.stringify(doc) }], structuredContent: doc, isError: true };
}

async function store(ctx: CallContext, entry: CatalogEntry, payload: StreamedPayload, isError: boolean): Promise<StoredMeta | StoreUnavailableError | undefined> {
  const { results, log } = ctx.ports;
  try {
    const store = await results.store();
    if (!store) {
      log.warn(`result of ${entry.namespaced} exceeds the response budget but the vault is unavailable (${(await results.problem()) ?? "not configured"}); returning it in full`);
      return undefined;
    }
    // A span under finalize (the store's operations are counted, not traced, in observe.ts).
    return await traceChild(ctx.trace, "mcphub.store.results.put", () =>
      store.put({ server: entry.server, tool: entry.wire, namespaced: entry.namespaced, agent: ctx.view.owner, kind: "result", isError }, payload),
    );
  } catch (err) {
    if (err instanceof StoreUnavailableError) {
      log.warn(`storing the result of ${entry.namespaced} failed (${err.message}); answering with an error instead of the ${payload.totalBytes} bytes`);
      return err;
    }
    log.warn(`storing the result of ${entry.namespaced} failed (${errorText(err)}); returning it in full`);
    return undefined;
  }
}
