// The call path of the gateway core: one tool call as one pipeline of stages (pipeline.ts lists
// them in order), the call context they share and the narrow ports they use instead of the hub
// (context.ts), and detached calls, which run the same pipeline in the background
// (detached.ts; an MCP task and a waiting call of a task-required tool are detached calls too).
// Doors into the call path: the session's tools/call of a mounted tool (../session.ts, a
// task-augmented one included), the call_tool management tool (../tools/call-tool.ts), polls of
// detached calls (../tools/results.ts) and the SDK's tasks/* handlers (../tasks/store.ts). This
// module is its entry point.
export { callContext, runCall, STAGES, type StageName } from "./pipeline.js";
export type {
  BackgroundRun,
  CallContext,
  CallLimits,
  CallOutcome,
  CallPorts,
  CallRequest,
  CallTarget,
  DetachedCalls,
  DownstreamTaskUpdate,
  Progress,
  ResultsAccess,
  Send,
  ServerAccess,
  Stage,
  Via,
} from "./context.js";
export { callLimits, downstreamFailure, effectiveTimeout, errorClass, mustRunAsTask } from "./dispatch.js";
export { locateTool, type Found } from "./locate.js";
export { LIMITED_ERROR_CODE, limitErrorData } from "./limit.js";
export { allowedFor, DetachedError, DetachedRegistry, detachedRefusal, type DetachedDeps, type DetachedLimits } from "./detached.js";
