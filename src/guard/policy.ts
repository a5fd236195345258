// One agent's guardrail policy, resolved from config: the most dangerous effect class it may call
// (`allow`), the least dangerous class that asks the user first (`confirm`), and tool name
// patterns it may never call (`deny`). An agent's own `policy` keys replace the top-level ones
// key by key (like `pin`: omitted = inherit, `deny: []` = none); without either, everything is
// allowed and nothing asks. Every decision names the config key that made it, so a refusal can
// say exactly what to change.
import { DEFAULT_CONFIRM_TIMEOUT_MS, type Config, type ConfirmLevel, type EffectClass, type PolicyConfig } from "../config/index.js";
import { atLeast } from "./effects.js";

export interface DenyRule {
  pattern: string;
  /** `agents.claude.policy.deny[1]` or `policy.deny[0]`. */
  rule: string;
  regex: RegExp;
}

export interface AgentPolicy {
  agent: string | undefined;
  allow: EffectClass;
  /** The key that set `allow` (`agents.claude.policy.allow`), or undefined for the default. */
  allowRule: string | undefined;
  confirm: ConfirmLevel;
  confirmRule: string | undefined;
  deny: DenyRule[];
  /** Where an operator changes this agent's policy (`agents.claude.policy` or `policy`). */
  home: string;
  confirmTimeoutMs: number;
}

export function agentPolicy(config: Config, agent: string | undefined): AgentPolicy {
  const own: PolicyConfig | undefined = agent !== undefined && Object.hasOwn(config.agents, agent) ? config.agents[agent]?.policy : undefined;
  const top = config.policy;
  const pick = <K extends keyof PolicyConfig>(key: K): { value: PolicyConfig[K]; rule: string | undefined } => {
    if (own?.[key] !== undefined) return { value: own[key], rule: `agents.${agent}.policy.${key}` };
    if (top?.[key] !== undefined) return { value: top[key], rule: `policy.${key}` };
    return { value: undefined, rule: undefined };
  };
  const allow = pick("allow");
  const confirm = pick("confirm");
  const deny = pick("deny");
  const timeout = pick("confirm_timeout");
  return {
    agent,
    allow: allow.value ?? "destructive",
    allowRule: allow.rule,
    confirm: confirm.value ?? "none",
    confirmRule: confirm.rule,
    deny: (deny.value ?? []).map((pattern, i) => ({ pattern, rule: `${deny.rule ?? "policy.deny"}[${i}]`, regex: patternRegex(pattern) })),
    home: agent !== undefined ? `agents.${agent}.policy` : "policy",
    confirmTimeoutMs: timeout.value ?? DEFAULT_CONFIRM_TIMEOUT_MS,
  };
}

/** Whether this policy restricts nothing (list_servers shows a policy only when it does). */
export function isDefaultPolicy(p: AgentPolicy): boolean {
  return p.allow === "destructive" && p.confirm === "none" && p.deny.length === 0;
}

/**
 * A deny pattern as a regular expression over public names: `*` is any run of characters, a bare
 * server name (no `__`, no `*`) is every tool of that server.
 */
export function patternRegex(pattern: string): RegExp {
  const whole = !pattern.includes("__") && !pattern.includes("*") ? `${pattern}__*` : pattern;
  const body = whole
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`, "s");
}

export type PolicyDecision =
  | { kind: "allow" }
  | { kind: "confirm"; rule: string }
  | { kind: "refuse"; reason: "denied"; rule: string; pattern: string }
  | { kind: "refuse"; reason: "effect_not_allowed"; rule: string };

/**
 * What the policy says about calling a tool of this effect class, known by these names (its
 * public name first, then the other spellings a deny pattern may have been written for).
 */
export function decide(policy: AgentPolicy, effect: EffectClass, names: readonly string[]): PolicyDecision {
  for (const d of policy.deny) {
    if (names.some((n) => d.regex.test(n))) return { kind: "refuse", reason: "denied", rule: d.rule, pattern: d.pattern };
  }
  if (!atLeast(policy.allow, effect)) return { kind: "refuse", reason: "effect_not_allowed", rule: policy.allowRule ?? `${policy.home}.allow` };
  if (policy.confirm !== "none" && atLeast(effect, policy.confirm)) return { kind: "confirm", rule: policy.confirmRule ?? `${policy.home}.confirm` };
  return { kind: "allow" };
}
