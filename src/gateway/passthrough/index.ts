// The protocol pass-through between upstream sessions and downstream connections
// (docs/protocol.md): the router (router.ts) that sends server→client requests, notifications,
// log levels, subscriptions and roots to the session that owns a connection; each session as it
// sees it (peer.ts); what each side declares (capabilities.ts); errors that cross a JSON-RPC
// boundary unchanged (errors.ts); the tasks a downstream asks mcphub to run for it
// (client-tasks.ts: task-augmented sampling and elicitation); and the guard's AskUser port on
// the calling session (elicit.ts). This module is its entry point.
export { UPSTREAM_SERVER_CAPABILITIES } from "./capabilities.js";
export { askOnSession } from "./elicit.js";
export { isWireError, toWire, WireError } from "./errors.js";
export { UpstreamPeer } from "./peer.js";
export { Passthrough, type Caller, type PassthroughStats, type UpstreamTaskLink } from "./router.js";
