// The downstream side: one Downstream per configured MCP server (downstream.ts: its state
// machine, start on first use, idle stop, reconnect with backoff, list_changed re-lists), the
// connection to it (session.ts over stdio-transport.ts or the SDK's SSE and streamable HTTP
// clients; spawn-plan.ts, child-env.ts, stderr-tail.ts for a child process), calls with
// timeout, progress and cancellation, and the Supervisor that holds them all and reports
// changes (supervisor.ts). Errors a caller must tell apart are in types.ts. It knows no names,
// ranking or agents.
export { connectionFingerprint } from "./identity.js";
export { probeServer } from "./probe.js";
export { REDACTED, SENSITIVE_NAME_RE, redactPatterns } from "./sanitize.js";
export { findCommand } from "./spawn-plan.js";
export { Supervisor, type ReconcileResult } from "./supervisor.js";
export {
  LockedError,
  NeedsAuthError,
  NotConnectedError,
  OutcomeUnknownError,
  type CallOptions,
  type ClientHooks,
  type ConnectionOrigin,
  type DownstreamSnapshot,
  type PeerMessage,
  type RemoteAuth,
  type RemoteAuthSession,
  type SecretResolver,
} from "./types.js";
