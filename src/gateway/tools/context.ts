// Shared plumbing for the management tool handlers: the per-call context, the two result
// shapes (a JSON document in both structuredContent and one text block; a bad-request error),
// and argument parsing with messages that say what to send instead.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { JsonObject } from "../../catalog/types.js";
import type { Hub } from "../hub.js";
import type { Caller } from "../passthrough/index.js";
import type { AgentView } from "../view.js";
import type { CallTrace } from "../../telemetry/index.js";

export interface ToolContext {
  hub: Hub;
  view: AgentView;
  signal: AbortSignal;
  /** The upstream session and request this call serves (routes sampling, elicitation, roots). */
  caller?: Caller;
  /** Forwards downstream progress to the caller's progress token (when the caller sent one). */
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
  /** The request's trace, when tracing is on (a call it makes is part of it). */
  trace?: CallTrace | undefined;
}

/**
 * A management tool answer: the same JSON document in structuredContent and, compact, in one text
 * block, so a host that shows either shows every field, hint and next step (and a model reading
 * the text pays for no indentation).
 */
export function jsonResult(doc: JsonObject): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(doc) }],
    structuredContent: doc,
  };
}

const ownErrors = new WeakSet<CallToolResult>();

/** A request the gateway cannot act on: isError with a message that says what to send instead. */
export function badRequest(message: string): CallToolResult {
  const result: CallToolResult = { content: [{ type: "text", text: message }], isError: true };
  ownErrors.add(result);
  return result;
}

/** Whether a result is one of the gateway's own error messages (not a downstream's error result). */
export function isOwnError(result: CallToolResult): boolean {
  return ownErrors.has(result);
}

export class BadRequest extends Error {
  override name = "BadRequest";
}

/** A reference to a tool outside the agent's scope. */
export class OutOfScope extends Error {
  override name = "OutOfScope";
}

/** Parses management-tool arguments; throws BadRequest with a one-line, actionable message. */
export function parseArgs<T extends z.ZodType>(schema: T, raw: unknown, usage: string): z.output<T> {
  const r = schema.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue && issue.path.length ? `${issue.path.join(".")}: ` : "";
  throw new BadRequest(`${where}${issue?.message ?? "invalid arguments"}. Send ${usage}.`);
}

/**
 * describe_tool and call_tool take the same names: `name` is accepted for `tool` (models send MCP's
 * tools/call field name); any other unknown key is refused with a message naming it and the
 * fields to use.
 */
export function normaliseToolName(raw: unknown, known: readonly string[], usage: string): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const obj = raw as Record<string, unknown>;
  const accepted = new Set([...known, "name"]);
  const unknown = Object.keys(obj).filter((k) => !accepted.has(k));
  if (unknown.length > 0) {
    throw new BadRequest(`unknown key \`${unknown[0]}\`; use \`tool\` for the tool name${known.includes("arguments") ? " and `arguments` for its arguments" : ""}. Send ${usage}.`);
  }
  if (!("name" in obj)) return obj;
  const { name, ...rest } = obj;
  if ("tool" in rest && rest["tool"] !== name) throw new BadRequest(`both \`tool\` and \`name\` were sent and differ; send only \`tool\`. Send ${usage}.`);
  return { ...rest, tool: name };
}
