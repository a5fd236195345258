// The call context: one typed object that carries a tool call through the pipeline (pipeline.ts).
// It holds what the call was asked with (the target, the arguments, the agent's view, the
// calling session, the requested timeout, the abort signal), the narrow ports the stages use
// instead of the hub (CallPorts), and what the stages found on the way (the entry, the guard's
// gate, timings, byte counts). A stage reads the context, may write its own findings into it,
// and returns an outcome to stop the call or undefined to let the next stage run.
import type { CallToolResult, Task } from "@modelcontextprotocol/sdk/types.js";
import type { Catalog } from "../../catalog/catalog.js";
import type { CatalogEntry, JsonObject } from "../../catalog/types.js";
import type { Config } from "../../config/schema.js";
import type { Guard, Gate, RefusalReason } from "../../guard/index.js";
import type { CallRecord, CallTrace, Metrics } from "../../telemetry/index.js";
import type { Logger } from "../../util/log.js";
import type { ResultStore } from "../../vault/results.js";
import type { Lease, Limiter, LimitRefusal } from "../limits/index.js";
import type { Caller } from "../passthrough/index.js";
import type { AgentView } from "../view.js";

export type Via = CallRecord["via"];

export type Progress = (p: { progress: number; total?: number; message?: string }) => void;

/** What the call names: a published (mounted) tool name, or a management-tool reference. */
export type CallTarget = { kind: "published"; name: string } | { kind: "reference"; server?: string | undefined; tool: string };

/** The limits a downstream call runs under (see dispatch.ts: callLimits). */
export type CallLimits = { timeoutMs: number } | { idleTimeoutMs: number; maxTotalMs: number };

/** Finding a tool and making sure its server can answer (locate.ts). */
export interface ServerAccess {
  /** The config in force (a reload replaces it). */
  config(): Config;
  catalog: Pick<Catalog, "listingOf" | "hasServer" | "index">;
  /** Starts the server when idle and waits (bounded) until it has a listing. */
  ensureListing(server: string, signal?: AbortSignal): Promise<void>;
  /** Starts the server when needed and waits (bounded) until its listing is live; undefined when it is live already. */
  ensureLive(server: string, signal?: AbortSignal): Promise<void> | undefined;
  /** Whether the server is up with a live listing (what ensureLive answers undefined for), without starting anything. */
  isLive(server: string): boolean;
  /** Waits (bounded) for in-scope servers whose tools are not known yet; true when any became ready. */
  waitForPending(view: AgentView, signal?: AbortSignal): Promise<boolean>;
  /** The CLI command an operator runs (`mcphub [--config X] ARGS`), for the fixes errors name. */
  command(args: readonly string[]): string;
}

/** A downstream's task for a call (its own id, which never goes upstream), at a status change. */
export type DownstreamTaskUpdate = Pick<Task, "taskId" | "status" | "statusMessage" | "pollInterval">;

/** Sends the call to its downstream on the caller's route (the pass-through and the supervisor). */
export type Send = (
  caller: Caller | undefined,
  entry: CatalogEntry,
  args: Record<string, unknown>,
  opts: {
    limits: CallLimits;
    signal?: AbortSignal | undefined;
    onProgress?: Progress | undefined;
    /** Ask the downstream to run it as a task when the tool allows one (a "required" tool always is). */
    task?: { ttl?: number } | undefined;
    /** The downstream's task, as created and at each status change. */
    onTask?: ((task: DownstreamTaskUpdate) => void) | undefined;
    /** The call's trace (the downstream call is a span of it), when tracing is on. */
    trace?: CallTrace | undefined;
  },
) => Promise<CallToolResult>;

/** Where results over the response budget are stored (the vault), when it could be opened. */
export interface ResultsAccess {
  store(): Promise<ResultStore | undefined>;
  /** Why the vault could not be opened, if it could not. */
  problem(): Promise<string | undefined>;
}

/** Detached calls: their limits, and the start of one in the background (detached.ts). */
export interface DetachedCalls {
  /** Why one more detached call of `owner` may not start now; undefined when it may. */
  refusal(owner: string): string | undefined;
  /**
   * Starts the located, checked and confirmed call in the background: the accepted document and
   * the task that stands for it (`detach` and `task` mode), or why it may not start now.
   */
  start(ctx: CallContext): Promise<{ accepted: JsonObject; task: Task } | { busy: string }>;
  /**
   * A call that must run as a task downstream, made by a caller that waits (`wait` mode): run in
   * the background, waited for up to `waitMs` (reset by each status change unless `hard`). The
   * result when it finished in time, else the accepted document (the call keeps running and is
   * polled like a detached one); `busy` when no more background calls may start.
   */
  runAndWait(ctx: CallContext, waitMs: number, hard: boolean): Promise<{ outcome: CallOutcome } | { accepted: JsonObject } | { busy: string }>;
}

/** Everything the stages need from the gateway, and nothing more: built once per hub. */
export interface CallPorts {
  servers: ServerAccess;
  guard: Pick<Guard, "check" | "confirm">;
  send: Send;
  results: ResultsAccess;
  telemetry: { record(rec: CallRecord): void };
  detached: DetachedCalls;
  log: Logger;
  /** Call limits and the ledger of calls in flight (the limit stage). */
  limits: Pick<Limiter, "acquire">;
  /** Where the record stage counts the call (NO_METRICS where no /metrics is served). */
  metrics: Metrics;
}

/** How a call ended, for the door that made it to render (session.ts, tools/call-tool.ts). */
export type CallOutcome =
  /** The downstream answered: its result as is, or the receipt of the stored result. */
  | { kind: "result"; result: CallToolResult }
  /** A detached call was started (or a waiting call outlived its wait and goes on in the background). */
  | { kind: "accepted"; document: JsonObject }
  /** A task-augmented call was started: the task stands for it (tasks/get, tasks/result, poll_result). */
  | { kind: "task"; task: Task; document: JsonObject }
  /** No such tool, server or listing: a document the model can act on. */
  | { kind: "not_found"; document: JsonObject }
  /** The name cannot be resolved as given (malformed, or refused as a conflicting bare name). */
  | { kind: "bad_reference"; message: string; conflict?: true }
  /** The tool exists but not in this agent's scope. */
  | { kind: "out_of_scope"; message: string }
  /** Nothing was sent: invalid arguments, a guardrail refusal or a declined confirmation. */
  | { kind: "not_sent"; reason: "invalid_arguments" | RefusalReason; document: JsonObject }
  /** The call may not start now (detached-call limits). */
  | { kind: "busy"; message: string }
  /** A call limit refused it (limit stage): the limit's config key and when to retry. */
  | { kind: "limited"; message: string; refusal: LimitRefusal }
  /** The downstream call failed (timeout, lost connection, ...): its outcome may be unknown. */
  | { kind: "failed"; error: unknown };

export interface CallRequest {
  ports: CallPorts;
  view: AgentView;
  target: CallTarget;
  args: Record<string, unknown>;
  via: Via;
  /**
   * `wait` answers with the result; `detach` starts the call in the background and answers with
   * its callId; `task` does the same for a task-augmented tools/call, answered with the task.
   */
  mode: "wait" | "detach" | "task";
  /** `task` mode: the ttl the client asked for (mcphub may grant less). */
  taskTtl?: number | undefined;
  /** Set by the registry on the calls it runs in the background (detached.ts). */
  background?: BackgroundRun | undefined;
  /** The upstream session the call is made for: server→client requests it causes go there. */
  caller?: Caller | undefined;
  signal?: AbortSignal | undefined;
  onProgress?: Progress | undefined;
  /** Requested per-call timeout; capped by call_timeout. */
  timeoutMs?: number | undefined;
  /** The upstream request's trace, when tracing is on: the stages and the downstream call are spans of it. */
  trace?: CallTrace | undefined;
}

/** How the registry runs a call in the background: its downstream task, if it runs as one. */
export interface BackgroundRun {
  /** Ask the downstream for a task when the tool allows one (it is a detached call or a task). */
  task?: { ttl?: number } | undefined;
  /** The downstream's task at each status change (mirrored onto the registry's record). */
  onTask(task: DownstreamTaskUpdate): void;
}

export interface CallContext extends CallRequest {
  /** locate: the tool the target names, before the scope check. */
  found?: CatalogEntry;
  /** locate: why the target is outside the agent's scope (the scope stage refuses it). */
  outside?: string;
  /** scope: the entry the agent may call. Every stage after scope has it. */
  entry?: CatalogEntry;
  /** guard: the gate that let the call through (its confirmation rule, if any). */
  gate?: Extract<Gate, { ok: true }>;
  /** JSON size of the arguments (telemetry). */
  argsBytes: number;
  /** dispatch: what the downstream answered, and how long it took (ms). */
  result?: CallToolResult;
  durationMs: number;
  /** finalize: the result's size, and the size of what the caller got back (result or receipt). */
  resultBytes: number;
  returnedBytes: number;
  /** finalize: the result was over the budget and the shared store could not be reached to keep it. */
  storeFailed?: true | undefined;
  /** When the call entered the pipeline (performance.now()), and how long it waited for a server to start, the user or a queue (ms). */
  started: number;
  waitMs: number;
  /** limit: the call's place among the calls in flight, given back by the record stage. */
  lease?: Lease | undefined;
  /** dispatch: the call ran in the background registry, which records it itself. */
  backgrounded?: true | undefined;
}

/** A stage: reads (and may add to) the context; an outcome stops the call. */
export type Stage = (ctx: CallContext) => CallOutcome | undefined | Promise<CallOutcome | undefined>;

/** The entry of a call past the scope stage (a stage that runs earlier has none). */
export function entryOf(ctx: CallContext): CatalogEntry {
  if (!ctx.entry) throw new Error("internal error: a call stage ran before the call was located and scoped");
  return ctx.entry;
}
