// The call path of the gateway core: one tool call as one pipeline of stages (pipeline.ts lists
// them in order), the call context they share and the narrow ports they use instead of the hub
// (context.ts), and detached calls, which run the same pipeline in the background
// (detached.ts). Doors into the call path: the session's tools/call of a mounted tool
// (../session.ts), the call_tool management tool (../tools/call-tool.ts), and polls of detached
// calls (../tools/results.ts). This module is its entry point.
export { callContext, runCall, STAGES, type StageName } from "./pipeline.js";
export type { CallContext, CallLimits, CallOutcome, CallPorts, CallRequest, CallTarget, DetachedCalls, Progress, ResultsAccess, Send, ServerAccess, Stage, Via } from "./context.js";
export { callLimits, downstreamFailure, effectiveTimeout, errorClass } from "./dispatch.js";
export { locateTool, type Found } from "./locate.js";
export { allowedFor, DetachedError, DetachedRegistry, detachedRefusal, type DetachedDeps, type DetachedLimits } from "./detached.js";
