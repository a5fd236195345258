// Detached calls: call_tool {detach: true} answers at once with a callId and the call runs in the
// background through the same pipeline (its stages from dispatch on, pipeline.ts). Every state
// change is journaled in the vault, so a finished result survives a restart and a call that was
// running when its gateway died reports `unknown` (never silently replayed).
import { randomBytes } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CatalogEntry, JsonObject } from "../../catalog/types.js";
import { errorText } from "../../util/errors.js";
import type { Logger } from "../../util/log.js";
import type { DetachedJournal, DetachedRecord } from "../../vault/detached.js";
import { advertisedName } from "../management.js";
import type { AgentView } from "../view.js";
import { entryOf, type CallContext, type CallOutcome, type DetachedCalls } from "./context.js";
import { effectiveTimeout } from "./dispatch.js";
import { callContext, runCall } from "./pipeline.js";

/** The admission limits for detached calls (config `detached`). */
export interface DetachedLimits {
  /** At most this many in flight per agent. */
  per_agent: number;
  /** Each agent's first calls in flight, up to this many, always start: no other agent can take them. */
  reserved: number;
  /** Calls beyond an agent's reserved ones share one pool of this size, across all agents. */
  shared: number;
}

/**
 * Why one more detached call of `owner` may not start now; undefined when it may. The rule: an
 * agent below its cap always gets its reserved share; past that, it draws on a shared pool that
 * counts every agent's calls beyond their own reserved ones. However many agents hold hung calls,
 * each other agent still starts `reserved` calls at once, and the gateway holds at most
 * `reserved` × agents + `shared` (the agents are the config's, so that is bounded).
 */
export function detachedRefusal(owners: Iterable<string>, owner: string, limits: DetachedLimits): string | undefined {
  const counts = new Map<string, number>();
  for (const o of owners) counts.set(o, (counts.get(o) ?? 0) + 1);
  const mine = counts.get(owner) ?? 0;
  if (mine >= limits.per_agent) {
    return `too many detached calls in flight (${mine} of ${limits.per_agent}) for this agent; poll the existing callIds or wait for one to finish`;
  }
  if (mine < limits.reserved) return undefined;
  let shared = 0;
  for (const n of counts.values()) shared += Math.max(0, n - limits.reserved);
  if (shared < limits.shared) return undefined;
  return `too many detached calls in flight: this agent has ${mine} (each agent is guaranteed ${limits.reserved}), and the ${limits.shared} shared slots for calls beyond that are all in use; poll the existing callIds or wait for one to finish`;
}

interface Running {
  entry: CatalogEntry;
  owner: string;
  started: number;
  controller: AbortController;
}

type Finished =
  | { state: "failed"; entry: CatalogEntry; owner: string; started: number; finished: number; error: string }
  | { state: "done"; entry: CatalogEntry; owner: string; started: number; finished: number; result: CallToolResult };

export class DetachedError extends Error {}

export interface DetachedDeps {
  journal: () => Promise<DetachedJournal | undefined>;
  log: Logger;
  /** The config's `detached` limits, read on every admission (a reload applies at once). */
  limits: () => DetachedLimits;
}

export class DetachedRegistry implements DetachedCalls {
  private readonly running = new Map<string, Running>();
  /** Finished calls of this process, kept so polling works even when the vault is unavailable. */
  private readonly finished = new Map<string, Finished>();
  private readonly instance = randomBytes(8).toString("hex");

  constructor(private readonly deps: DetachedDeps) {}

  inFlight(): number {
    return this.running.size;
  }

  refusal(owner: string): string | undefined {
    return detachedRefusal([...this.running.values()].map((r) => r.owner), owner, this.deps.limits());
  }

  /**
   * The dispatch of a detached call: the pipeline has located, checked and (when the policy asks)
   * confirmed it while the request that starts it was open. The limits are checked again (the
   * user may have taken a while), the call is journaled as pending, and the rest of the pipeline
   * runs in the background with the call's own abort signal and a hard timeout. Server→client
   * requests the call causes go to the starting session while it lives (the starting request
   * itself is over by then, so none is named).
   */
  async start(ctx: CallContext): Promise<{ accepted: JsonObject } | { busy: string }> {
    const entry = entryOf(ctx);
    const { view } = ctx;
    const busy = this.refusal(view.owner);
    if (busy) return { busy };
    const callId = randomBytes(16).toString("hex");
    const timeout = effectiveTimeout(ctx.ports.servers.config(), ctx.timeoutMs);
    const run: Running = { entry, owner: view.owner, started: Date.now(), controller: new AbortController() };
    this.running.set(callId, run);
    await this.journal({ ...base(callId, run, this.instance), state: "pending" });
    const background = callContext({
      ports: ctx.ports,
      view,
      target: ctx.target,
      args: ctx.args,
      via: "detach",
      mode: "wait",
      timeoutMs: timeout,
      signal: run.controller.signal,
      ...(ctx.caller ? { caller: { peer: ctx.caller.peer } } : {}),
    });
    background.entry = entry;
    void this.execute(callId, run, background);
    const accepted: JsonObject = {
      status: "accepted",
      callId,
      server: entry.server,
      tool: entry.tool,
      downstream: entry.wire,
      namespaced: entry.namespaced,
      timeoutMs: timeout,
      nextAction: `The call is running in the background. Call ${advertisedName("poll_result", view.naming)} with this callId until it is no longer pending.`,
    };
    return { accepted };
  }

  private async execute(callId: string, run: Running, ctx: CallContext): Promise<void> {
    let outcome: Finished;
    const done = { entry: run.entry, owner: run.owner, started: run.started };
    try {
      const end = await runCall(ctx, "dispatch");
      outcome =
        end.kind === "result"
          ? { ...done, state: "done", finished: Date.now(), result: end.result }
          : { ...done, state: "failed", finished: Date.now(), error: failureText(end) };
    } catch (err) {
      outcome = { ...done, state: "failed", finished: Date.now(), error: errorText(err) };
    }
    this.running.delete(callId);
    // Interrupted by shutdown: the downstream may or may not have acted, so the journal keeps the
    // call pending and a later gateway reports it as unknown instead of a misleading failure.
    if (run.controller.signal.aborted) return;
    this.finished.set(callId, outcome);
    this.trimFinished();
    const rec = base(callId, run, this.instance);
    await this.journal(
      outcome.state === "done"
        ? { ...rec, state: "done", finished: outcome.finished, resultJson: JSON.stringify(outcome.result) }
        : { ...rec, state: "failed", finished: outcome.finished, error: outcome.error },
    );
  }

  /**
   * The poll answer: a status document, or the finished CallToolResult itself. Idempotent.
   * Throws DetachedError when the call belongs to another agent's scope.
   */
  async poll(view: AgentView, callId: string): Promise<{ doc?: JsonObject; result?: CallToolResult }> {
    const run = this.running.get(callId);
    if (run) {
      this.checkScope(view, run.entry.server, run.entry.wire, run.entry.namespaced, run.owner);
      return { doc: pending(callId, run.entry.namespaced, Date.now() - run.started) };
    }
    const fin = this.finished.get(callId);
    if (fin) {
      this.checkScope(view, fin.entry.server, fin.entry.wire, fin.entry.namespaced, fin.owner);
      return fin.state === "done"
        ? { result: fin.result }
        : { doc: failed(callId, fin.entry.namespaced, fin.error, fin.finished - fin.started) };
    }
    const journal = await this.deps.journal();
    let rec: DetachedRecord | undefined;
    try {
      rec = await journal?.get(callId);
    } catch (err) {
      return { doc: unknown(callId, `The detached record could not be read (${errorText(err)}).`) };
    }
    if (!rec) {
      return {
        doc: unknown(callId, "The callId is unknown: it may have expired, been pruned, or belong to another data directory."),
      };
    }
    this.checkScope(view, rec.server, rec.tool, rec.namespaced, rec.agent);
    switch (rec.state) {
      case "done":
        return { result: JSON.parse(rec.resultJson) as CallToolResult };
      case "failed":
        return { doc: failed(callId, rec.namespaced, rec.error, rec.finished - rec.started) };
      case "pending":
        break;
    }
    if (rec.owner.pid !== process.pid && processAlive(rec.owner.pid)) {
      return { doc: pending(callId, rec.namespaced, Date.now() - rec.started) };
    }
    return {
      doc: unknown(
        callId,
        "The gateway running this call stopped before it finished, so its outcome is unknown. It was not retried; check the downstream's state before calling again.",
      ),
    };
  }

  /** Cancels every running call (shutdown). Their journal entries stay pending → unknown later. */
  cancelAll(): void {
    for (const run of this.running.values()) run.controller.abort(new Error("gateway shutting down"));
  }

  private checkScope(view: AgentView, server: string, wire: string, namespaced: string, owner: string): void {
    if (!allowedFor(view, server, wire, namespaced, owner)) {
      throw new DetachedError(`detached call for ${namespaced} is out of scope for this agent`);
    }
  }

  private async journal(rec: DetachedRecord): Promise<void> {
    try {
      const journal = await this.deps.journal();
      await journal?.write(rec);
    } catch (err) {
      this.deps.log.warn(`detached journal write failed (${errorText(err)}); the call stays pollable from this process only`);
    }
  }

  private trimFinished(): void {
    // Bounded memory: the vault journal keeps the full history for the retention window.
    while (this.finished.size > 128) {
      const oldest = this.finished.keys().next().value;
      if (oldest === undefined) break;
      this.finished.delete(oldest);
    }
  }
}

/** What a poll reports for a call that did not answer: the error, or the document of why not. */
function failureText(end: Exclude<CallOutcome, { kind: "result" }>): string {
  switch (end.kind) {
    case "failed":
      return errorText(end.error);
    case "not_sent":
    case "not_found":
    case "accepted":
      return JSON.stringify(end.document);
    default:
      return end.message;
  }
}

function base(callId: string, run: Running, instance: string) {
  return {
    callId,
    server: run.entry.server,
    tool: run.entry.wire,
    namespaced: run.entry.namespaced,
    agent: run.owner,
    started: run.started,
    owner: { pid: process.pid, instance },
  };
}

function pending(callId: string, namespaced: string, elapsedMs: number): JsonObject {
  return { status: "pending", callId, namespaced, elapsedMs, hint: "still running; poll again after a short delay" };
}

function failed(callId: string, namespaced: string, error: string, elapsedMs: number): JsonObject {
  return { status: "failed", callId, namespaced, error, elapsedMs };
}

function unknown(callId: string, reason: string): JsonObject {
  return { status: "unknown", callId, reason };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Stored work (receipts, detached calls) is readable only by the agent that created it, and only
 * while the tool is still in that agent's scope. Checked from stored names alone, so it works
 * before the server has reconnected after a restart.
 */
export function allowedFor(view: AgentView, server: string, wire: string, namespaced: string, owner: string): boolean {
  const fragment = namespaced.startsWith(`${server}__`) ? namespaced.slice(server.length + 2) : wire;
  return owner === view.owner && view.allowsName(server, fragment, wire);
}
