// The one result path. Mounted calls, call_tool and detached calls all come through invokeTool():
// check the guardrails (the agent's policy, the tool's pinned definition), validate arguments, ask
// the user when the policy says so, call the downstream through the supervisor, record telemetry,
// and finalise the result (pass it through when it fits the response budget, else store it and
// return a receipt). Nothing here talks to a transport directly.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CatalogEntry, JsonObject } from "../catalog/types.js";
import { NeedsAuthError, OutcomeUnknownError, NotConnectedError } from "../downstream/types.js";
import type { CallRecord } from "../telemetry/index.js";
import { jsonByteLength, jsonPieces } from "../util/json-stream.js";
import { estimateTokens } from "../util/units.js";
import type { StoredMeta, StreamedPayload } from "../vault/results.js";
import { errorText } from "../util/errors.js";
import type { Hub } from "./hub.js";
import type { Caller } from "./passthrough/router.js";
import type { Gate } from "./guard/guard.js";
import { advertisedName } from "./management.js";
import { buildReceipt, jsonBytes, receiptBudget } from "./receipts.js";
import { checkArguments } from "./validate-args.js";
import type { AgentView } from "./view.js";

export type Via = CallRecord["via"];

export interface InvokeOptions {
  via: Via;
  /** Requested per-call timeout; capped by call_timeout. */
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
  /** The upstream session the call is made for: server→client requests it causes go there. */
  caller?: Caller;
  /** The user already confirmed this call (a detached call confirms before it starts). */
  confirmed?: boolean;
}

/** A call that never reached the downstream; `document` tells the model why and what to do. */
export class NotSentError extends Error {
  constructor(
    readonly document: JsonObject,
    message: string,
  ) {
    super(message);
  }
}

/** A call that never reached the downstream because its arguments were wrong. */
export class InvalidArgumentsError extends NotSentError {
  constructor(document: JsonObject) {
    super(document, "invalid arguments");
  }
}

/** A call the guardrails refused (policy, pinned definition) or the user declined. */
export class RefusedError extends NotSentError {
  constructor(document: JsonObject) {
    super(document, "refused");
  }
}

/**
 * The guardrails' check before a call: this agent's policy and the tool's pinned definition. A
 * refusal is recorded (telemetry counts it as a failed call with the reason as its class) and
 * thrown as a RefusedError.
 */
export function guardCheck(hub: Hub, view: AgentView, entry: CatalogEntry, via: Via, argsBytes: number): Extract<Gate, { ok: true }> {
  const gate = hub.guard.check(view.agent, entry, via);
  if (gate.ok) return gate;
  record(hub, view, entry, via, 0, false, argsBytes, 0, 0, gate.refusal.reason);
  throw new RefusedError(gate.refusal.document);
}

/** Asks the user when the policy says so; a refusal or decline is recorded and thrown. */
export async function guardConfirm(
  hub: Hub,
  view: AgentView,
  entry: CatalogEntry,
  gate: Extract<Gate, { ok: true }>,
  args: Record<string, unknown>,
  opts: { via: Via; caller?: Caller | undefined; signal?: AbortSignal | undefined },
): Promise<void> {
  const refusal = await hub.guard.confirm(view.agent, entry, gate, args, opts);
  if (!refusal) return;
  record(hub, view, entry, opts.via, 0, false, jsonBytes(args), 0, 0, refusal.reason);
  throw new RefusedError(refusal.document);
}

export function effectiveTimeout(hub: Hub, requested?: number): number {
  const cap = hub.config.call_timeout;
  return requested !== undefined && requested > 0 && requested < cap ? requested : cap;
}

/**
 * The limits of one call: a `timeout_ms` is a hard cap (never above call_timeout); without one the
 * call may run as long as it keeps answering or reporting progress within call_idle_timeout, up
 * to call_timeout in all.
 */
export function callLimits(hub: Hub, requested?: number): { timeoutMs: number } | { idleTimeoutMs: number; maxTotalMs: number } {
  if (requested !== undefined && requested > 0) return { timeoutMs: effectiveTimeout(hub, requested) };
  return { idleTimeoutMs: Math.min(hub.config.call_idle_timeout, hub.config.call_timeout), maxTotalMs: hub.config.call_timeout };
}

/**
 * Calls one catalogue tool for an agent and returns what the caller should see: the downstream
 * result verbatim, a stored receipt, or an invalid_arguments document. Transport failures throw
 * (OutcomeUnknownError / NotConnectedError): the request is never replayed.
 */
export async function invokeTool(
  hub: Hub,
  view: AgentView,
  entry: CatalogEntry,
  rawArgs: unknown,
  opts: InvokeOptions,
): Promise<CallToolResult> {
  const args = (rawArgs ?? {}) as Record<string, unknown>;
  const argsBytes = jsonBytes(args);
  // Refused calls are refused whatever their arguments: the policy and the definition come first.
  const gate = guardCheck(hub, view, entry, opts.via, argsBytes);
  const problems = checkArguments(entry.inputSchema, args);
  if (problems) {
    const doc: JsonObject = {
      status: "invalid_arguments",
      namespaced: entry.namespaced,
      missing: problems.missing,
      invalid: problems.invalid,
      hint: `Nothing was sent. Call ${advertisedName("describe_tool", view.naming)} for ${entry.namespaced} to see the input schema, then retry with the missing fields filled and the invalid ones fixed.`,
    };
    record(hub, view, entry, opts.via, 0, false, argsBytes, 0, 0, "invalid_arguments");
    throw new InvalidArgumentsError(doc);
  }
  // Only a valid call is put to the user; the time they take is not the call's duration.
  if (!opts.confirmed) await guardConfirm(hub, view, entry, gate, args, { via: opts.via, caller: opts.caller, signal: opts.signal });
  const started = performance.now();
  let result: CallToolResult;
  try {
    result = await hub.passthrough.run(
      opts.caller,
      entry.server,
      (route) =>
        hub.supervisor.callTool(entry.server, entry.wire, args, {
          ...route,
          ...callLimits(hub, opts.timeoutMs),
          ...(opts.signal ? { signal: opts.signal } : {}),
          ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
        }),
      opts.signal,
    );
  } catch (err) {
    record(hub, view, entry, opts.via, performance.now() - started, false, argsBytes, 0, 0, errorClass(err));
    throw err;
  }
  const duration = performance.now() - started;
  return finalizeResult(hub, view, entry, result, { via: opts.via, duration, argsBytes });
}

/** Budget → receipt, plus telemetry. Fails open: a store failure returns the full result. */
export async function finalizeResult(
  hub: Hub,
  view: AgentView,
  entry: CatalogEntry,
  result: CallToolResult,
  info: { via: Via; duration: number; argsBytes: number },
): Promise<CallToolResult> {
  // Measured and (when over budget) stored piece by piece: a huge result is never serialised
  // into a second full-size string.
  const bytes = jsonByteLength(result);
  const budget = receiptBudget(hub.config);
  let returned = result;
  let returnedBytes = bytes;
  if (budget !== undefined && bytes > budget) {
    const stored = await store(hub, view, entry, { pieces: jsonPieces(result), totalBytes: bytes }, result.isError === true);
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
          getResultName: advertisedName("get_result", view.naming),
        },
        result,
      );
      returnedBytes = jsonBytes(returned);
    }
  }
  const isError = result.isError === true;
  record(hub, view, entry, info.via, info.duration, !isError, info.argsBytes, bytes, returnedBytes, isError ? "tool_error" : undefined);
  return returned;
}

async function store(hub: Hub, view: AgentView, entry: CatalogEntry, payload: StreamedPayload, isError: boolean): Promise<StoredMeta | undefined> {
  try {
    const results = await hub.resultStore();
    if (!results) {
      hub.log.warn(`result of ${entry.namespaced} exceeds the response budget but the vault is unavailable (${(await hub.vaultProblem()) ?? "not configured"}); returning it in full`);
      return undefined;
    }
    const meta = await results.put(
      { server: entry.server, tool: entry.wire, namespaced: entry.namespaced, agent: view.owner, kind: "result", isError },
      payload,
    );
    return meta;
  } catch (err) {
    hub.log.warn(`storing the result of ${entry.namespaced} failed (${errorText(err)}); returning it in full`);
    return undefined;
  }
}

function record(
  hub: Hub,
  view: AgentView,
  entry: CatalogEntry,
  via: Via,
  duration: number,
  ok: boolean,
  argsBytes: number,
  resultBytes: number,
  returnedBytes: number,
  errorClassName?: string,
): void {
  hub.telemetry.record({
    ts: Date.now(),
    agent: view.owner,
    server: entry.server,
    tool: entry.wire,
    namespaced: entry.namespaced,
    via,
    duration_ms: Math.round(duration * 1000) / 1000,
    ok,
    ...(errorClassName ? { error_class: errorClassName } : {}),
    args_bytes: argsBytes,
    result_bytes: resultBytes,
    // What actually entered the model's context: the arguments plus the returned result or receipt.
    est_tokens: estimateTokens(argsBytes + returnedBytes),
  });
}

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
