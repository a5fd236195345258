// The gateway core: the MCP server side of mcphub, with no knowledge of how bytes arrive (the
// front doors in src/serve turn stdio lines and HTTP requests into a Transport and hand it here).
// It owns the hub (one process's shared state: supervisor, catalogue, stores, guard; hub.ts),
// per-agent views and what they advertise (view.ts, policy/), one MCP session per upstream
// connection (session.ts, direct-calls.ts), the prompts and resources it publishes
// (listings.ts), the eight management tools (management.ts, tools/), the call pipeline and
// detached calls (call/), MCP tasks as sessions serve them (tasks/: the task view of a detached
// call, the SDK task store), result receipts (receipts.ts), server status shared by every surface
// (server-status.ts), and the protocol pass-through between sessions and downstreams
// (passthrough/). Below it: guard, catalog, downstream, vault, telemetry, config, util. This
// module is its entry point for the doors.
export { Hub, settingChanges, type HubOptions, type ReloadSummary } from "./hub.js";
export { createSession, type Session } from "./session.js";
export { AgentView } from "./view.js";
export { Scope } from "./policy/index.js";
export { serverStatus, type ServerStatus } from "./server-status.js";
export { directCallParams } from "./direct-calls.js";
export type { AgentLimitState, LimitsSnapshot, ServerLimitState } from "./limits/index.js";
