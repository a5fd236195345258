// Tool calls a downstream runs as MCP tasks (spec 2025-11-25, "Tasks"): when a call goes out
// task-augmented, and following the task to its result. The server answers `tools/call {task}`
// at once with a CreateTaskResult; the follower then polls `tasks/get` at the task's poll interval
// (woken early by `notifications/tasks/status`), opens `tasks/result` once the task needs input
// (the server delivers its queued elicitation or sampling requests on that request) or is
// finished, keeps polling while that blocking request is open so status keeps flowing, and
// returns what `tasks/result` returned. A call that is cancelled or runs out of time sends
// `tasks/cancel`; nothing is ever re-sent. Downstream task ids never leave this layer except
// through `onTask` (the gateway routes by them): the result's related-task `_meta` is removed.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  GetTaskResultSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type ServerCapabilities,
  type Task,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { CallToolResultFastSchema } from "./fast-messages.js";

export type TaskSupport = "required" | "optional" | "forbidden";

/** Poll intervals a server suggests are kept within these bounds (a 0 would spin, an hour would stall). */
export const MIN_POLL_MS = 100;
export const MAX_POLL_MS = 5_000;
export const DEFAULT_POLL_MS = 1_000;
/** How long a best-effort tasks/cancel may take after the call itself is over. */
export const CANCEL_TIMEOUT_MS = 5_000;

/** A tool's `execution.taskSupport`; absent (or anything unknown) means "forbidden", as the spec says. */
export function taskSupportOf(tool: Pick<Tool, "execution"> | undefined): TaskSupport {
  const v = tool?.execution?.taskSupport;
  return v === "required" || v === "optional" ? v : "forbidden";
}

/** Whether the server accepts task-augmented tools/call at all. */
export function serverRunsToolTasks(caps: ServerCapabilities | undefined): boolean {
  return caps?.tasks?.requests?.tools?.call !== undefined;
}

/**
 * A call goes downstream as a task when the server takes task-augmented tools/call and the tool
 * requires it, or allows it and the caller asked for one. A server that does not declare the
 * capability never gets one, whatever its tools say (the spec's rule 1).
 */
export function goesAsTask(caps: ServerCapabilities | undefined, support: TaskSupport, asked: boolean): boolean {
  if (!serverRunsToolTasks(caps)) return false;
  return support === "required" || (support === "optional" && asked);
}

export function isTerminal(status: Task["status"]): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** Who wants the status notifications of one session's tasks, by task id. */
export class TaskWatchers {
  private readonly byId = new Map<string, Set<(task: Task) => void>>();

  watch(taskId: string, listener: (task: Task) => void): () => void {
    let set = this.byId.get(taskId);
    if (!set) {
      set = new Set();
      this.byId.set(taskId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byId.get(taskId) === set) this.byId.delete(taskId);
    };
  }

  notify(task: Task): void {
    for (const l of [...(this.byId.get(task.taskId) ?? [])]) l(task);
  }

  get size(): number {
    return this.byId.size;
  }
}

/** The answer to a task-augmented tools/call: the task, or (a server that ran it normally) the result. */
const CreatedSchema = z.unknown().transform((value, ctx): { task: Task } | { result: CallToolResult } => {
  if (typeof value === "object" && value !== null && "task" in value) {
    const created = CreateTaskResultSchema.safeParse(value);
    if (created.success) return { task: created.data.task };
    for (const issue of created.error.issues) ctx.addIssue({ ...issue, code: "custom", message: issue.message });
    return z.NEVER;
  }
  return { result: CallToolResultFastSchema.parse(value) };
});

export interface TaskCallOptions {
  /** Requested task lifetime (ms); the server may choose another. */
  ttl?: number;
  /** When the whole task must be over (ms since the epoch); Infinity = no cap. */
  deadline: number;
  /** The cap the deadline stands for (ms), named in the timeout error as the SDK names its own. */
  totalMs?: number;
  /** The bound on each poll's answer (the idle timeout). */
  pollTimeoutMs: number;
  /** The task as created, then every status change (polled or notified). */
  onTask?: (task: Task) => void;
}

/**
 * Calls `name` as a task and follows it to its result. `req` is the call's own request options
 * (signal, progress, timeouts of the creating request). Errors are the SDK's McpErrors (the
 * server's JSON-RPC errors, RequestTimeout for the deadline) so the caller classifies them as it
 * does for an ordinary call; an aborted signal is left for the caller to see.
 */
export async function callAsTask(
  client: Client,
  watchers: TaskWatchers,
  name: string,
  args: Record<string, unknown>,
  req: RequestOptions,
  opts: TaskCallOptions,
): Promise<CallToolResult> {
  const params = { name, arguments: args, task: opts.ttl !== undefined ? { ttl: opts.ttl } : {} };
  const created = await client.request({ method: "tools/call", params }, CreatedSchema, req);
  if ("result" in created) return created.result;
  return new TaskFollower(client, watchers, created.task, req.signal, opts).run();
}

class TaskFollower {
  private task: Task;
  private readonly ctl = new AbortController();
  private wake: (() => void) | undefined;
  private settled = false;

  constructor(
    private readonly client: Client,
    private readonly watchers: TaskWatchers,
    created: Task,
    private readonly outer: AbortSignal | undefined,
    private readonly opts: TaskCallOptions,
  ) {
    this.task = created;
  }

  async run(): Promise<CallToolResult> {
    const id = this.task.taskId;
    const onOuterAbort = () => {
      this.ctl.abort(this.outer?.reason);
      this.wake?.();
    };
    this.outer?.addEventListener("abort", onOuterAbort, { once: true });
    const unwatch = this.watchers.watch(id, (t) => this.update(t));
    this.report(this.task);
    try {
      return await this.follow();
    } finally {
      unwatch();
      this.outer?.removeEventListener("abort", onOuterAbort);
      if (!this.settled && !isTerminal(this.task.status)) this.cancelDownstream();
      this.ctl.abort();
    }
  }

  private async follow(): Promise<CallToolResult> {
    let result: Promise<CallToolResult> | undefined;
    let outcome: { value: CallToolResult } | { error: unknown } | undefined;
    for (;;) {
      if (this.outer?.aborted) throw this.outer.reason ?? new Error("cancelled");
      const status = this.task.status;
      if (status === "cancelled") {
        this.settled = true;
        throw new McpError(ErrorCode.InternalError, `the server cancelled the task running this call${this.task.statusMessage ? ` (${this.task.statusMessage})` : ""}`);
      }
      if (!result && (status === "input_required" || isTerminal(status))) {
        result = this.fetchResult().then(
          (value) => {
            outcome = { value };
            this.wake?.();
            return value;
          },
          (error: unknown) => {
            outcome = { error };
            this.wake?.();
            throw error;
          },
        );
        result.catch(() => undefined);
      }
      if (outcome) {
        this.settled = true;
        if ("value" in outcome) return outcome.value;
        throw outcome.error;
      }
      const remaining = this.opts.deadline - Date.now();
      if (remaining <= 0) throw this.deadlineError();
      // tasks/result is open for a finished task: just wait for it.
      if (result && isTerminal(status)) {
        await this.sleep(remaining);
        continue;
      }
      await this.sleep(Math.min(remaining, pollDelay(this.task.pollInterval)));
      if (outcome || this.outer?.aborted) continue;
      if (this.opts.deadline - Date.now() <= 0) throw this.deadlineError();
      this.update(await this.poll());
    }
  }

  /** Takes a newer status (polled or notified) and reports it when something changed. */
  private update(next: Task): void {
    if (next.taskId !== this.task.taskId || isTerminal(this.task.status)) return;
    const changed = next.status !== this.task.status || next.statusMessage !== this.task.statusMessage;
    this.task = next;
    if (changed) this.report(next);
    this.wake?.();
  }

  private report(task: Task): void {
    try {
      this.opts.onTask?.(task);
    } catch {
      // A listener's failure is not the call's.
    }
  }

  private async poll(): Promise<Task> {
    const timeout = Math.max(1, Math.min(this.opts.pollTimeoutMs, this.opts.deadline - Date.now()));
    const { signal, release } = this.requestSignal();
    try {
      return await this.client.request({ method: "tasks/get", params: { taskId: this.task.taskId } }, GetTaskResultSchema, { signal, timeout });
    } finally {
      release();
    }
  }

  private async fetchResult(): Promise<CallToolResult> {
    const remaining = this.opts.deadline - Date.now();
    const { signal, release } = this.requestSignal();
    // tasks/result blocks until the task is finished: only the call's own deadline bounds it.
    const req: RequestOptions = { signal, timeout: Number.isFinite(remaining) ? Math.max(1, remaining) : 2 ** 31 - 1 };
    try {
      const result = await this.client.request({ method: "tasks/result", params: { taskId: this.task.taskId } }, CallToolResultFastSchema, req);
      return withoutRelatedTask(result);
    } finally {
      release();
    }
  }

  /**
   * A signal of its own for one request, aborted with the follower's. The SDK never removes the
   * listener it adds to a request's signal, so one shared signal would gather one per poll.
   */
  private requestSignal(): { signal: AbortSignal; release: () => void } {
    const child = new AbortController();
    const onAbort = () => child.abort(this.ctl.signal.reason);
    if (this.ctl.signal.aborted) onAbort();
    else this.ctl.signal.addEventListener("abort", onAbort, { once: true });
    return { signal: child.signal, release: () => this.ctl.signal.removeEventListener("abort", onAbort) };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
      this.wake = done;
    });
  }

  private deadlineError(): McpError {
    return new McpError(ErrorCode.RequestTimeout, "the task ran past its deadline", this.opts.totalMs !== undefined ? { maxTotalTimeout: this.opts.totalMs } : undefined);
  }

  /** Best effort: the downstream is told to stop; its answer is not waited for by the caller. */
  private cancelDownstream(): void {
    void this.client
      .request({ method: "tasks/cancel", params: { taskId: this.task.taskId } }, CancelTaskResultSchema, { timeout: CANCEL_TIMEOUT_MS })
      .then(
        (t) => this.report(t),
        () => undefined,
      );
  }
}

function pollDelay(suggested: number | undefined): number {
  if (suggested === undefined || !Number.isFinite(suggested)) return DEFAULT_POLL_MS;
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, suggested));
}

/** The result without the downstream's related-task `_meta` (its task id stays inside mcphub). */
export function withoutRelatedTask(result: CallToolResult): CallToolResult {
  const meta = result._meta;
  if (!meta || !(RELATED_TASK_META_KEY in meta)) return result;
  const { [RELATED_TASK_META_KEY]: _dropped, ...rest } = meta;
  const { _meta: _old, ...body } = result;
  return Object.keys(rest).length > 0 ? { ...body, _meta: rest } : body;
}
