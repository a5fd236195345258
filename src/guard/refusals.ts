// The answers a model gets when the guardrails stop a call: what was refused, the rule that
// refused it (the config key, or the approval it waits for) and how an operator changes that, plus
// a plain instruction not to retry or look for a way around it. Nothing was sent downstream in
// any of these cases, and each says so.
import type { CatalogEntry, JsonObject } from "../catalog/types.js";
import type { EffectClass } from "../config/index.js";
import type { Effect } from "./effects.js";
import type { AgentPolicy } from "./policy.js";
import { formatDuration } from "../util/units.js";

/** Why a call was refused; also its telemetry error class and the audit record's reason. */
export type RefusalReason =
  | "denied"
  | "effect_not_allowed"
  | "definition_changed"
  | "awaiting_approval"
  | "definitions_unreadable"
  | "confirmation_unavailable"
  | "confirmation_timeout"
  | "declined";

export interface Refusal {
  reason: RefusalReason;
  /** The config key (or approval) that decided, for the audit trail. */
  rule: string;
  document: JsonObject;
}

const DONT_RETRY = "Do not retry it or look for another tool to do the same thing; tell the user.";

function allowedPhrase(allow: EffectClass): string {
  return allow === "read" ? "read-only tools" : allow === "write" ? "tools that read or write, not destructive ones" : "any tool";
}

function base(entry: CatalogEntry, effect: Effect): JsonObject {
  return {
    status: "refused",
    namespaced: entry.namespaced,
    server: entry.server,
    tool: entry.tool,
    effect: effect.effect,
    effect_source: effect.source,
  };
}

function who(policy: AgentPolicy): string {
  return policy.agent !== undefined ? `agent "${policy.agent}"` : "this gateway's clients";
}

export function notAllowed(entry: CatalogEntry, effect: Effect, policy: AgentPolicy, rule: string): Refusal {
  const fix = effect.source === "config" ? `, or change ${effect.rule} if the tool is misclassified` : `, or, if the tool only reads, classify it with effects: {${entry.namespaced}: read}`;
  return {
    reason: "effect_not_allowed",
    rule,
    document: {
      ...base(entry, effect),
      reason: "effect_not_allowed",
      rule: `${rule}: ${policy.allow}`,
      message: `${entry.namespaced} is a ${effect.effect} tool and ${who(policy)} may call ${allowedPhrase(policy.allow)} (${rule}: ${policy.allow}). Nothing was sent.`,
      hint: `${DONT_RETRY} An operator can allow it by setting ${rule}: ${effect.effect} in the mcphub config${fix}.`,
    },
  };
}

export function denied(entry: CatalogEntry, effect: Effect, policy: AgentPolicy, rule: string, pattern: string): Refusal {
  const list = rule.replace(/\[\d+\]$/, "");
  return {
    reason: "denied",
    rule,
    document: {
      ...base(entry, effect),
      reason: "denied",
      rule: `${rule}: ${pattern}`,
      message: `${entry.namespaced} is denied to ${who(policy)} by the pattern "${pattern}" (${rule}). Nothing was sent.`,
      hint: `${DONT_RETRY} An operator can allow it by removing "${pattern}" from ${list} in the mcphub config.`,
    },
  };
}

export function approveCommand(entry: CatalogEntry): string {
  return `mcphub approve ${entry.namespaced}`;
}

export function definitionChanged(entry: CatalogEntry, effect: Effect, changes: string[]): Refusal {
  const approve = approveCommand(entry);
  return {
    reason: "definition_changed",
    rule: "pinned definition",
    document: {
      ...base(entry, effect),
      reason: "definition_changed",
      rule: "pinned definition",
      changes,
      message: `The definition of ${entry.namespaced} changed since it was approved (${changes.join("; ")}), so mcphub does not call it until an operator reviews the change. Nothing was sent.`,
      hint: `${DONT_RETRY} An operator reviews and allows the new definition with: ${approve}`,
      approve,
    },
  };
}

/** `rule`: the config key that quarantined the server (`servers.X.quarantine` or `quarantine`). */
export function awaitingApproval(entry: CatalogEntry, effect: Effect, rule: string): Refusal {
  const approve = approveCommand(entry);
  return {
    reason: "awaiting_approval",
    rule,
    document: {
      ...base(entry, effect),
      reason: "awaiting_approval",
      rule: "quarantine",
      message: `${entry.namespaced} belongs to server "${entry.server}", whose tools each need an operator's approval before their first call (quarantine). Nothing was sent.`,
      hint: `${DONT_RETRY} An operator allows it with: ${approve} (or mcphub approve ${entry.server} for all of that server's tools)`,
      approve,
    },
  };
}

export function definitionsUnreadable(entry: CatalogEntry, effect: Effect, file: string, problem: string): Refusal {
  return {
    reason: "definitions_unreadable",
    rule: "pinned definition",
    document: {
      ...base(entry, effect),
      reason: "definitions_unreadable",
      rule: "pinned definition",
      message: `The approved definitions of server "${entry.server}" cannot be read (${problem}), so mcphub cannot check that ${entry.namespaced} is the tool that was approved. Nothing was sent.`,
      hint: `${DONT_RETRY} An operator fixes or deletes ${file} (deleting it trusts the server's current tools again).`,
    },
  };
}

export function confirmationUnavailable(entry: CatalogEntry, effect: Effect, policy: AgentPolicy, rule: string, why: string): Refusal {
  return {
    reason: "confirmation_unavailable",
    rule,
    document: {
      ...base(entry, effect),
      reason: "confirmation_unavailable",
      rule: `${rule}: ${policy.confirm}`,
      message: `${entry.namespaced} is a ${effect.effect} tool and ${rule}: ${policy.confirm} asks the user before such calls, but mcphub cannot ask: ${why}. Nothing was sent.`,
      hint: `${DONT_RETRY} A client that supports MCP elicitation can confirm it; an operator can change ${rule} in the mcphub config.`,
    },
  };
}

export function confirmationTimeout(entry: CatalogEntry, effect: Effect, policy: AgentPolicy, rule: string): Refusal {
  return {
    reason: "confirmation_timeout",
    rule,
    document: {
      ...base(entry, effect),
      reason: "confirmation_timeout",
      rule: `${rule}: ${policy.confirm}`,
      message: `The user was asked to confirm this call of ${entry.namespaced} and did not answer within ${formatDuration(policy.confirmTimeoutMs)}. Nothing was sent.`,
      hint: "Do not retry it on your own; ask the user whether to try again.",
    },
  };
}

export function declined(entry: CatalogEntry, effect: Effect, answer: "decline" | "cancel"): Refusal {
  return {
    reason: "declined",
    rule: "user",
    document: {
      status: "declined",
      namespaced: entry.namespaced,
      server: entry.server,
      tool: entry.tool,
      effect: effect.effect,
      reason: answer === "decline" ? "declined by the user" : "cancelled by the user",
      message: `The user ${answer === "decline" ? "declined" : "cancelled"} this call of ${entry.namespaced}. Nothing was sent.`,
      hint: "Do not retry it unless the user asks for it again.",
    },
  };
}
