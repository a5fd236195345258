// What mcphub declares to every downstream server it connects to, as a client. One constant for
// the gateway and for `doctor --probe`: a server may list different tools depending on what its
// client declares (server-everything adds its sampling, elicitation and roots tools), so a probe
// that declared less would count fewer tools than the gateway shows.
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";

/** Declared to every downstream: sampling (with context and tools), both elicitation modes, roots. */
export const DOWNSTREAM_CLIENT_CAPABILITIES: ClientCapabilities = {
  sampling: { context: {}, tools: {} },
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
};
