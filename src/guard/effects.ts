// Effect classes: what a tool may do (read, write, destructive), from its MCP annotations unless
// the config overrides it. Annotations are hints a server gives about itself; a tool that gives
// none is treated as `write` (it may change something), never as `read`.
import { namespacedAliases, type NamePlan } from "../catalog/names.js";
import type { Config, EffectClass } from "../config/index.js";

export type { EffectClass };

const RANK: Record<EffectClass, number> = { read: 0, write: 1, destructive: 2 };

/** Whether effect `a` is at least as dangerous as `b`. */
export function atLeast(a: EffectClass, b: EffectClass): boolean {
  return RANK[a] >= RANK[b];
}

export interface Effect {
  effect: EffectClass;
  /** Where the class comes from: a config override, the tool's annotations, or the default. */
  source: "config" | "annotations" | "default";
  /** The config key that set it (`effects.mem__wipe`, `servers.mem.effects["*"]`), for messages. */
  rule?: string;
}

/**
 * The class the annotations imply. `destructiveHint: true` wins over `readOnlyHint: true` (a tool
 * that says both is read in the less safe way); `readOnlyHint: true` alone is `read`; anything
 * else — no annotations, only `idempotentHint`/`openWorldHint`, `readOnlyHint: false` — is `write`.
 * (The MCP spec's own default for a non-read-only tool is destructiveHint: true; mcphub follows
 * the product decision that a tool which says nothing is `write`, and `confirm: write` covers it.)
 */
export function effectFromAnnotations(annotations: Record<string, unknown> | undefined): Effect {
  const readOnly = annotations?.["readOnlyHint"];
  const destructive = annotations?.["destructiveHint"];
  if (destructive === true) return { effect: "destructive", source: "annotations" };
  if (readOnly === true) return { effect: "read", source: "annotations" };
  if (readOnly === false) return { effect: "write", source: "annotations" };
  return { effect: "write", source: "default" };
}

export interface ToolRef {
  server: string;
  /** Public fragment (`server__<fragment>`). */
  tool: string;
  wire: string;
  annotations?: Record<string, unknown> | undefined;
}

/**
 * The effect class of a tool: the top-level `effects: {server__tool: ...}` (any accepted spelling
 * of the name), else the server's `effects: {tool: ...}` (public or wire name), else its
 * `effects: {"*": ...}`, else the annotations.
 */
export function effectOf(config: Config, ref: ToolRef, plan?: NamePlan): Effect {
  const top = config.effects;
  if (top) {
    for (const name of namespacedAliases(ref.server, ref.tool, ref.wire, plan)) {
      const e = Object.hasOwn(top, name) ? top[name] : undefined;
      if (e !== undefined) return { effect: e, source: "config", rule: `effects.${name}` };
    }
  }
  const own = config.servers[ref.server]?.effects;
  if (own) {
    for (const name of ref.tool === ref.wire ? [ref.tool] : [ref.tool, ref.wire]) {
      const e = Object.hasOwn(own, name) ? own[name] : undefined;
      if (e !== undefined) return { effect: e, source: "config", rule: `servers.${ref.server}.effects.${name}` };
    }
    const all = Object.hasOwn(own, "*") ? own["*"] : undefined;
    if (all !== undefined) return { effect: all, source: "config", rule: `servers.${ref.server}.effects["*"]` };
  }
  return effectFromAnnotations(ref.annotations);
}

/** The phrase for a class in messages: "a read-only tool", "a destructive tool". */
export function effectPhrase(effect: EffectClass): string {
  return effect === "read" ? "a read-only tool" : effect === "write" ? "a tool that writes" : "a destructive tool";
}
