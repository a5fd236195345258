// The guardrail keys of the config (docs/guardrails.md): effect classes and their overrides, the
// per-agent policy (allow / confirm / deny) with its top-level default, and the switches for pinned
// tool definitions. The shapes live here so schema.ts only names them; the rules that span keys
// (patterns naming configured servers, an override set in two places) are `guardIssues`, which
// the config's superRefine calls so each message carries its precise path.
import { z } from "zod";

/** What a tool may do, from least to most dangerous. */
export const EFFECT_CLASSES = ["read", "write", "destructive"] as const;
export type EffectClass = (typeof EFFECT_CLASSES)[number];

/** The lowest effect class that asks the user first; `none` asks for nothing. */
export const CONFIRM_LEVELS = ["none", "write", "destructive"] as const;
export type ConfirmLevel = (typeof CONFIRM_LEVELS)[number];

/** How long a confirmation waits for the user's answer unless the policy says otherwise. */
export const DEFAULT_CONFIRM_TIMEOUT_MS = 5 * 60_000;

export const effectSchema = z.enum(EFFECT_CLASSES, { message: 'the effect must be "read", "write" or "destructive"' });

/**
 * `policy` at the top level (every agent's default) and under an agent. Built with the config's
 * duration schema, which lives in schema.ts (that file imports this one).
 */
export function makePolicySchema(duration: z.ZodType<number, string | number>) {
  return z.strictObject({
    allow: z
      .enum(EFFECT_CLASSES, { message: 'allow must be "read", "write" or "destructive"' })
      .optional(),
    confirm: z
      .enum(CONFIRM_LEVELS, { message: 'confirm must be "none", "write" or "destructive"' })
      .optional(),
    deny: z.array(z.string()).describe("a list of tool name patterns such as [github__delete_*, \"*__drop_*\"]").optional(),
    confirm_timeout: duration.optional(),
  });
}

export interface PolicyConfig {
  allow?: EffectClass | undefined;
  confirm?: ConfirmLevel | undefined;
  deny?: string[] | undefined;
  confirm_timeout?: number | undefined;
}

/** `effects` maps: `server__tool` at the top level, tool names (or "*") under a server. */
export const effectsSchema = z.record(z.string(), effectSchema).describe("a map of tool names to read, write or destructive");

// Tool names in MCP are short identifiers; a pattern adds `*` as its only wildcard.
const PATTERN_RE = /^[A-Za-z0-9_.*\-/]+$/;

type Issue = { path: (string | number)[]; message: string };

interface GuardInput {
  servers: Record<string, { effects?: Record<string, string> | undefined; pin_definitions?: boolean | undefined }>;
  effects?: Record<string, string> | undefined;
  policy?: PolicyConfig | undefined;
  agents: Record<string, { mode: string; servers?: string[] | undefined; policy?: PolicyConfig | undefined }>;
}

const RANK: Record<EffectClass, number> = { read: 0, write: 1, destructive: 2 };

/** Cross-key problems of the guardrail keys, in the order of the file's sections. */
export function guardIssues(c: GuardInput, unknownServer: (name: string) => string): Issue[] {
  const servers = new Set(Object.keys(c.servers));
  const issues: Issue[] = [];
  // `inherited` is the top-level policy an agent's keys fall back to; `scope` the agent's servers.
  const checkPolicy = (p: PolicyConfig | undefined, base: (string | number)[], inherited?: PolicyConfig, scope?: readonly string[], inheritedBy: readonly PolicyConfig[] = []) => {
    p?.deny?.forEach((pattern, i) => {
      const problem = denyPatternProblem(pattern, servers, unknownServer) ?? outOfScope(pattern, scope);
      if (problem) issues.push({ path: [...base, "deny", i], message: problem });
    });
    if (p?.confirm_timeout !== undefined && p.confirm_timeout <= 0) {
      issues.push({ path: [...base, "confirm_timeout"], message: "confirm_timeout must be positive" });
    }
    const problem = p ? confirmProblem(p, base, inherited, inheritedBy) : undefined;
    if (problem) issues.push({ path: [...base, "confirm"], message: problem });
  };
  const agentPolicies = Object.values(c.agents).flatMap((a) => (a.mode !== "direct" && a.policy ? [a.policy] : []));
  checkPolicy(c.policy, ["policy"], undefined, undefined, agentPolicies);
  for (const [key, value] of Object.entries(c.effects ?? {})) {
    const sep = key.indexOf("__");
    if (sep <= 0 || sep + 2 >= key.length || key.includes("*")) {
      const server = sep < 0 ? key : key.slice(0, Math.max(sep, 0)) || "NAME";
      issues.push({ path: ["effects", key], message: `"${key}" must be an exact server__tool name (for every tool of a server, set servers.${server.replace(/\*/g, "") || "NAME"}.effects: {"*": ${value}})` });
      continue;
    }
    const server = key.slice(0, sep);
    const tool = key.slice(sep + 2);
    if (!servers.has(server)) {
      issues.push({ path: ["effects", key], message: unknownServer(server) });
      continue;
    }
    const own = c.servers[server]?.effects;
    const other = own && Object.hasOwn(own, tool) ? own[tool] : undefined;
    if (other !== undefined && other !== value) {
      issues.push({ path: ["effects", key], message: `also set as servers.${server}.effects.${tool}: ${other}; set it in one place` });
    }
  }
  for (const [name, s] of Object.entries(c.servers)) {
    for (const key of Object.keys(s.effects ?? {})) {
      if (key === "*") continue;
      if (key.trim() === "" || key.includes("*")) {
        issues.push({ path: ["servers", name, "effects", key], message: `"${key}" must be a tool name of this server, or "*" for all of its tools` });
      }
    }
  }
  for (const [a, agent] of Object.entries(c.agents)) {
    if (agent.policy === undefined) continue;
    if (agent.mode === "direct") {
      issues.push({ path: ["agents", a, "policy"], message: "policy applies only to gateway mode (this agent is direct: its harness talks to the servers itself)" });
      continue;
    }
    checkPolicy(agent.policy, ["agents", a, "policy"], c.policy, agent.servers);
  }
  return issues;
}

/**
 * A `confirm` set in this block that can never ask: the `allow` in force refuses that class before
 * any confirmation (allow: write with confirm: destructive). The top-level `confirm` is still of
 * use when an agent that inherits it allows more (`inheritedBy`).
 */
function confirmProblem(p: PolicyConfig, base: (string | number)[], inherited: PolicyConfig | undefined, inheritedBy: readonly PolicyConfig[]): string | undefined {
  const confirm = p.confirm;
  if (confirm === undefined || confirm === "none") return undefined;
  const allow = p.allow ?? inherited?.allow;
  if (allow === undefined || RANK[confirm] <= RANK[allow]) return undefined;
  if (inheritedBy.some((a) => a.confirm === undefined && a.allow !== undefined && RANK[a.allow] >= RANK[confirm])) return undefined;
  const where = p.allow !== undefined ? [...base, "allow"].join(".") : "policy.allow";
  const refused = confirm === "destructive" ? "destructive tools" : "tools that write";
  return `never asks: ${where}: ${allow} refuses ${refused} before they could be confirmed; set allow: ${confirm === "write" ? "write (or destructive)" : "destructive"} to ask before such calls, or remove confirm to keep refusing them`;
}

/** A deny pattern naming a server the agent does not have: it would never refuse anything. */
function outOfScope(pattern: string, scope: readonly string[] | undefined): string | undefined {
  if (scope === undefined) return undefined;
  const sep = pattern.indexOf("__");
  const server = sep < 0 ? pattern : pattern.slice(0, sep);
  if (server.includes("*") || scope.includes(server)) return undefined;
  return `"${pattern}" never matches: server "${server}" is not in this agent's servers list, so this agent cannot call its tools anyway`;
}

/**
 * What is wrong with a deny pattern, or undefined. A pattern is a public tool name in which `*`
 * stands for any run of characters; a bare server name (no `__`, no `*`) stands for all its tools.
 * A pattern whose server part is written out must name a configured server, so a typo never
 * silently denies nothing.
 */
export function denyPatternProblem(pattern: string, servers: ReadonlySet<string>, unknownServer: (name: string) => string): string | undefined {
  if (pattern.trim() === "") return "a deny pattern must not be empty";
  if (!PATTERN_RE.test(pattern)) {
    return `"${pattern}" is not a tool name pattern: use letters, digits, _, -, . and * (e.g. github__delete_* or *__drop_*)`;
  }
  if (/^\*+$/.test(pattern)) return `"${pattern}" would deny every tool; to give an agent no tools, set its servers: []`;
  const sep = pattern.indexOf("__");
  const server = sep < 0 ? pattern : pattern.slice(0, sep);
  if (sep === 0) return `"${pattern}" must start with a server name or *`;
  if (sep > 0 && sep + 2 >= pattern.length) return `"${pattern}" ends with "__"; use "${server}" or "${server}__*"`;
  if (!server.includes("*") && !servers.has(server)) return unknownServer(server);
  return undefined;
}
