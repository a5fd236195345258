// What an upstream MCP task looks like, from the one record that backs it (a running call in the
// detached registry, or its journal record): the spec's Task object, its status as the spec names
// it, the result tasks/result returns, and the bounds mcphub sets (ttl, poll interval). Pure: no
// I/O, no clock of its own, so every rule is testable on its own.
import { ErrorCode, McpError, type CallToolResult, type Task } from "@modelcontextprotocol/sdk/types.js";
import type { DetachedRecord } from "../../vault/detached.js";

export type TaskStatus = Task["status"];

/**
 * The longest interval suggested to requestors between polls (a downstream's own suggestion,
 * clamped to [MIN_TASK_POLL_MS, MAX_TASK_POLL_MS], replaces it).
 */
export const DEFAULT_TASK_POLL_MS = 1_000;
export const MIN_TASK_POLL_MS = 250;
export const MAX_TASK_POLL_MS = 5_000;
/**
 * A running task's suggested interval is a quarter of its age, at least this, at most its
 * ceiling above. Requestors (the SDK's callToolStream, and the SDK's own tasks/result handler,
 * which waits one pollInterval between looks at the store) then learn of a quick task's end
 * within ~100 ms instead of a full second, and of a long one's within a quarter of its runtime,
 * with fewer polls than a fixed interval over a long task. mcphub answers a poll from memory.
 */
export const FIRST_TASK_POLL_MS = 100;
/** The shortest ttl mcphub grants. */
export const MIN_TASK_TTL_MS = 1_000;

/** Why a task whose gateway died has no outcome (status failed; its result is an isError result). */
export const UNKNOWN_OUTCOME =
  "The gateway running this call stopped before it finished, so its outcome is unknown. It was not retried; check the downstream's state before calling again.";

/** The state of a task as the registry knows it. */
export interface TaskState {
  callId: string;
  started: number;
  updated: number;
  ttl: number;
  pollInterval: number;
  status: TaskStatus;
  statusMessage?: string | undefined;
}

export function isTerminal(status: TaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** The spec's Task for a state at time `now`: the callId is the task id. */
export function toTask(s: TaskState, now: number): Task {
  return {
    taskId: s.callId,
    status: s.status,
    ttl: s.ttl,
    createdAt: new Date(s.started).toISOString(),
    lastUpdatedAt: new Date(s.updated).toISOString(),
    pollInterval: suggestedPoll(s, now),
    ...(s.statusMessage !== undefined ? { statusMessage: s.statusMessage } : {}),
  };
}

/**
 * The ttl mcphub grants: the one asked for, within [MIN_TASK_TTL_MS, max]; `max` (the call's
 * timeout plus result_retention, so a finished result keeps at least result_retention) when none
 * was asked for.
 */
export function grantedTtl(requested: number | null | undefined, max: number): number {
  if (requested === undefined || requested === null || !Number.isFinite(requested)) return max;
  return Math.min(max, Math.max(MIN_TASK_TTL_MS, Math.floor(requested)));
}

/** The interval suggested now: a quarter of a running task's age within [FIRST_TASK_POLL_MS, its ceiling]; the ceiling once it is over. */
export function suggestedPoll(s: Pick<TaskState, "started" | "pollInterval" | "status">, now: number): number {
  if (isTerminal(s.status)) return s.pollInterval;
  return Math.min(s.pollInterval, Math.max(FIRST_TASK_POLL_MS, Math.round((now - s.started) / 4)));
}

/** A poll interval within mcphub's bounds (a downstream's suggestion, or the default). */
export function pollIntervalOf(suggested: number | undefined): number {
  if (suggested === undefined || !Number.isFinite(suggested)) return DEFAULT_TASK_POLL_MS;
  return Math.min(MAX_TASK_POLL_MS, Math.max(MIN_TASK_POLL_MS, Math.round(suggested)));
}

/**
 * How a journal record reads as a task. `running`: its owner process still runs it (this one,
 * or another gateway sharing the data dir). A pending record nobody runs any more is failed,
 * with the reason: mcphub never re-runs it.
 */
export function recordState(rec: DetachedRecord, running: boolean, defaults: { ttl: number }): TaskState {
  const base = {
    callId: rec.callId,
    started: rec.started,
    ttl: rec.ttl ?? defaults.ttl,
    pollInterval: pollIntervalOf(rec.pollInterval),
  };
  switch (rec.state) {
    case "pending":
      return running
        ? { ...base, updated: rec.updated ?? rec.started, status: "working", statusMessage: rec.statusMessage }
        : { ...base, updated: rec.updated ?? rec.started, status: "failed", statusMessage: UNKNOWN_OUTCOME };
    case "done": {
      const isError = resultIsError(rec.resultJson);
      return { ...base, updated: rec.finished, status: isError ? "failed" : "completed", ...(isError ? { statusMessage: "the tool reported an error; tasks/result has it" } : {}) };
    }
    case "failed":
      return { ...base, updated: rec.finished, status: "failed", statusMessage: rec.error };
    case "cancelled":
      return { ...base, updated: rec.finished, status: "cancelled", statusMessage: rec.statusMessage ?? "cancelled by the client" };
  }
}

/**
 * What tasks/result returns for a finished record: exactly what the call would have returned.
 * A result (isError ones included) as stored; a JSON-RPC error as that error; a failure the call
 * would have reported in a result (a lost connection, a timeout, an unknown outcome) as an
 * isError result with its message. Undefined while the record is still running.
 */
export function recordResult(rec: DetachedRecord, running = false): { result: CallToolResult } | { error: McpError } | undefined {
  switch (rec.state) {
    case "pending":
      return running ? undefined : { result: errorResult(UNKNOWN_OUTCOME) };
    case "done":
      return { result: JSON.parse(rec.resultJson) as CallToolResult };
    case "failed":
      return rec.rpcError ? { error: new McpError(rec.rpcError.code, rec.rpcError.message, rec.rpcError.data) } : { result: errorResult(rec.error) };
    case "cancelled":
      return { error: new McpError(ErrorCode.InvalidParams, "the task was cancelled before it finished, so it has no result") };
  }
}

export function errorResult(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

function resultIsError(json: string): boolean {
  // Only the top-level flag matters; a receipt keeps the original's isError.
  try {
    return (JSON.parse(json) as { isError?: unknown }).isError === true;
  } catch {
    return false;
  }
}
