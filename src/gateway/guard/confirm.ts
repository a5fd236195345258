// Asking the user to confirm a call, through MCP elicitation on the session that made the call.
// The request goes to that session's own SDK Server (never through the pass-through router, which
// picks sessions for downstream requests), on the stream of the tools/call it is about
// (relatedRequestId), so no other session can see or answer it. A client that did not declare
// elicitation cannot be asked, and the call is then refused, never run unasked.
import { ElicitResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { CatalogEntry } from "../../catalog/types.js";
import type { EffectClass } from "../../config/index.js";
import { summariseArguments } from "../../guard/summary.js";
import { missingCapability } from "../passthrough/capabilities.js";
import type { Caller } from "../passthrough/router.js";

export type ConfirmOutcome =
  | { answer: "accept" }
  | { answer: "decline" | "cancel" }
  /** The user could not be asked; `why` completes "mcphub cannot ask the user: ...". */
  | { answer: "unavailable"; why: string }
  | { answer: "timeout" };

export interface ConfirmRequest {
  caller: Caller | undefined;
  agent: string | undefined;
  entry: CatalogEntry;
  effect: EffectClass;
  args: Record<string, unknown>;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The text the user reads: who asks, which tool of which server, what it does, with what. */
export function confirmationMessage(r: Pick<ConfirmRequest, "agent" | "entry" | "effect" | "args">): string {
  const what = r.effect === "destructive" ? "a destructive tool" : r.effect === "write" ? "a tool that writes" : "a read-only tool";
  const who = r.agent !== undefined ? `The agent "${r.agent}"` : "The agent";
  return [
    `${who} wants to run ${what} through mcphub.`,
    `Tool: ${r.entry.namespaced} (server "${r.entry.server}")`,
    `Effect: ${r.effect}`,
    `Arguments: ${summariseArguments(r.args)}`,
    "Allow this call?",
  ].join("\n");
}

export async function askUser(r: ConfirmRequest): Promise<ConfirmOutcome> {
  const peer = r.caller?.peer;
  if (!peer) return { answer: "unavailable", why: "the call did not come from a client session" };
  if (peer.closed) return { answer: "unavailable", why: "the client session has ended" };
  const missing = missingCapability("elicitation/create", {}, peer.capabilities);
  if (missing !== undefined) return { answer: "unavailable", why: `the client did not declare ${missing}` };
  try {
    // Form mode with no fields: the answer is the action itself (accept, decline, cancel). `mode`
    // is left out, which means form mode and is what clients of every protocol version accept.
    const result = await peer.server.request(
      {
        method: "elicitation/create",
        params: { message: confirmationMessage(r), requestedSchema: { type: "object", properties: {} } },
      },
      ElicitResultSchema,
      {
        timeout: r.timeoutMs,
        ...(r.signal ? { signal: r.signal } : {}),
        ...(r.caller?.requestId !== undefined ? { relatedRequestId: r.caller.requestId } : {}),
      },
    );
    return { answer: result.action };
  } catch (err) {
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout && !r.signal?.aborted) return { answer: "timeout" };
    if (r.signal?.aborted) return { answer: "cancel" };
    if (peer.closed) return { answer: "unavailable", why: "the client session ended before it answered" };
    const message = err instanceof Error ? err.message : String(err);
    return { answer: "unavailable", why: `the client answered the confirmation request with an error (${message.slice(0, 200)})` };
  }
}
