// Detached calls and MCP tasks: one mechanism. A call started with `detach: true`, a
// task-augmented tools/call (an upstream MCP task), and a waiting call of a tool that must run as
// a task downstream are all one record here, run in the background through the same pipeline
// (its stages from dispatch on, pipeline.ts): the callId is the task id, `mcphub_poll_result`
// and `tasks/get` read the same record. Every state change that matters after a restart is
// journaled in the vault (pending with its ttl, the downstream's task id once known, the
// outcome), so a finished result survives a restart and a call that was running when its gateway
// died reports `unknown` / failed (never silently replayed). Status changes of a running call
// (the downstream task's own, or waiting for the client's input) live in memory and reach the
// session that started a task as notifications/tasks/status.
import { randomBytes } from "node:crypto";
import { ErrorCode, McpError, type CallToolResult, type Result, type Task } from "@modelcontextprotocol/sdk/types.js";
import type { CatalogEntry, JsonObject } from "../../catalog/types.js";
import { errorText } from "../../util/errors.js";
import type { Logger } from "../../util/log.js";
import type { DetachedJournal, DetachedOrigin, DetachedRecord, RpcErrorRecord } from "../../vault/detached.js";
import { FINISHED_GRACE_MS } from "../../vault/detached.js";
import { advertisedName } from "../management.js";
import { bareMessage } from "../passthrough/errors.js";
import type { UpstreamPeer } from "../passthrough/peer.js";
import type { Caller } from "../passthrough/router.js";
import {
  errorResult,
  grantedTtl,
  isTerminal,
  pollIntervalOf,
  recordResult,
  recordState,
  TASK_NOT_FOUND,
  toTask,
  type TaskSource,
  type TaskState,
  type TaskStatus,
} from "../tasks/index.js";
import type { AgentView } from "../view.js";
import { entryOf, type CallContext, type CallOutcome, type DetachedCalls, type DownstreamTaskUpdate } from "./context.js";
import { downstreamFailure, effectiveTimeout } from "./dispatch.js";
import { callContext, runCall } from "./pipeline.js";

/** Finished calls kept in memory (the journal keeps them all for their ttl). */
const MAX_FINISHED_IN_MEMORY = 128;
/** tasks/list page size. */
const LIST_PAGE = 50;

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

/** One call the registry runs or has run, in this process. */
interface Entry {
  callId: string;
  entry: CatalogEntry;
  owner: string;
  origin: DetachedOrigin;
  started: number;
  updated: number;
  ttl: number;
  pollInterval: number;
  timeoutMs: number;
  status: TaskStatus;
  statusMessage?: string | undefined;
  controller: AbortController;
  /** The session that started it: a task's status notifications go there. */
  peer?: UpstreamPeer | undefined;
  downstreamTask?: string;
  /** The downstream's own task needs input from the client. */
  downstreamWaiting: boolean;
  /** Requests forwarded to the client for this task that are not answered yet. */
  waiting: number;
  /** Cancelled by the agent (tasks/cancel, or a waiting caller that gave up). */
  cancelled: boolean;
  /** How the background run ended (the same outcome a waiting call would have had). */
  final?: CallOutcome;
  finished?: number;
  /** For poll_result and tasks/result: the result, or the failure as the call would report it. */
  outcome?: { result: CallToolResult } | { error: string; rpcError?: RpcErrorRecord };
  /** Woken at every status change and at the end. */
  listeners: Set<() => void>;
}

export class DetachedError extends Error {
  override name = "DetachedError";
}

export interface DetachedDeps {
  journal: () => Promise<DetachedJournal | undefined>;
  log: Logger;
  /** result_retention in force: the default lifetime of records older versions wrote without a ttl. */
  retentionMs: () => number;
  /** The config's `detached` limits, read on every admission (a reload applies at once). */
  limits: () => DetachedLimits;
}

export class DetachedRegistry implements DetachedCalls, TaskSource {
  private readonly calls = new Map<string, Entry>();
  private readonly instance = randomBytes(8).toString("hex");

  constructor(private readonly deps: DetachedDeps) {}

  /** Calls running in the background now. */
  inFlight(): number {
    let n = 0;
    for (const e of this.calls.values()) if (!isTerminal(e.status)) n++;
    return n;
  }

  refusal(owner: string): string | undefined {
    const owners: string[] = [];
    for (const e of this.calls.values()) if (!isTerminal(e.status)) owners.push(e.owner);
    return detachedRefusal(owners, owner, this.deps.limits());
  }

  /**
   * The dispatch of a detached call or a task: the pipeline has located, checked and (when the
   * policy asks) confirmed it while the request that starts it was open. The limits are checked
   * again (the user may have taken a while), the call is journaled as pending, and the rest of
   * the pipeline runs in the background with the call's own abort signal and a hard timeout.
   */
  async start(ctx: CallContext): Promise<{ accepted: JsonObject; task: Task } | { busy: string }> {
    const started = await this.launch(ctx, ctx.mode === "task" ? "task" : "detach");
    if ("busy" in started) return started;
    return { accepted: accepted(started.e, ctx.view), task: toTask(stateOf(started.e), Date.now()) };
  }

  async runAndWait(ctx: CallContext, waitMs: number, hard: boolean): Promise<{ outcome: CallOutcome } | { accepted: JsonObject } | { busy: string }> {
    const started = await this.launch(ctx, "auto");
    if ("busy" in started) return started;
    const { e } = started;
    const signal = ctx.signal;
    let deadline = Date.now() + waitMs;
    while (!e.final && !isTerminal(e.status)) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      if (signal?.aborted) {
        // The caller gave up on the call itself (not only on waiting): it is cancelled downstream.
        await this.cancelEntry(e, "the client cancelled the call");
        return { outcome: { kind: "failed", error: signal.reason ?? new Error("cancelled") } };
      }
      const before = `${e.status}\u0000${e.statusMessage ?? ""}`;
      await changed(e, left, signal);
      if (!hard && `${e.status}\u0000${e.statusMessage ?? ""}` !== before) deadline = Date.now() + waitMs;
    }
    if (e.final) return { outcome: e.final };
    if (isTerminal(e.status)) return { outcome: { kind: "failed", error: new Error(e.statusMessage ?? `the call was ${e.status}`) } };
    return { accepted: accepted(e, ctx.view, true) };
  }

  private async launch(ctx: CallContext, origin: DetachedOrigin): Promise<{ e: Entry } | { busy: string }> {
    const entry = entryOf(ctx);
    const { view } = ctx;
    const busy = this.refusal(view.owner);
    if (busy) return { busy };
    const config = ctx.ports.servers.config();
    // A waiting call's timeout_ms is how long its caller waits, not how long the task may run.
    const timeoutMs = effectiveTimeout(config, origin === "auto" ? undefined : ctx.timeoutMs);
    const now = Date.now();
    const e: Entry = {
      callId: randomBytes(16).toString("hex"),
      entry,
      owner: view.owner,
      origin,
      started: now,
      updated: now,
      ttl: grantedTtl(origin === "task" ? ctx.taskTtl : undefined, timeoutMs + config.result_retention),
      pollInterval: pollIntervalOf(undefined),
      timeoutMs,
      status: "working",
      controller: new AbortController(),
      peer: ctx.caller?.peer,
      downstreamWaiting: false,
      waiting: 0,
      cancelled: false,
      listeners: new Set(),
    };
    this.calls.set(e.callId, e);
    await this.journal(this.pendingRecord(e));
    // Server→client requests the call causes go to the starting session while it lives. A task's
    // are queued for its tasks/result; a waiting call's ride its request while it is open.
    const caller: Caller | undefined = ctx.caller
      ? {
          peer: ctx.caller.peer,
          ...(origin === "auto" && ctx.caller.requestId !== undefined ? { requestId: ctx.caller.requestId } : {}),
          ...(origin === "task" ? { task: { taskId: e.callId, waiting: (on: boolean) => this.clientWaiting(e, on) } } : {}),
        }
      : undefined;
    const background = callContext({
      ports: ctx.ports,
      view,
      target: ctx.target,
      args: ctx.args,
      via: ctx.via,
      mode: "wait",
      timeoutMs,
      signal: e.controller.signal,
      caller,
      // Its stages and downstream call are spans of the request that started it (which may have ended).
      trace: ctx.trace,
      // Progress reaches a caller still waiting; a detached call's request is over.
      ...(origin === "auto" && ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
      background: {
        // A detached call or a task asks the downstream for a task too, when the tool allows one.
        ...(origin !== "auto" ? { task: { ttl: e.ttl } } : {}),
        onTask: (t) => this.mirror(e, t),
      },
    });
    background.entry = entry;
    // Its place among the calls in flight (limit stage) is held until the background run ends.
    background.lease = ctx.lease;
    ctx.lease = undefined;
    void this.execute(e, background);
    return { e };
  }

  private async execute(e: Entry, ctx: CallContext): Promise<void> {
    let end: CallOutcome;
    try {
      end = await runCall(ctx, "dispatch");
    } catch (err) {
      end = { kind: "failed", error: err };
    }
    e.final = end;
    if (e.cancelled) return wake(e);
    // Interrupted by shutdown: the downstream may or may not have acted, so the journal keeps the
    // call pending and a later gateway reports it as unknown instead of a misleading failure.
    if (e.controller.signal.aborted) {
      e.status = "failed";
      e.statusMessage = "the gateway shut down before the call finished";
      return wake(e);
    }
    e.finished = Date.now();
    e.updated = e.finished;
    if (end.kind === "result") {
      e.outcome = { result: end.result };
      e.status = end.result.isError === true ? "failed" : "completed";
      e.statusMessage = end.result.isError === true ? "the tool reported an error; tasks/result has it" : undefined;
    } else {
      const error = failureText(end, e.entry.namespaced);
      const rpcError = rpcErrorOf(end, ctx.via);
      e.outcome = { error, ...(rpcError ? { rpcError } : {}) };
      e.status = "failed";
      e.statusMessage = error;
    }
    this.trimFinished();
    this.announce(e);
    // A finished call keeps no session alive (the registry keeps up to 128 of them).
    e.peer = undefined;
    wake(e);
    const rec = this.base(e);
    const out = e.outcome;
    await this.journal(
      "result" in out
        ? { ...rec, state: "done", finished: e.finished, resultJson: JSON.stringify(out.result) }
        : { ...rec, state: "failed", finished: e.finished, error: out.error, ...(out.rpcError ? { rpcError: out.rpcError } : {}) },
    );
  }

  // ---- status ---------------------------------------------------------------------------------

  /** The downstream's task moved: its status message and need for input are this call's too. */
  private mirror(e: Entry, t: DownstreamTaskUpdate): void {
    if (isTerminal(e.status)) return;
    if (e.downstreamTask === undefined) {
      e.downstreamTask = t.taskId;
      void this.journal(this.pendingRecord(e));
    }
    if (t.status === "input_required") e.downstreamWaiting = true;
    else if (t.status === "working") e.downstreamWaiting = false;
    e.pollInterval = pollIntervalOf(t.pollInterval);
    this.setStatus(e, t.statusMessage);
  }

  /** A request forwarded to the client for this task is out (on) or answered (off). */
  private clientWaiting(e: Entry, on: boolean): void {
    e.waiting = Math.max(0, e.waiting + (on ? 1 : -1));
    if (!isTerminal(e.status)) this.setStatus(e, e.statusMessage);
  }

  private setStatus(e: Entry, statusMessage: string | undefined): void {
    const status: TaskStatus = e.waiting > 0 || e.downstreamWaiting ? "input_required" : "working";
    if (status === e.status && statusMessage === e.statusMessage) return;
    e.status = status;
    e.statusMessage = statusMessage;
    e.updated = Date.now();
    this.announce(e);
    wake(e);
  }

  /** notifications/tasks/status to the session that started a task (a client that asked for tasks). */
  private announce(e: Entry): void {
    const peer = e.peer;
    if (e.origin !== "task" || !peer || peer.closed) return;
    void peer.server.notification({ method: "notifications/tasks/status", params: toTask(stateOf(e), Date.now()) }).catch(() => undefined);
  }

  // ---- poll_result ----------------------------------------------------------------------------

  /**
   * The poll answer: a status document, or the finished CallToolResult itself. Idempotent.
   * Throws DetachedError when the call belongs to another agent's scope.
   */
  async poll(view: AgentView, callId: string): Promise<{ doc?: JsonObject; result?: CallToolResult }> {
    const e = this.live(callId);
    if (e) {
      this.checkScope(view, e.entry.server, e.entry.wire, e.entry.namespaced, e.owner);
      if (e.status === "cancelled") return { doc: cancelled(callId, e.entry.namespaced, e.statusMessage) };
      const out = e.outcome;
      if (!out) return { doc: pending(callId, e.entry.namespaced, Date.now() - e.started, e.status, e.statusMessage) };
      return "result" in out ? { result: out.result } : { doc: failed(callId, e.entry.namespaced, out.error, (e.finished ?? e.updated) - e.started) };
    }
    let rec: DetachedRecord | undefined;
    try {
      rec = await this.record(callId);
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
      case "cancelled":
        return { doc: cancelled(callId, rec.namespaced, rec.statusMessage) };
      case "pending":
        break;
    }
    if (await this.runsElsewhere(rec)) return { doc: pending(callId, rec.namespaced, Date.now() - rec.started, "working", rec.statusMessage) };
    return {
      doc: unknown(
        callId,
        "The gateway running this call stopped before it finished, so its outcome is unknown. It was not retried; check the downstream's state before calling again.",
      ),
    };
  }

  // ---- tasks/get, tasks/result, tasks/list, tasks/cancel (TaskSource) ---------------------------

  async task(view: AgentView, taskId: string): Promise<Task | undefined> {
    const e = this.live(taskId);
    if (e) return this.mine(view, e.entry.server, e.entry.wire, e.entry.namespaced, e.owner) ? toTask(stateOf(e), Date.now()) : undefined;
    const rec = await this.record(taskId).catch(() => undefined);
    if (!rec || !this.mine(view, rec.server, rec.tool, rec.namespaced, rec.agent)) return undefined;
    return toTask(recordState(rec, await this.runsElsewhere(rec), { ttl: this.deps.retentionMs() }), Date.now());
  }

  async result(view: AgentView, taskId: string): Promise<Result> {
    const e = this.live(taskId);
    if (e) {
      if (!this.mine(view, e.entry.server, e.entry.wire, e.entry.namespaced, e.owner)) throw new McpError(ErrorCode.InvalidParams, TASK_NOT_FOUND);
      if (e.status === "cancelled") throw new McpError(ErrorCode.InvalidParams, "the task was cancelled before it finished, so it has no result");
      const out = e.outcome;
      if (!out) throw new McpError(ErrorCode.InvalidRequest, "the task has not finished yet");
      if ("result" in out) return out.result;
      if (out.rpcError) throw new McpError(out.rpcError.code, out.rpcError.message, out.rpcError.data);
      return errorResult(out.error);
    }
    const rec = await this.record(taskId).catch(() => undefined);
    if (!rec || !this.mine(view, rec.server, rec.tool, rec.namespaced, rec.agent)) throw new McpError(ErrorCode.InvalidParams, TASK_NOT_FOUND);
    const answer = recordResult(rec, await this.runsElsewhere(rec));
    if (!answer) throw new McpError(ErrorCode.InvalidRequest, "the task has not finished yet");
    if ("error" in answer) throw answer.error;
    return answer.result;
  }

  async list(view: AgentView, cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const tasks = new Map<string, Task>();
    const now = Date.now();
    for (const e of [...this.calls.values()]) {
      if (!this.live(e.callId)) continue;
      if (this.mine(view, e.entry.server, e.entry.wire, e.entry.namespaced, e.owner)) tasks.set(e.callId, toTask(stateOf(e), now));
    }
    const journal = await this.deps.journal().catch(() => undefined);
    const records = (await journal?.list(view.owner).catch(() => [])) ?? [];
    for (const rec of records) {
      if (tasks.has(rec.callId) || !this.mine(view, rec.server, rec.tool, rec.namespaced, rec.agent)) continue;
      tasks.set(rec.callId, toTask(recordState(rec, await this.runsElsewhere(rec), { ttl: this.deps.retentionMs() }), now));
    }
    const all = [...tasks.values()].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.taskId < b.taskId ? -1 : 1));
    let start = 0;
    if (cursor !== undefined) {
      start = all.findIndex((t) => t.taskId === cursor);
      if (start < 0) throw new McpError(ErrorCode.InvalidParams, "tasks/list: invalid or expired cursor");
    }
    const next = all[start + LIST_PAGE];
    return { tasks: all.slice(start, start + LIST_PAGE), ...(next ? { nextCursor: next.taskId } : {}) };
  }

  async cancel(view: AgentView, taskId: string, reason: string): Promise<boolean> {
    const e = this.live(taskId);
    if (!e || !this.mine(view, e.entry.server, e.entry.wire, e.entry.namespaced, e.owner) || isTerminal(e.status)) return false;
    await this.cancelEntry(e, reason);
    return true;
  }

  /** Stops a running call: the downstream is told (tasks/cancel or notifications/cancelled); the record says cancelled. */
  private async cancelEntry(e: Entry, reason: string): Promise<void> {
    if (isTerminal(e.status)) return;
    e.cancelled = true;
    e.status = "cancelled";
    e.statusMessage = reason;
    e.finished = Date.now();
    e.updated = e.finished;
    e.controller.abort(new Error(reason));
    this.announce(e);
    e.peer = undefined;
    wake(e);
    this.trimFinished();
    await this.journal({ ...this.base(e), state: "cancelled", finished: e.finished });
  }

  /** Cancels every running call (shutdown). Their journal entries stay pending → unknown later. */
  cancelAll(): void {
    for (const e of this.calls.values()) if (!isTerminal(e.status)) e.controller.abort(new Error("gateway shutting down"));
  }

  // ---- records --------------------------------------------------------------------------------

  /** The in-memory entry, unless its ttl is over (then it is forgotten). */
  private live(callId: string): Entry | undefined {
    const e = this.calls.get(callId);
    if (!e) return undefined;
    if (isTerminal(e.status) && e.finished !== undefined && Math.max(e.started + e.ttl, e.finished + FINISHED_GRACE_MS) <= Date.now()) {
      this.calls.delete(callId);
      return undefined;
    }
    return e;
  }

  private async record(callId: string): Promise<DetachedRecord | undefined> {
    const journal = await this.deps.journal();
    return journal?.get(callId);
  }

  /** A pending record whose owner is another live gateway (sharing the data dir). */
  /**
   * Whether another gateway process (or, on a shared store, another replica) runs this pending
   * call and is alive: it will journal the outcome. By pid on the files, by heartbeat in PostgreSQL.
   */
  private async runsElsewhere(rec: DetachedRecord): Promise<boolean> {
    if (rec.state !== "pending") return false;
    const journal = await this.deps.journal().catch(() => undefined);
    if (journal) return journal.ownerRunsElsewhere(rec.owner, this.instance).catch(() => false);
    return rec.owner.pid !== process.pid && processAlive(rec.owner.pid);
  }

  private mine(view: AgentView, server: string, wire: string, namespaced: string, owner: string): boolean {
    return allowedFor(view, server, wire, namespaced, owner);
  }

  private checkScope(view: AgentView, server: string, wire: string, namespaced: string, owner: string): void {
    if (!allowedFor(view, server, wire, namespaced, owner)) {
      throw new DetachedError(`detached call for ${namespaced} is out of scope for this agent`);
    }
  }

  private base(e: Entry) {
    return {
      callId: e.callId,
      server: e.entry.server,
      tool: e.entry.wire,
      namespaced: e.entry.namespaced,
      agent: e.owner,
      started: e.started,
      owner: { pid: process.pid, instance: this.instance },
      origin: e.origin,
      ttl: e.ttl,
      pollInterval: e.pollInterval,
      updated: e.updated,
      ...(e.statusMessage !== undefined ? { statusMessage: e.statusMessage } : {}),
      ...(e.downstreamTask !== undefined ? { downstreamTask: e.downstreamTask } : {}),
    };
  }

  private pendingRecord(e: Entry): DetachedRecord {
    return { ...this.base(e), state: "pending" };
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
    // Bounded memory: the vault journal keeps the full history for each record's ttl.
    let finished = 0;
    for (const e of this.calls.values()) if (isTerminal(e.status)) finished++;
    for (const [id, e] of this.calls) {
      if (finished <= MAX_FINISHED_IN_MEMORY) break;
      if (!isTerminal(e.status)) continue;
      this.calls.delete(id);
      finished--;
    }
  }
}

function stateOf(e: Entry): TaskState {
  return { callId: e.callId, started: e.started, updated: e.updated, ttl: e.ttl, pollInterval: e.pollInterval, status: e.status, statusMessage: e.statusMessage };
}

function wake(e: Entry): void {
  for (const l of [...e.listeners]) l();
}

/** Resolves at the entry's next status change or end, after `ms`, or when `signal` aborts. */
function changed(e: Entry, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      e.listeners.delete(done);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    e.listeners.add(done);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** What the door would have answered for a call that did not end with a result. */
function failureText(end: Exclude<CallOutcome, { kind: "result" }>, namespaced: string): string {
  switch (end.kind) {
    case "failed":
      return downstreamFailure(namespaced, end.error);
    case "not_sent":
    case "not_found":
    case "accepted":
    case "task":
      return JSON.stringify(end.document);
    default:
      return end.message;
  }
}

/** A mounted call's URL-elicitation-required error is a protocol error, and so is its task's result. */
function rpcErrorOf(end: CallOutcome, via: CallContext["via"]): RpcErrorRecord | undefined {
  if (end.kind !== "failed" || via !== "mount") return undefined;
  const err = end.error;
  if (!(err instanceof McpError) || err.code !== ErrorCode.UrlElicitationRequired) return undefined;
  return { code: err.code, message: bareMessage(err), ...(err.data !== undefined ? { data: err.data } : {}) };
}

function accepted(e: Entry, view: AgentView, outlived = false): JsonObject {
  const poll = advertisedName("poll_result", view.naming);
  return {
    status: "accepted",
    callId: e.callId,
    server: e.entry.server,
    tool: e.entry.tool,
    downstream: e.entry.wire,
    namespaced: e.entry.namespaced,
    timeoutMs: e.timeoutMs,
    ...(e.statusMessage !== undefined ? { statusMessage: e.statusMessage } : {}),
    nextAction: outlived
      ? `${e.entry.namespaced} runs as a task and was still running when this call stopped waiting; it goes on in the background. Call ${poll} with this callId until it is no longer pending.`
      : `The call is running in the background. Call ${poll} with this callId until it is no longer pending.`,
  };
}

function pending(callId: string, namespaced: string, elapsedMs: number, status: TaskStatus, statusMessage?: string): JsonObject {
  return {
    status: "pending",
    callId,
    namespaced,
    elapsedMs,
    ...(statusMessage !== undefined ? { statusMessage } : {}),
    hint: status === "input_required" ? "waiting for an answer from the client (an elicitation or sampling request it was sent); poll again after a short delay" : "still running; poll again after a short delay",
  };
}

function failed(callId: string, namespaced: string, error: string, elapsedMs: number): JsonObject {
  return { status: "failed", callId, namespaced, error, elapsedMs };
}

function cancelled(callId: string, namespaced: string, reason?: string): JsonObject {
  return { status: "cancelled", callId, namespaced, ...(reason !== undefined ? { reason } : {}) };
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
