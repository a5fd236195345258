// The record stage, always last: one telemetry record for every call that reached the guard,
// whatever its outcome (refused, invalid, failed, answered). A call that named no tool in scope,
// or a detached call or task that was only accepted (its background run records it when it
// ends), leaves no record. Telemetry is best effort: recording never fails a call.
import type { CallRecord } from "../../telemetry/index.js";
import { estimateTokens } from "../../util/units.js";
import type { CallContext, CallOutcome } from "./context.js";
import { errorClass } from "./dispatch.js";

export function record(ctx: CallContext, outcome: CallOutcome): void {
  const rec = recordOf(ctx, outcome);
  if (rec) ctx.ports.telemetry.record(rec);
}

function recordOf(ctx: CallContext, outcome: CallOutcome): CallRecord | undefined {
  const entry = ctx.entry;
  // A call run by the background registry is recorded by its background run.
  if (!entry || ctx.backgrounded) return undefined;
  let ok = false;
  let cls: string | undefined;
  switch (outcome.kind) {
    case "result":
      ok = ctx.result?.isError !== true;
      if (!ok) cls = "tool_error";
      break;
    case "not_sent":
      cls = outcome.reason;
      break;
    case "failed":
      // A detached call or task whose start failed never ran: there is no call to record.
      if (ctx.mode !== "wait") return undefined;
      cls = errorClass(outcome.error);
      break;
    default:
      return undefined;
  }
  return {
    ts: Date.now(),
    agent: ctx.view.owner,
    server: entry.server,
    tool: entry.wire,
    namespaced: entry.namespaced,
    via: ctx.via,
    duration_ms: Math.round(ctx.durationMs * 1000) / 1000,
    ok,
    ...(cls ? { error_class: cls } : {}),
    args_bytes: ctx.argsBytes,
    result_bytes: ctx.resultBytes,
    // What actually entered the model's context: the arguments plus the returned result or receipt.
    est_tokens: estimateTokens(ctx.argsBytes + ctx.returnedBytes),
  };
}
