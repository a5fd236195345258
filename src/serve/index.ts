// The front doors: they turn bytes into MCP requests and hand them to the gateway core, and turn
// its answers back into bytes. Above the core (src/gateway), below the CLI (src/cli); nothing
// beneath imports them, and the core knows nothing of stdio or HTTP.
//   stdio/     `mcphub mcp serve`: newline-delimited JSON-RPC on stdin/stdout, one agent
//   http/      `mcphub up`: the daemon's listener, HTTP sessions, health, the session transports
//   status/    the daemon's status page and its API
//   tokens.ts  per-agent bearer tokens (the daemon checks them, the CLI creates them)
//   rpc-guard.ts  JSON-RPC hygiene at the edge of every upstream session (both doors)
//   reload.ts  following the config file (and SIGHUP) in a running gateway (both doors)
// The CLI imports each door's own entry (stdio/index.ts, http/index.ts), so a stdio gateway never
// loads the HTTP door; this module gathers the public surface for everyone else.
export type { ServeOptions } from "./options.js";
export { serveStdio } from "./stdio/index.js";
export { isLoopbackHost, serveHttp, startHttpGateway, type HttpGateway, type HttpOptions } from "./http/index.js";
export { createLoginSecret, LOGIN_LINK_TTL_MS, writeLaunchFile } from "./status/index.js";
export { bearerFrom, TokenStore, type TokenInfo } from "./tokens.js";
export { describeReload, followConfig, type Report } from "./reload.js";
