// The session transports of the HTTP door: each serves one MCP session over streamable HTTP after
// the listener's Host/Origin/token checks. The lean one (lean.ts, the default) works on node:http
// directly: one POST as an exchange that answers in JSON or upgrades to SSE (exchange.ts, sse.ts),
// the session's event log for resumption (events.ts), bounded bodies (body.ts) and the SDK's exact
// refusals (replies.ts). select.ts picks it or the SDK's own (`http_transport: sdk`). This module
// is its entry point.
export { bodyTooLarge } from "./body.js";
export { createSessionTransport, type HttpSessionTransport, type HttpTransportKind, type SessionTransportOptions } from "./select.js";
