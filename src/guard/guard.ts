// The guardrails of one gateway process (docs/guardrails.md): effect classes, each agent's policy,
// confirmation, and pinned tool definitions. The call pipeline asks `check` before anything is
// validated or sent and `confirm` right before the call (with the AskUser port that reaches the
// calling session's user, confirm.ts); discovery asks `present` (a
// changed tool is shown as it was approved, never with its new text) and `fields` (its effect
// class and why it cannot be called). Pinned definitions are recorded whenever the catalogue gets
// a server's listing; approvals made by `mcphub approve` in another process are seen through a
// watch on the store and a stat of its file on every check.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Catalog } from "../catalog/catalog.js";
import type { CatalogEntry, JsonObject } from "../catalog/types.js";
import type { Config } from "../config/index.js";
import { changeSummary, descriptionDiff, pinnedDefinition, type PinnedDefinition } from "./definitions.js";
import { effectOf, type Effect } from "./effects.js";
import { agentPolicy, decide, type AgentPolicy } from "./policy.js";
import { DefinitionStore, observedTool, type ObservedTool } from "./store.js";
import type { Store } from "../store/index.js";
import type { AuditRecord, Telemetry } from "../telemetry/index.js";
import { errorText } from "../util/errors.js";
import type { Logger } from "../util/log.js";
import { confirmationMessage, type AskUser } from "./confirm.js";
import * as refuse from "./refusals.js";

/** Where a tool's definition stands against the approved one. */
export type DefinitionState =
  | { state: "trusted" }
  /** `pin_definitions: false`: the server's definitions are not checked. */
  | { state: "unpinned" }
  | { state: "changed"; approved: PinnedDefinition; approvedHash: string; changes: string[] }
  | { state: "awaiting_approval" }
  | { state: "unreadable"; file: string; problem: string };

export type Gate = { ok: true; effect: Effect; confirmRule?: string } | { ok: false; effect: Effect; refusal: refuse.Refusal };

export interface GuardDeps {
  config: () => Config;
  catalog: Catalog;
  dataDir: string;
  /** Where the pinned definitions are shared (default: the data directory's files). */
  store?: Store;
  telemetry: () => Telemetry;
  log: Logger;
}

/** A server's tools that cannot be called until an operator acts, for list_servers/doctor/status. */
export interface DefinitionReport {
  changed: { tool: string; namespaced: string; changes: string[]; description?: { before: string; after: string } }[];
  awaiting_approval: string[];
  unreadable?: string;
}

interface Pinned {
  definition: PinnedDefinition;
  observed: ObservedTool;
}

export class Guard {
  readonly store: DefinitionStore;
  private gen = 0;
  private readonly listeners = new Set<() => void>();
  /** The pinned part of each entry's definition and its hash (entries are rebuilt on change). */
  private readonly pinned = new WeakMap<CatalogEntry, Pinned>();
  private readonly presented = new WeakMap<CatalogEntry, { key: string; entry: CatalogEntry }>();
  private readonly policies = new Map<string, { config: Config; policy: AgentPolicy }>();
  /** Servers whose last observation failed (warned once until one succeeds). */
  private readonly failing = new Set<string>();
  private stopWatch: (() => void) | undefined;

  constructor(private readonly deps: GuardDeps) {
    this.store = new DefinitionStore(deps.store ?? deps.dataDir);
    deps.catalog.onChange((server) => void this.observe(server));
  }

  /** Bumped whenever an approval state may have changed: views rebuild what they derived from it. */
  get generation(): number {
    return this.gen;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Follows the store for approvals made by other processes (`mcphub approve`). */
  watch(): void {
    this.stopWatch ??= this.store.watch(() => this.changed());
  }

  close(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
  }

  /** Observes every server with a listing again (after a reload turned pinning or quarantine on). */
  observeAll(): void {
    for (const server of Object.keys(this.deps.config().servers)) if (this.deps.catalog.hasServer(server)) void this.observe(server);
    this.changed();
  }

  // ---- effects and policy -----------------------------------------------------------------

  effect(entry: CatalogEntry): Effect {
    return effectOf(this.deps.config(), { server: entry.server, tool: entry.tool, wire: entry.wire, annotations: entry.annotations }, this.deps.catalog.planOf(entry.server));
  }

  policy(agent: string | undefined): AgentPolicy {
    const config = this.deps.config();
    const key = agent ?? "";
    const hit = this.policies.get(key);
    if (hit?.config === config) return hit.policy;
    const policy = agentPolicy(config, agent);
    this.policies.set(key, { config, policy });
    return policy;
  }

  // ---- pinned definitions -----------------------------------------------------------------

  definitionState(entry: CatalogEntry): DefinitionState {
    const cfg = this.deps.config().servers[entry.server];
    if (!cfg || cfg.pin_definitions === false) return { state: "unpinned" };
    const records = this.store.read(entry.server);
    if ("unreadable" in records) return { state: "unreadable", file: this.store.pathOf(entry.server), problem: records.unreadable };
    const rec = Object.hasOwn(records.tools, entry.wire) ? records.tools[entry.wire] : undefined;
    const now = this.pinnedOf(entry);
    if (rec?.approved) {
      if (rec.approved.hash === now.observed.hash) return { state: "trusted" };
      return { state: "changed", approved: rec.approved.definition, approvedHash: rec.approved.hash, changes: changeSummary(rec.approved.definition, now.definition) };
    }
    // Never approved: on a quarantined server (or one recorded while quarantined) it waits for an
    // operator; otherwise this is its first sight, which the observation records as approved.
    return rec?.pending !== undefined || this.quarantined(entry.server) ? { state: "awaiting_approval" } : { state: "trusted" };
  }

  /**
   * The entry as a model may see it: a changed tool with its approved definition (the new text is
   * what an attacker controls), a tool awaiting approval with no definition text at all.
   */
  present(entry: CatalogEntry): CatalogEntry {
    const st = this.definitionState(entry);
    if (st.state !== "changed" && st.state !== "awaiting_approval" && st.state !== "unreadable") return entry;
    const key = st.state === "changed" ? st.approvedHash : st.state;
    const hit = this.presented.get(entry);
    if (hit?.key === key) return hit.entry;
    let shown: CatalogEntry;
    if (st.state === "changed") {
      const a = st.approved;
      const { outputSchema: _o, annotations: _a, ...rest } = entry.definition;
      const definition: Tool = {
        ...rest,
        ...(a.description !== undefined ? { description: a.description } : {}),
        inputSchema: a.inputSchema as Tool["inputSchema"],
        ...(a.outputSchema ? { outputSchema: a.outputSchema as Tool["outputSchema"] } : {}),
        ...(a.annotations ? { annotations: a.annotations as Tool["annotations"] } : {}),
      };
      if (a.description === undefined) delete definition.description;
      const { outputSchema: _eo, annotations: _ea, ...entryRest } = entry;
      shown = {
        ...entryRest,
        description: a.description ?? "",
        inputSchema: a.inputSchema as JsonObject,
        ...(a.outputSchema ? { outputSchema: a.outputSchema as JsonObject } : {}),
        ...(a.annotations ? { annotations: a.annotations as JsonObject } : {}),
        definition,
      };
    } else {
      const text = `Not shown: this tool's definition awaits an operator's approval (${refuse.approveCommand(entry)}).`;
      const { outputSchema: _o, annotations: _a, title: _t, ...rest } = entry;
      shown = { ...rest, description: text, inputSchema: { type: "object" }, definition: { name: entry.wire, description: text, inputSchema: { type: "object" } } };
    }
    this.presented.set(entry, { key, entry: shown });
    return shown;
  }

  /** Whether the tool may appear in tools/list at all: not while it has no approved definition. */
  listable(entry: CatalogEntry): boolean {
    const st = this.definitionState(entry).state;
    return st !== "awaiting_approval" && st !== "unreadable";
  }

  /** The tools of a server an operator must act on (in the order of their public names). */
  report(server: string, entries: readonly CatalogEntry[]): DefinitionReport | undefined {
    const out: DefinitionReport = { changed: [], awaiting_approval: [] };
    for (const e of entries) {
      const st = this.definitionState(e);
      if (st.state === "changed") {
        const diff = descriptionDiff(st.approved, this.pinnedOf(e).definition);
        out.changed.push({ tool: e.tool, namespaced: e.namespaced, changes: st.changes, ...(diff ? { description: diff } : {}) });
      } else if (st.state === "awaiting_approval") out.awaiting_approval.push(e.namespaced);
      else if (st.state === "unreadable") out.unreadable = `${st.file}: ${st.problem}`;
    }
    return out.changed.length || out.awaiting_approval.length || out.unreadable ? out : undefined;
  }

  // ---- the call path ----------------------------------------------------------------------

  /**
   * Whether this agent may call the tool now: its policy (deny patterns, then `allow`), then the
   * tool's pinned definition. A refusal is audited here; the caller records the call's telemetry.
   */
  check(agent: string | undefined, entry: CatalogEntry, via: string): Gate {
    const effect = this.effect(entry);
    const policy = this.policy(agent);
    const decision = decide(policy, effect.effect, this.namesOf(entry));
    let refusal: refuse.Refusal | undefined;
    if (decision.kind === "refuse") {
      refusal = decision.reason === "denied" ? refuse.denied(entry, effect, policy, decision.rule, decision.pattern) : refuse.notAllowed(entry, effect, policy, decision.rule);
    } else {
      const st = this.definitionState(entry);
      if (st.state === "changed") refusal = refuse.definitionChanged(entry, effect, st.changes);
      else if (st.state === "awaiting_approval") refusal = refuse.awaitingApproval(entry, effect, this.quarantineRule(entry.server));
      else if (st.state === "unreadable") refusal = refuse.definitionsUnreadable(entry, effect, st.file, st.problem);
    }
    if (refusal) {
      this.audit({ event: "refused", agent: agent ?? "", entry, effect: effect.effect, reason: refusal.reason, rule: refusal.rule, via });
      return { ok: false, effect, refusal };
    }
    return { ok: true, effect, ...(decision.kind === "confirm" ? { confirmRule: decision.rule } : {}) };
  }

  /**
   * Asks the user through `ask` (the calling session) when the gate says so. Undefined means go
   * ahead; a refusal means the call must not be made (declined, cancelled, no answer, or no way
   * to ask).
   */
  async confirm(
    agent: string | undefined,
    entry: CatalogEntry,
    gate: Extract<Gate, { ok: true }>,
    args: Record<string, unknown>,
    opts: { ask: AskUser; signal?: AbortSignal | undefined; via: string },
  ): Promise<refuse.Refusal | undefined> {
    const rule = gate.confirmRule;
    if (rule === undefined) return undefined;
    const policy = this.policy(agent);
    const outcome = await opts.ask({
      message: confirmationMessage({ agent, entry, effect: gate.effect.effect, args }),
      timeoutMs: policy.confirmTimeoutMs,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const audit = (event: AuditRecord["event"], reason?: string) =>
      this.audit({ event, agent: agent ?? "", entry, effect: gate.effect.effect, rule, via: opts.via, ...(reason !== undefined ? { reason } : {}) });
    switch (outcome.answer) {
      case "accept":
        audit("confirmed");
        return undefined;
      case "decline":
      case "cancel":
        audit("declined", outcome.answer === "decline" ? "declined" : "cancelled");
        return refuse.declined(entry, gate.effect, outcome.answer);
      case "timeout":
        audit("refused", "confirmation_timeout");
        return refuse.confirmationTimeout(entry, gate.effect, policy, rule);
      case "unavailable":
        audit("refused", "confirmation_unavailable");
        return refuse.confirmationUnavailable(entry, gate.effect, policy, rule, outcome.why);
    }
  }

  // ---- discovery --------------------------------------------------------------------------

  /**
   * What discovery shows beside a tool for this agent: its effect class, and when it cannot be
   * called as is, why (`refused` by the policy, `confirm` first, or its `definition` state), so
   * a model stops looking for a way to call it.
   */
  fields(agent: string | undefined, entry: CatalogEntry): JsonObject {
    const effect = this.effect(entry);
    const out: JsonObject = { effect: effect.effect };
    const decision = decide(this.policy(agent), effect.effect, this.namesOf(entry));
    if (decision.kind === "refuse") out["refused"] = decision.reason;
    else if (decision.kind === "confirm") out["confirm"] = true;
    const st = this.definitionState(entry).state;
    if (st === "changed" || st === "awaiting_approval" || st === "unreadable") out["definition"] = st;
    return out;
  }

  /** The fuller form for describe_tool: source of the class, the policy's decision and its rule. */
  describe(agent: string | undefined, entry: CatalogEntry): JsonObject {
    const effect = this.effect(entry);
    const policy = this.policy(agent);
    const decision = decide(policy, effect.effect, this.namesOf(entry));
    const out: JsonObject = { effect: effect.effect, effect_source: effect.source, ...(effect.rule ? { effect_rule: effect.rule } : {}) };
    if (decision.kind === "refuse") out["policy"] = { decision: "refused", reason: decision.reason, rule: decision.rule };
    else if (decision.kind === "confirm") out["policy"] = { decision: "confirm", rule: decision.rule };
    const st = this.definitionState(entry);
    if (st.state === "changed") out["definition"] = { state: "changed", changes: st.changes, approve: refuse.approveCommand(entry) };
    else if (st.state === "awaiting_approval") out["definition"] = { state: "awaiting_approval", approve: refuse.approveCommand(entry) };
    else if (st.state === "unreadable") out["definition"] = { state: "unreadable", problem: st.problem };
    return out;
  }

  // ---- internals --------------------------------------------------------------------------

  private namesOf(entry: CatalogEntry): string[] {
    return entry.wire === entry.tool ? [entry.namespaced] : [entry.namespaced, `${entry.server}__${entry.wire}`];
  }

  /** Whether tools of this server never seen before wait for an approval (`quarantine`). */
  quarantined(server: string): boolean {
    const config = this.deps.config();
    return config.servers[server]?.quarantine ?? config.quarantine;
  }

  /** The key that quarantines a server, for the audit trail (`quarantine` also when a tool waits from an earlier one). */
  private quarantineRule(server: string): string {
    const config = this.deps.config();
    if (config.servers[server]?.quarantine !== undefined) return `servers.${server}.quarantine`;
    return "quarantine";
  }

  private pinnedOf(entry: CatalogEntry): Pinned {
    let p = this.pinned.get(entry);
    if (!p) {
      const definition = pinnedDefinition(entry.definition);
      p = { definition, observed: observedTool(entry.wire, definition) };
      this.pinned.set(entry, p);
    }
    return p;
  }

  /** Records the server's current listing in the store (first sights, changes) and audits it. */
  private async observe(server: string): Promise<void> {
    const cfg = this.deps.config().servers[server];
    if (!cfg?.enabled || cfg.pin_definitions === false || !this.deps.catalog.hasServer(server)) return;
    const entries = this.deps.catalog.entriesOf(server);
    try {
      const result = await this.store.observe(
        server,
        entries.map((e) => this.pinnedOf(e).observed),
        { quarantine: this.quarantined(server) },
      );
      this.failing.delete(server);
      const byWire = new Map(entries.map((e) => [e.wire, e]));
      for (const wire of result.changed) {
        const e = byWire.get(wire);
        if (!e) continue;
        this.audit({ event: "changed", agent: "", entry: e, reason: "definition_changed" });
        this.deps.log.warn(`${e.namespaced}: its definition changed since it was approved; calls are refused until an operator runs \`${refuse.approveCommand(e)}\``);
      }
      for (const wire of result.awaiting) {
        const e = byWire.get(wire);
        if (e) this.audit({ event: "awaiting_approval", agent: "", entry: e, reason: "awaiting_approval" });
      }
      if (result.changed.length || result.awaiting.length || result.firstSeen.length) this.changed();
    } catch (err) {
      if (this.failing.has(server)) return;
      this.failing.add(server);
      this.deps.log.warn(`${server}: could not record its tool definitions (${errorText(err)}); calls are still checked against what is recorded`);
    }
  }

  private audit(r: { event: AuditRecord["event"]; agent: string; entry: CatalogEntry; effect?: string; reason?: string; rule?: string; via?: string }): void {
    try {
      this.deps.telemetry().audit({
        ts: Date.now(),
        event: r.event,
        agent: r.agent,
        server: r.entry.server,
        tool: r.entry.wire,
        namespaced: r.entry.namespaced,
        ...(r.effect !== undefined ? { effect: r.effect } : {}),
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
        ...(r.rule !== undefined ? { rule: r.rule } : {}),
        ...(r.via !== undefined ? { via: r.via } : {}),
      });
    } catch {
      // best effort, like every telemetry record
    }
  }

  private changed(): void {
    this.gen++;
    for (const l of [...this.listeners]) {
      try {
        l();
      } catch (err) {
        this.deps.log.error(`guard listener failed: ${errorText(err)}`);
      }
    }
  }
}
