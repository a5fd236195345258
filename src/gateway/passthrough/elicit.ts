// The guard's AskUser port, implemented on the calling session: a confirmation goes to that
// session's own SDK Server as an elicitation request (never through the router, which picks
// sessions for downstream requests), on the stream of the tools/call it is about
// (relatedRequestId), so no other session can see or answer it. A client that did not declare
// elicitation cannot be asked: the answer is then `unavailable`, and the guard refuses the call.
import { ElicitResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { AskUser, ConfirmOutcome, Question } from "../../guard/index.js";
import { missingCapability } from "./capabilities.js";
import type { Caller } from "./router.js";

/** Asks on `caller`'s session; without a caller (no client session) the user cannot be asked. */
export function askOnSession(caller: Caller | undefined): AskUser {
  return (question) => ask(caller, question);
}

async function ask(caller: Caller | undefined, q: Question): Promise<ConfirmOutcome> {
  const peer = caller?.peer;
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
        params: { message: q.message, requestedSchema: { type: "object", properties: {} } },
      },
      ElicitResultSchema,
      {
        timeout: q.timeoutMs,
        ...(q.signal ? { signal: q.signal } : {}),
        ...(caller?.requestId !== undefined ? { relatedRequestId: caller.requestId } : {}),
      },
    );
    return { answer: result.action };
  } catch (err) {
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout && !q.signal?.aborted) return { answer: "timeout" };
    if (q.signal?.aborted) return { answer: "cancel" };
    if (peer.closed) return { answer: "unavailable", why: "the client session ended before it answered" };
    const message = err instanceof Error ? err.message : String(err);
    return { answer: "unavailable", why: `the client answered the confirmation request with an error (${message.slice(0, 200)})` };
  }
}
