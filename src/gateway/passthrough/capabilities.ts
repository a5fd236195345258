// What the gateway declares on each side of the pass-through, and the per-request check that an
// upstream client can honour what a downstream asks of it. The downstream side declares the union
// the gateway can route (every feature below); whether one upstream session can answer a given
// request is decided here, from that session's own declared capabilities.
import type { ClientCapabilities, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";

// Declared to every downstream; it lives with the downstream client so `doctor --probe` declares the same.
export { DOWNSTREAM_CLIENT_CAPABILITIES } from "../../downstream/types.js";

/**
 * Declared to every upstream session, whatever its downstreams offer (answers degrade per server).
 * Tasks: any tool may be called as a task (mcphub runs it, or maps it to the downstream's own
 * task); tasks are bound to the agent, so tasks/list shows only its own.
 */
export const UPSTREAM_SERVER_CAPABILITIES: ServerCapabilities = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {},
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
};

export const FORWARDED_METHODS = ["sampling/createMessage", "elicitation/create", "roots/list"] as const;
export type ForwardedMethod = (typeof FORWARDED_METHODS)[number];

export function isForwardedMethod(method: string): method is ForwardedMethod {
  return (FORWARDED_METHODS as readonly string[]).includes(method);
}

/** Whether the upstream client takes this request task-augmented (it declared tasks.requests for it). */
export function takesTask(method: ForwardedMethod, caps: ClientCapabilities | undefined): boolean {
  const requests = caps?.tasks?.requests;
  if (method === "sampling/createMessage") return requests?.sampling?.createMessage !== undefined;
  if (method === "elicitation/create") return requests?.elicitation?.create !== undefined;
  return false;
}

/**
 * What the upstream client lacks to answer this request, phrased for an error message, or
 * undefined when it can. Follows the spec's capability rules: an empty `elicitation` object means
 * form mode only; sampling with tools needs `sampling.tools`, with a context other than "none"
 * needs `sampling.context`.
 */
export function missingCapability(method: ForwardedMethod, params: Record<string, unknown> | undefined, caps: ClientCapabilities | undefined): string | undefined {
  switch (method) {
    case "roots/list":
      return caps?.roots ? undefined : "the roots capability";
    case "sampling/createMessage": {
      const sampling = caps?.sampling;
      if (!sampling) return "the sampling capability";
      if ((params?.tools !== undefined || params?.toolChoice !== undefined) && !sampling.tools) return "sampling.tools (sampling with tools)";
      const context = params?.includeContext;
      if (context !== undefined && context !== "none" && !sampling.context) return `sampling.context (includeContext "${String(context)}")`;
      return undefined;
    }
    case "elicitation/create": {
      const e = caps?.elicitation;
      if (!e) return "the elicitation capability";
      const mode = params?.mode === "url" ? "url" : "form";
      const declaresModes = e.form !== undefined || e.url !== undefined;
      const supported = mode === "url" ? e.url !== undefined : !declaresModes || e.form !== undefined;
      return supported ? undefined : `elicitation.${mode} (${mode}-mode elicitation)`;
    }
  }
}
