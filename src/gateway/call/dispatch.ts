// The dispatch stage: the call goes out. A waiting call is sent to its downstream on the caller's
// route (the pass-through picks the connection, the supervisor sends it) under the call's limits;
// a detached call or a task is handed to the detached-call registry, which answers at once with a
// callId (a task) and runs the rest of the pipeline (dispatch, finalize, record) in the
// background. A waiting call of a tool that must run as a task downstream runs in the registry
// too, and is waited for: within the call's wait it answers as any call does, past it with the
// accepted document, the call going on in the background (never cancelled because the caller
// could not wait). Transport failures become a `failed` outcome: the request is never replayed.
import { NeedsAuthError, NotConnectedError, OutcomeUnknownError } from "../../downstream/types.js";
import type { Config } from "../../config/schema.js";
import { errorText } from "../../util/errors.js";
import { entryOf, type CallContext, type CallLimits, type CallOutcome } from "./context.js";

export async function dispatch(ctx: CallContext): Promise<CallOutcome | undefined> {
  const entry = entryOf(ctx);
  if (ctx.mode !== "wait") {
    try {
      const started = await ctx.ports.detached.start(ctx);
      if ("busy" in started) return { kind: "busy", message: started.busy };
      return ctx.mode === "task" ? { kind: "task", task: started.task, document: started.accepted } : { kind: "accepted", document: started.accepted };
    } catch (err) {
      return { kind: "failed", error: err };
    }
  }
  if (!ctx.background && mustRunAsTask(entry.definition.execution?.taskSupport)) {
    const config = ctx.ports.servers.config();
    const hard = ctx.timeoutMs !== undefined && ctx.timeoutMs > 0;
    const waitMs = hard ? effectiveTimeout(config, ctx.timeoutMs) : Math.min(config.call_idle_timeout, config.call_timeout);
    const ran = await ctx.ports.detached.runAndWait(ctx, waitMs, hard);
    // No room in the registry: the call is simply waited for here, as any other.
    if (!("busy" in ran)) {
      ctx.backgrounded = true;
      return "outcome" in ran ? ran.outcome : { kind: "accepted", document: ran.accepted };
    }
  }
  const started = performance.now();
  try {
    const result = await ctx.ports.send(ctx.caller, entry, ctx.args, {
      limits: callLimits(ctx.ports.servers.config(), ctx.timeoutMs),
      signal: ctx.signal,
      onProgress: ctx.onProgress,
      ...(ctx.background ? { task: ctx.background.task, onTask: (t) => ctx.background?.onTask(t) } : {}),
      trace: ctx.trace,
    });
    ctx.durationMs = performance.now() - started;
    ctx.result = result;
    return undefined;
  } catch (err) {
    ctx.durationMs = performance.now() - started;
    return { kind: "failed", error: err };
  }
}

/** Whether the downstream must run the tool as a task (it says so; a plain call would be refused). */
export function mustRunAsTask(taskSupport: unknown): boolean {
  return taskSupport === "required";
}

/** A requested timeout, capped by call_timeout (the cap itself when none was asked for). */
export function effectiveTimeout(config: Pick<Config, "call_timeout">, requested?: number): number {
  const cap = config.call_timeout;
  return requested !== undefined && requested > 0 && requested < cap ? requested : cap;
}

/**
 * The limits of one call: a `timeout_ms` is a hard cap (never above call_timeout); without one the
 * call may run as long as it keeps answering or reporting progress within call_idle_timeout, up
 * to call_timeout in all.
 */
export function callLimits(config: Pick<Config, "call_timeout" | "call_idle_timeout">, requested?: number): CallLimits {
  if (requested !== undefined && requested > 0) return { timeoutMs: effectiveTimeout(config, requested) };
  return { idleTimeoutMs: Math.min(config.call_idle_timeout, config.call_timeout), maxTotalMs: config.call_timeout };
}

/** The telemetry class of a failed call. */
export function errorClass(err: unknown): string {
  if (err instanceof OutcomeUnknownError) {
    return err.reason === "timeout" ? "timeout" : err.reason === "cancelled" ? "cancelled" : "outcome_unknown";
  }
  if (err instanceof NotConnectedError) return "not_connected";
  if (err instanceof NeedsAuthError) return "needs_auth";
  return "error";
}

/** The message for a failed call: the supervisor's own (already names the tool), else prefixed. */
export function downstreamFailure(namespaced: string, err: unknown): string {
  if (err instanceof OutcomeUnknownError || err instanceof NotConnectedError) return err.message;
  return `call ${namespaced}: ${errorText(err)}`;
}
