// mcphub_call_tool: route by server__tool or server + tool, validate the arguments against the
// downstream schema (a bad call never reaches the downstream), then call through the one result
// path, or start a detached call.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { downstreamFailure, guardCheck, invokeTool, NotSentError } from "../call.js";
import { jsonBytes } from "../receipts.js";
import { DetachedError } from "../detached.js";
import { errorText } from "../../util/errors.js";
import { checkArguments } from "../validate-args.js";
import { advertisedName } from "../management.js";
import { badRequest, jsonResult, parseArgs, type ToolContext } from "./context.js";
import { locateTool, normaliseToolName } from "./locate.js";

const callArgs = z.strictObject({
  tool: z.string(),
  server: z.string().optional(),
  arguments: z.record(z.string(), z.unknown()).nullable().optional(),
  detach: z.boolean().optional(),
  timeout_ms: z.number().int().optional(),
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
  if (r.timeout_ms !== undefined && !Number.isSafeInteger(r.timeout_ms)) return undefined;
  return r as CallArgs;
}

export async function callTool(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = quickCallArgs(raw) ?? parseArgs(callArgs, normaliseToolName(raw, Object.keys(callArgs.shape), USAGE), USAGE);
  const found = await locateTool(ctx, args.server, args.tool, { live: true });
  if ("doc" in found) return jsonResult(found.doc);
  const { entry } = found;
  const toolArgs = args.arguments ?? {};
  if (args.detach) {
    try {
      guardCheck(ctx.hub, ctx.view, entry, "detach", jsonBytes(toolArgs));
    } catch (err) {
      if (err instanceof NotSentError) return jsonResult(err.document);
      throw err;
    }
    const problems = checkArguments(entry.inputSchema, toolArgs);
    if (problems) {
      return jsonResult({
        status: "invalid_arguments",
        namespaced: entry.namespaced,
        missing: problems.missing,
        invalid: problems.invalid,
        hint: `Nothing was started. Call ${advertisedName("describe_tool", ctx.view.naming)} for ${entry.namespaced}, then retry with the arguments fixed.`,
      });
    }
    try {
      return jsonResult(await ctx.hub.detached.start(ctx.view, entry, toolArgs, args.timeout_ms, ctx.caller, ctx.signal));
    } catch (err) {
      if (err instanceof NotSentError) return jsonResult(err.document);
      if (err instanceof DetachedError) return badRequest(err.message);
      return badRequest(`detach ${entry.namespaced}: ${errorText(err)}`);
    }
  }
  try {
    return await invokeTool(ctx.hub, ctx.view, entry, toolArgs, {
      via: "call_tool",
      ...(args.timeout_ms !== undefined ? { timeoutMs: args.timeout_ms } : {}),
      signal: ctx.signal,
      ...(ctx.caller ? { caller: ctx.caller } : {}),
      ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
    });
  } catch (err) {
    if (err instanceof NotSentError) return jsonResult(err.document);
    return badRequest(downstreamFailure(entry.namespaced, err));
  }
}
