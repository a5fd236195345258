// The HTTP front door, `mcphub up` (and `mcp serve --listen`): one listener for many agents
// (listener.ts: Host/Origin checks, bearer tokens, the session table, /healthz, the status page's
// routes, drain on shutdown), the daemon's open sessions with their idle expiry and per-agent cap
// (sessions.ts), the health report (health.ts), and the streamable-HTTP session transports
// (transport/: the lean one and the SDK's, selectable). Requests become MCP messages on a
// Transport, handed to a gateway-core session. This module is the door's entry point.
export { isLoopbackHost, serveHttp, startHttpGateway, type HttpGateway, type HttpOptions } from "./listener.js";
export { healthReport, type HealthReport } from "./health.js";
