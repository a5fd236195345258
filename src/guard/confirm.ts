// Asking the user to confirm a call: the question (who asks, which tool of which server, what it
// does, with which arguments, summarised and redacted) and the shape of the answer. How the
// question reaches the user is not the guard's business: the call pipeline passes an `AskUser`
// port, which the gateway core implements with MCP elicitation on the calling session (the
// session's own SDK Server, on the stream of the tools/call it is about). When the user cannot be
// asked, the port answers `unavailable` and the call is refused, never run unasked.
import type { CatalogEntry } from "../catalog/types.js";
import type { EffectClass } from "../config/index.js";
import { summariseArguments } from "./summary.js";

export type ConfirmOutcome =
  | { answer: "accept" }
  | { answer: "decline" | "cancel" }
  /** The user could not be asked; `why` completes "mcphub cannot ask the user: ...". */
  | { answer: "unavailable"; why: string }
  | { answer: "timeout" };

/** One question put to the user; the port answers within `timeoutMs` or says `timeout`. */
export interface Question {
  message: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** How the guard reaches the user of the calling session (implemented by the gateway core). */
export type AskUser = (question: Question) => Promise<ConfirmOutcome>;

export interface ConfirmSubject {
  agent: string | undefined;
  entry: CatalogEntry;
  effect: EffectClass;
  args: Record<string, unknown>;
}

/** The text the user reads: who asks, which tool of which server, what it does, with what. */
export function confirmationMessage(r: ConfirmSubject): string {
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
