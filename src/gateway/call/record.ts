// The record stage, always last: the one recorder of a finished call. It gives back the call's
// place among the calls in flight (limit stage), writes one telemetry record for every call that
// reached the guard, whatever its outcome (refused, invalid, limited, failed, answered), counts
// the call in the metrics, and marks the outcome on the request's span. A call that named no
// tool in scope is counted without a server or tool and leaves no record; a detached call or task
// that was only accepted, or a call the background registry runs, leaves neither (its background
// run records it when it ends). Recording is
// best effort: it never fails a call.
import type { CallRecord } from "../../telemetry/index.js";
import { estimateTokens } from "../../util/units.js";
import type { CallContext, CallOutcome } from "./context.js";
import { errorClass } from "./dispatch.js";

export function record(ctx: CallContext, outcome: CallOutcome): void {
  const lease = ctx.lease;
  if (lease) {
    ctx.lease = undefined;
    lease.release();
  }
  // A call run by the background registry is counted and recorded by its background run.
  if (outcome.kind === "accepted" || ctx.backgrounded) return;
  const cls = outcomeClass(ctx, outcome);
  const entry = ctx.entry;
  const { metrics } = ctx.ports;
  if (metrics.enabled) {
    const server = entry?.server ?? "";
    const sent = ctx.durationMs > 0;
    metrics.call({
      agent: ctx.view.owner,
      server,
      tool: entry?.namespaced ?? "",
      outcome: cls ?? "ok",
      gatewaySeconds: Math.max(0, performance.now() - ctx.started - ctx.durationMs - ctx.waitMs) / 1000,
      downstreamSeconds: sent ? ctx.durationMs / 1000 : undefined,
    });
    if (outcome.kind === "limited") metrics.limited(outcome.refusal.kind, outcome.refusal.agent, outcome.refusal.server);
  }
  if (ctx.trace) {
    ctx.trace.annotate({
      attributes: { "mcphub.outcome": cls ?? "ok", ...(entry ? { "mcphub.server": entry.server, "mcphub.tool": entry.namespaced } : {}) },
      error: cls === undefined || outcome.kind === "not_sent" ? undefined : cls,
    });
  }
  const rec = recordOf(ctx, outcome, cls);
  if (rec) {
    ctx.ports.telemetry.record(rec);
    // The access line (MCPHUB_LOG_LEVEL=info): names, the outcome and the time only, never a value.
    ctx.ports.log.info(`call ${rec.namespaced}: ${cls ?? "ok"} in ${rec.duration_ms} ms`);
  }
}

/** The outcome as a class: undefined for success, else the telemetry error class or the outcome's kind. */
function outcomeClass(ctx: CallContext, outcome: CallOutcome): string | undefined {
  switch (outcome.kind) {
    case "result":
      if (ctx.storeFailed) return "store_unavailable";
      return ctx.result?.isError === true ? "tool_error" : undefined;
    case "not_sent":
      return outcome.reason;
    case "failed":
      return errorClass(outcome.error);
    case "limited":
      return "limited";
    default:
      return outcome.kind;
  }
}

function recordOf(ctx: CallContext, outcome: CallOutcome, cls: string | undefined): CallRecord | undefined {
  const entry = ctx.entry;
  if (!entry) return undefined;
  switch (outcome.kind) {
    case "result":
    case "not_sent":
    case "limited":
      break;
    case "failed":
      // A detached call or task whose start failed never ran: there is no call to record.
      if (ctx.mode !== "wait") return undefined;
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
    ok: cls === undefined,
    ...(cls ? { error_class: cls } : {}),
    args_bytes: ctx.argsBytes,
    result_bytes: ctx.resultBytes,
    // What actually entered the model's context: the arguments plus the returned result or receipt.
    est_tokens: estimateTokens(ctx.argsBytes + ctx.returnedBytes),
  };
}
