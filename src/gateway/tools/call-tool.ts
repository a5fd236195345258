// mcphub_call_tool: parse the request, run it through the call pipeline (../call/pipeline.ts:
// locate by server__tool or server + tool, scope, guard, validate, confirm, dispatch, finalize,
// record) and render its outcome as a management-tool answer. `detach: true` starts the call in
// the background and answers with its callId. A task-augmented call_tool starts the same
// background call and answers with its task (startCallToolTask, renderTask).
import { ErrorCode, McpError, type CallToolResult, type CreateTaskResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { errorText } from "../../util/errors.js";
import { formatDuration } from "../../util/units.js";
import { callContext, downstreamFailure, LIMITED_ERROR_CODE, limitErrorData, runCall, type CallOutcome } from "../call/index.js";
import { WireError } from "../passthrough/index.js";
import { BadRequest, badRequest, jsonResult, normaliseToolName, parseArgs, type ToolContext } from "./context.js";

const callArgs = z.strictObject({
  tool: z.string(),
  server: z.string().optional(),
  arguments: z.record(z.string(), z.unknown()).nullable().optional(),
  detach: z.boolean().optional(),
  // Range and integrality are checked by hand (timeoutProblem): the upper bound is the config's.
  timeout_ms: z.number().optional(),
});

const USAGE = '{tool: "server__tool", arguments: {...}} (optionally detach: true, timeout_ms)';

type CallArgs = z.output<typeof callArgs>;
const CALL_KEYS = new Set(Object.keys(callArgs.shape));

/**
 * The well-formed call checked by hand, undefined for anything else: this is every lazy-mode
 * call's path, and zod's parse (which also copies `arguments`) showed in the profile. Never more
 * lenient than `callArgs`: what it refuses (the `name` alias included) goes the long way, which
 * accepts it or says what is wrong.
 */
function quickCallArgs(raw: unknown): CallArgs | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  for (const k in r) if (!CALL_KEYS.has(k)) return undefined;
  const a = r.arguments;
  if (typeof r.tool !== "string" || (r.server !== undefined && typeof r.server !== "string")) return undefined;
  if (a !== undefined && a !== null && (typeof a !== "object" || Array.isArray(a))) return undefined;
  if (r.detach !== undefined && typeof r.detach !== "boolean") return undefined;
  if (r.timeout_ms !== undefined && (!Number.isSafeInteger(r.timeout_ms) || (r.timeout_ms as number) < 1)) return undefined;
  return r as CallArgs;
}

/** Why a timeout_ms cannot be used, naming the range, or undefined. */
function timeoutProblem(ms: number | undefined, callTimeout: number): string | undefined {
  if (ms === undefined || (Number.isSafeInteger(ms) && ms >= 1)) return undefined;
  return `timeout_ms ${ms} is out of range: give a whole number of milliseconds from 1 to ${callTimeout} (call_timeout, ${formatDuration(callTimeout)}; a larger one is capped to it), or leave it out for the default limits. Send ${USAGE}.`;
}

export async function callTool(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = quickCallArgs(raw) ?? parseArgs(callArgs, normaliseToolName(raw, Object.keys(callArgs.shape), USAGE), USAGE);
  const badTimeout = timeoutProblem(args.timeout_ms, ctx.hub.config.call_timeout);
  if (badTimeout) return badRequest(badTimeout);
  const call = callContext({
    ports: ctx.hub.calls,
    view: ctx.view,
    target: { kind: "reference", server: args.server, tool: args.tool },
    args: args.arguments ?? {},
    via: args.detach ? "detach" : "call_tool",
    mode: args.detach ? "detach" : "wait",
    timeoutMs: args.timeout_ms,
    signal: ctx.signal,
    caller: ctx.caller,
    onProgress: ctx.onProgress,
    trace: ctx.trace,
  });
  return render(await runCall(call), call.entry?.namespaced ?? args.tool, args.detach === true);
}

/**
 * call_tool as an MCP task (a task-augmented tools/call of mcphub_call_tool): the inner call is
 * located, checked and confirmed now, then runs as a background call whose task is the answer.
 * Its task result is what call_tool would have returned. `detach` is moot: a task is detached.
 */
export async function startCallToolTask(ctx: ToolContext, raw: unknown, ttl: number | undefined): Promise<CreateTaskResult> {
  let args: CallArgs;
  try {
    args = quickCallArgs(raw) ?? parseArgs(callArgs, normaliseToolName(raw, Object.keys(callArgs.shape), USAGE), USAGE);
  } catch (err) {
    if (err instanceof BadRequest) throw new McpError(ErrorCode.InvalidParams, err.message);
    throw err;
  }
  const call = callContext({
    ports: ctx.hub.calls,
    view: ctx.view,
    target: { kind: "reference", server: args.server, tool: args.tool },
    args: args.arguments ?? {},
    via: "call_tool",
    mode: "task",
    taskTtl: ttl,
    timeoutMs: args.timeout_ms,
    signal: ctx.signal,
    caller: ctx.caller,
    trace: ctx.trace,
  });
  return renderTask(await runCall(call), call.entry?.namespaced ?? args.tool);
}

/** The model-immediate-response a host may show while a task runs (spec: CreateTaskResult `_meta`). */
const IMMEDIATE = "io.modelcontextprotocol/model-immediate-response";

/**
 * A task-augmented call's answer: the task, or a JSON-RPC error saying why none was started
 * (nothing ran, so there is no task to report it through).
 */
export function renderTask(outcome: CallOutcome, namespaced: string): CreateTaskResult {
  switch (outcome.kind) {
    case "task":
      return {
        task: outcome.task,
        _meta: { [IMMEDIATE]: `${namespaced} is running as task ${outcome.task.taskId}; its result comes with tasks/result once the task has completed.` },
      };
    case "not_found":
      throw new McpError(ErrorCode.InvalidParams, `no task was started: ${String(outcome.document.error ?? `unknown tool ${namespaced}`)}`, outcome.document);
    case "not_sent":
      throw new McpError(
        outcome.reason === "invalid_arguments" ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest,
        `no task was started: ${outcome.reason === "invalid_arguments" ? `invalid arguments for ${namespaced}` : `the call to ${namespaced} was refused (${outcome.reason})`}`,
        outcome.document,
      );
    case "bad_reference":
    case "out_of_scope":
      throw new McpError(ErrorCode.InvalidParams, `no task was started: ${outcome.message}`);
    case "busy":
      throw new McpError(ErrorCode.InvalidRequest, `no task was started: ${outcome.message}`);
    case "limited":
      // The same JSON-RPC error a plain call gets: a harness's retry logic sees it as one.
      throw new WireError(LIMITED_ERROR_CODE, outcome.message, limitErrorData(outcome.refusal));
    case "failed":
      throw new McpError(ErrorCode.InternalError, `no task was started: ${errorText(outcome.error)}`);
    case "result":
    case "accepted":
      throw new McpError(ErrorCode.InternalError, `internal error: a task-augmented call of ${namespaced} ended without a task`);
  }
}

function render(outcome: CallOutcome, namespaced: string, detach: boolean): CallToolResult {
  switch (outcome.kind) {
    case "result":
      return outcome.result;
    case "accepted":
    case "task":
    case "not_found":
    case "not_sent":
      return jsonResult(outcome.document);
    case "bad_reference":
    case "out_of_scope":
    case "busy":
      return badRequest(outcome.message);
    case "failed":
      return badRequest(detach ? `detach ${namespaced}: ${errorText(outcome.error)}` : downstreamFailure(namespaced, outcome.error));
    case "limited":
      // A JSON-RPC error, as for a mounted call: a harness's retry logic sees it as one.
      throw new WireError(LIMITED_ERROR_CODE, outcome.message, limitErrorData(outcome.refusal));
  }
}
