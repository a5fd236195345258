// Tasks a downstream asks mcphub, its client, to run: a task-augmented sampling/createMessage or
// elicitation/create (server-everything's trigger-*-async tools). mcphub is the receiver: it
// answers at once with a task of its own (a 128-bit id minted per connection), forwards the
// request to the session that owns it (the router decides which, and how), and answers the
// downstream's tasks/get, tasks/result, tasks/list and tasks/cancel for that connection from
// here. Another connection's id, like an unknown one, is "not found". Bounded: a ttl at most
// call_timeout, at most MAX_TASKS_PER_CONNECTION kept per connection, and a session's tasks go
// when the session ends.
import { randomBytes } from "node:crypto";
import { ErrorCode, McpError, RELATED_TASK_META_KEY, type Task } from "@modelcontextprotocol/sdk/types.js";
import { errorText } from "../../util/errors.js";
import { toWire, WireError } from "./errors.js";
import type { UpstreamPeer } from "./peer.js";

export const CLIENT_TASK_METHODS = ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"] as const;
export type ClientTaskMethod = (typeof CLIENT_TASK_METHODS)[number];

export function isClientTaskMethod(method: string): method is ClientTaskMethod {
  return (CLIENT_TASK_METHODS as readonly string[]).includes(method);
}

/** Tasks kept per downstream connection (running and finished ones still within their ttl). */
export const MAX_TASKS_PER_CONNECTION = 64;
/** Suggested to the downstream for polling our tasks. */
export const CLIENT_TASK_POLL_MS = 500;
/** A finished task stays at least this long, whatever its ttl. */
const FINISHED_GRACE_MS = 60_000;
const PAGE_SIZE = 50;

interface Entry {
  task: Task;
  peer: UpstreamPeer;
  controller: AbortController;
  outcome?: { result: Record<string, unknown> } | { error: WireError };
  waiters: Set<() => void>;
  expiry?: NodeJS.Timeout;
}

/** One step of the forwarded request's own progress, when the session runs it as a task too. */
export type StatusUpdate = Pick<Task, "status"> & { statusMessage?: string };

export class ClientTasks {
  private readonly byConn = new Map<string, Map<string, Entry>>();

  constructor(private readonly maxTtlMs: () => number) {}

  /**
   * Creates a task on connection `key` for `peer` and starts `work` (the forwarded request); the
   * answer for the downstream is the task. `work` gets an abort signal (tasks/cancel, session end)
   * and a way to report the status of the session's own task when it runs one.
   */
  create(
    key: string,
    peer: UpstreamPeer,
    requestedTtl: number | undefined,
    work: (signal: AbortSignal, status: (s: StatusUpdate) => void) => Promise<Record<string, unknown>>,
  ): Task {
    const mine = this.connection(key);
    this.makeRoom(mine);
    const now = new Date().toISOString();
    const max = this.maxTtlMs();
    const ttl = requestedTtl !== undefined && Number.isFinite(requestedTtl) ? Math.min(Math.max(1000, Math.floor(requestedTtl)), max) : max;
    const task: Task = { taskId: randomBytes(16).toString("hex"), status: "working", ttl, createdAt: now, lastUpdatedAt: now, pollInterval: CLIENT_TASK_POLL_MS };
    const entry: Entry = { task, peer, controller: new AbortController(), waiters: new Set() };
    mine.set(task.taskId, entry);
    this.schedule(key, entry, Date.parse(now) + ttl);
    void work(entry.controller.signal, (s) => this.setStatus(entry, s.status, s.statusMessage)).then(
      (result) => this.finish(entry, "completed", { result }),
      (err: unknown) => this.finish(entry, "failed", { error: asWire(err) }, errorText(err)),
    );
    return { ...task };
  }

  /** A downstream's tasks/* request about its tasks on connection `key`. */
  async handle(key: string, method: ClientTaskMethod, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Record<string, unknown>> {
    if (method === "tasks/list") return this.list(key, typeof params?.cursor === "string" ? params.cursor : undefined);
    const entry = this.find(key, params?.taskId);
    switch (method) {
      case "tasks/get":
        return { ...entry.task };
      case "tasks/cancel":
        return this.cancel(entry);
      case "tasks/result":
        return this.result(entry, signal);
    }
  }

  /** The session ended: its tasks stop (their forwarded requests are cancelled) and are dropped. */
  releasePeer(peer: UpstreamPeer): void {
    for (const [key, mine] of this.byConn) {
      for (const [id, entry] of mine) {
        if (entry.peer !== peer) continue;
        entry.controller.abort(new WireError(ErrorCode.ConnectionClosed, "the upstream session ended"));
        this.drop(key, id, entry);
      }
    }
  }

  /** Tasks kept in all (for stats: none may stay behind a session). */
  get size(): number {
    let n = 0;
    for (const mine of this.byConn.values()) n += mine.size;
    return n;
  }

  // ---- the four requests ------------------------------------------------------------------------

  private list(key: string, cursor: string | undefined): Record<string, unknown> {
    const all = [...(this.byConn.get(key)?.values() ?? [])].map((e) => e.task);
    let start = 0;
    if (cursor !== undefined) {
      start = all.findIndex((t) => t.taskId === cursor);
      if (start < 0) throw new WireError(ErrorCode.InvalidParams, "tasks/list: invalid cursor");
    }
    const page = all.slice(start, start + PAGE_SIZE).map((t) => ({ ...t }));
    const next = all[start + PAGE_SIZE];
    return { tasks: page, ...(next ? { nextCursor: next.taskId } : {}) };
  }

  private cancel(entry: Entry): Record<string, unknown> {
    if (isTerminal(entry.task.status)) {
      throw new WireError(ErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${entry.task.status}'`);
    }
    entry.controller.abort(new WireError(ErrorCode.RequestTimeout, "the server cancelled the task"));
    this.finish(entry, "cancelled", { error: new WireError(ErrorCode.InvalidRequest, "the task was cancelled") }, "cancelled by the server");
    return { ...entry.task };
  }

  private async result(entry: Entry, signal: AbortSignal): Promise<Record<string, unknown>> {
    while (!entry.outcome) {
      if (signal.aborted) throw new WireError(ErrorCode.RequestTimeout, "tasks/result: cancelled by the server");
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener("abort", done);
          entry.waiters.delete(done);
          resolve();
        };
        entry.waiters.add(done);
        signal.addEventListener("abort", done, { once: true });
      });
    }
    const outcome = entry.outcome;
    if ("error" in outcome) throw outcome.error;
    const meta = (outcome.result._meta as Record<string, unknown> | undefined) ?? {};
    return { ...outcome.result, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId: entry.task.taskId } } };
  }

  // ---- bookkeeping ------------------------------------------------------------------------------

  private find(key: string, taskId: unknown): Entry {
    const entry = typeof taskId === "string" ? this.byConn.get(key)?.get(taskId) : undefined;
    if (!entry) throw new WireError(ErrorCode.InvalidParams, "Failed to retrieve task: Task not found");
    return entry;
  }

  private setStatus(entry: Entry, status: Task["status"], statusMessage?: string): void {
    if (isTerminal(entry.task.status) || isTerminal(status)) return;
    const { statusMessage: _old, ...rest } = entry.task;
    entry.task = { ...rest, status, lastUpdatedAt: new Date().toISOString(), ...(statusMessage !== undefined ? { statusMessage } : {}) };
  }

  private finish(entry: Entry, status: "completed" | "failed" | "cancelled", outcome: NonNullable<Entry["outcome"]>, statusMessage?: string): void {
    if (isTerminal(entry.task.status)) return;
    const { statusMessage: _old, ...rest } = entry.task;
    entry.task = { ...rest, status, lastUpdatedAt: new Date().toISOString(), ...(statusMessage !== undefined ? { statusMessage } : {}) };
    entry.outcome = outcome;
    for (const w of [...entry.waiters]) w();
    // A task that finishes late stays a little while, so its result can still be fetched.
    const key = this.keyOf(entry);
    if (key !== undefined) this.schedule(key, entry, Math.max(Date.parse(entry.task.createdAt) + (entry.task.ttl ?? 0), Date.now() + FINISHED_GRACE_MS));
  }

  private schedule(key: string, entry: Entry, at: number): void {
    clearTimeout(entry.expiry);
    entry.expiry = setTimeout(() => {
      // A running task outlives its ttl until it finishes (finish() schedules it again).
      if (!isTerminal(entry.task.status)) return;
      this.drop(key, entry.task.taskId, entry);
    }, Math.max(0, at - Date.now()));
    entry.expiry.unref();
  }

  /** Room for one more: the oldest finished task goes; with none finished, the request is refused. */
  private makeRoom(mine: Map<string, Entry>): void {
    if (mine.size < MAX_TASKS_PER_CONNECTION) return;
    for (const [id, entry] of mine) {
      if (!isTerminal(entry.task.status)) continue;
      clearTimeout(entry.expiry);
      mine.delete(id);
      return;
    }
    throw new WireError(ErrorCode.InternalError, `mcphub already runs ${MAX_TASKS_PER_CONNECTION} tasks for this server; wait for one to finish`);
  }

  private connection(key: string): Map<string, Entry> {
    let mine = this.byConn.get(key);
    if (!mine) {
      mine = new Map();
      this.byConn.set(key, mine);
    }
    return mine;
  }

  private keyOf(entry: Entry): string | undefined {
    for (const [key, mine] of this.byConn) if (mine.get(entry.task.taskId) === entry) return key;
    return undefined;
  }

  private drop(key: string, id: string, entry: Entry): void {
    clearTimeout(entry.expiry);
    const mine = this.byConn.get(key);
    if (mine?.get(id) !== entry) return;
    mine.delete(id);
    if (mine.size === 0) this.byConn.delete(key);
    for (const w of [...entry.waiters]) w();
  }
}

function isTerminal(status: Task["status"]): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

function asWire(err: unknown): WireError {
  if (err instanceof WireError || err instanceof McpError) return toWire(err);
  return new WireError(ErrorCode.InternalError, errorText(err));
}
