// The guard: what a tool may do and who may make it do it (docs/guardrails.md). It owns effect
// classes (effects.ts), each agent's policy (policy.ts), pinned tool definitions and their store
// (definitions.ts, store.ts), operator approvals (approve.ts), the refusal documents a model reads
// (refusals.ts), the confirmation question (confirm.ts, summary.ts), and their enforcement in a
// running gateway (guard.ts). It sits below the gateway core: the core's call pipeline asks
// `Guard.check` and `Guard.confirm` and hands in the AskUser port that reaches the calling
// session; nothing here knows sessions, transports or the hub. This module is its entry point.
export { Guard, type DefinitionReport, type DefinitionState, type Gate, type GuardDeps } from "./guard.js";
export { confirmationMessage, type AskUser, type ConfirmOutcome, type Question } from "./confirm.js";
export type { Refusal, RefusalReason } from "./refusals.js";
export { agentPolicy, decide, isDefaultPolicy, type AgentPolicy, type PolicyDecision } from "./policy.js";
export { effectOf, type Effect, type EffectClass } from "./effects.js";
export { ApproveError, approveTools, pendingApprovals, type Approved, type PendingTool, type UnreadableFile } from "./approve.js";
