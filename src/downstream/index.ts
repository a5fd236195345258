// The downstream side: one Downstream per configured MCP server (downstream.ts: its state
// machine, start on first use, idle stop, reconnect with backoff, list_changed re-lists), the
// connection to it (session.ts over stdio/ — our transport, spawn plan, child env and stderr
// tail for a child process — or the SDK's SSE and streamable HTTP clients), calls with
// timeout, progress and cancellation (a tool the server runs as an MCP task is followed to its
// result: tasks.ts), and the Supervisor that holds them all and reports
// changes (supervisor.ts). Errors a caller must tell apart are in types.ts. It knows no names,
// ranking or agents.
export { connectionFingerprint } from "./identity.js";
export { probeServer } from "./probe.js";
export { REDACTED, SENSITIVE_NAME_RE, redactPatterns } from "./sanitize.js";
export { findCommand } from "./stdio/spawn-plan.js";
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
  type DownstreamTask,
  type PeerMessage,
  type RemoteAuth,
  type RemoteAuthSession,
  type SecretResolver,
} from "./types.js";
