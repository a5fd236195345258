// The finalize-and-store stage: a result that fits the response budget passes through verbatim;
// a larger one is stored in the vault and the caller gets a receipt that pages it. Measured and
// stored piece by piece, so a huge result is never serialised into a second full-size string.
// Fails open: when the vault is unavailable or the store fails, the full result is returned.
import type { CatalogEntry } from "../../catalog/types.js";
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

async function store(ctx: CallContext, entry: CatalogEntry, payload: StreamedPayload, isError: boolean): Promise<StoredMeta | undefined> {
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
    log.warn(`storing the result of ${entry.namespaced} failed (${errorText(err)}); returning it in full`);
    return undefined;
  }
}
