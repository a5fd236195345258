// Call limits (docs/operations.md#limits): per agent, calls per minute (a sliding window) and
// calls in flight; per server, calls in flight across all agents, with an optional bounded queue.
// The pipeline's limit stage (../call/limit.ts) asks the Limiter for a lease before a call is
// sent and gives it back when the call ends; the status page and the metrics read its snapshot.
// The limits come from the config in force, so a reload changes them at the next call.
export { agentLimits, isRefusal, Limiter, type Admission, type AgentLimitState, type Lease, type LimiterOptions, type LimitKind, type LimitRefusal, type LimitsSnapshot, type ServerLimitState } from "./limiter.js";
export { SlidingWindow, WINDOW_MS } from "./window.js";
