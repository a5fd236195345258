// The stages that decide whether a located call may go out, in pipeline order:
//   scope    the agent may address this tool (a name outside its scope is refused here);
//   guard    its policy and the tool's pinned definition allow the call (src/guard);
//   validate the arguments fit the downstream's own input schema;
//   admit    the call may start now (detached-call limits, for detached calls and tasks);
//   confirm  the user agreed, when the policy asks for it (through the calling session).
// Each refusal is an outcome saying that nothing was sent, and why.
import type { JsonObject } from "../../catalog/types.js";
import { advertisedName } from "../management.js";
import { askOnSession } from "../passthrough/index.js";
import { entryOf, type CallContext, type CallOutcome } from "./context.js";
import { checkArguments } from "./validate-args.js";

export function scope(ctx: CallContext): CallOutcome | undefined {
  if (ctx.outside !== undefined) return { kind: "out_of_scope", message: ctx.outside };
  const entry = ctx.found;
  if (!entry) throw new Error("internal error: the scope stage ran without a located tool");
  // Locate looks names up in the agent's view, so this holds; checked here so it always will.
  if (!ctx.view.allows(entry)) return { kind: "out_of_scope", message: `tool ${entry.namespaced} is out of scope for this agent` };
  ctx.entry = entry;
  return undefined;
}

/** Refused calls are refused whatever their arguments: the policy and the definition come first. */
export function guard(ctx: CallContext): CallOutcome | undefined {
  const gate = ctx.ports.guard.check(ctx.view.agent, entryOf(ctx), ctx.via);
  if (!gate.ok) return { kind: "not_sent", reason: gate.refusal.reason, document: gate.refusal.document };
  ctx.gate = gate;
  return undefined;
}

export function validate(ctx: CallContext): CallOutcome | undefined {
  const entry = entryOf(ctx);
  const problems = checkArguments(entry.inputSchema, ctx.args);
  if (!problems) return undefined;
  const describe = advertisedName("describe_tool", ctx.view.naming);
  const document: JsonObject = {
    status: "invalid_arguments",
    namespaced: entry.namespaced,
    missing: problems.missing,
    invalid: problems.invalid,
    hint:
      ctx.mode !== "wait"
        ? `Nothing was started. Call ${describe} for ${entry.namespaced}, then retry with the arguments fixed.`
        : `Nothing was sent. Call ${describe} for ${entry.namespaced} to see the input schema, then retry with the missing fields filled and the invalid ones fixed.`,
  };
  return { kind: "not_sent", reason: "invalid_arguments", document };
}

/** A detached call or a task is refused before the user is asked when it could not start anyway. */
export function admit(ctx: CallContext): CallOutcome | undefined {
  if (ctx.mode === "wait") return undefined;
  const busy = ctx.ports.detached.refusal(ctx.view.owner);
  return busy !== undefined ? { kind: "busy", message: busy } : undefined;
}

/**
 * Only a valid call is put to the user; the time they take is not the call's duration. A call
 * that needs no confirmation (nearly every one) goes on without a promise to wait on.
 */
export function confirm(ctx: CallContext): CallOutcome | undefined | Promise<CallOutcome | undefined> {
  const gate = ctx.gate;
  if (!gate || gate.confirmRule === undefined) return undefined;
  return ask(ctx, gate);
}

async function ask(ctx: CallContext, gate: NonNullable<CallContext["gate"]>): Promise<CallOutcome | undefined> {
  const asked = performance.now();
  const refusal = await ctx.ports.guard.confirm(ctx.view.agent, entryOf(ctx), gate, ctx.args, {
    ask: askOnSession(ctx.caller),
    signal: ctx.signal,
    via: ctx.via,
  });
  ctx.waitMs += performance.now() - asked;
  return refusal ? { kind: "not_sent", reason: refusal.reason, document: refusal.document } : undefined;
}
