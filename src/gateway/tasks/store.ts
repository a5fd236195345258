// The SDK's TaskStore for one upstream session, over the detached registry (the one record every
// task, detached call and task-run plain call has). The SDK Server's own tasks/get, tasks/result,
// tasks/list and tasks/cancel handlers ask it. Tasks belong to the session's agent, not to the
// transport session: a new session of the same agent (after a restart, or a second harness
// window) sees them, another agent's are "not found" exactly like unknown ids. Tasks are created
// by the gateway's tools/call handler, not through this store.
import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { ErrorCode, McpError, type Request, type RequestId, type Result, type Task } from "@modelcontextprotocol/sdk/types.js";
import type { AgentView } from "../view.js";

/** What the store needs of the registry, for one agent's view. */
export interface TaskSource {
  /** The task, or undefined when unknown, expired, or not this agent's. */
  task(view: AgentView, taskId: string): Promise<Task | undefined>;
  /** The result of a finished task (tasks/result waits for that itself); throws McpError for a JSON-RPC error. */
  result(view: AgentView, taskId: string): Promise<Result>;
  /** One page of the agent's tasks, newest first. */
  list(view: AgentView, cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }>;
  /** Cancels a running task of the agent; false when it is not running here. */
  cancel(view: AgentView, taskId: string, reason: string): Promise<boolean>;
}

export const TASK_NOT_FOUND = "Failed to retrieve task: Task not found";

export class SessionTaskStore implements TaskStore {
  constructor(
    private readonly source: TaskSource,
    /** The session's current view (a reload replaces it). */
    private readonly view: () => AgentView,
  ) {}

  async createTask(_params: CreateTaskOptions, _requestId: RequestId, request: Request): Promise<Task> {
    // Never reached: the gateway's own tools/call handler creates tasks in the registry.
    throw new McpError(ErrorCode.MethodNotFound, `mcphub does not run ${request.method} as a task`);
  }

  async getTask(taskId: string): Promise<Task | null> {
    return (await this.source.task(this.view(), taskId)) ?? null;
  }

  async storeTaskResult(): Promise<void> {
    throw new McpError(ErrorCode.InternalError, "task results are stored by the gateway, not through the task store");
  }

  async getTaskResult(taskId: string): Promise<Result> {
    return this.source.result(this.view(), taskId);
  }

  async updateTaskStatus(taskId: string, status: Task["status"], statusMessage?: string): Promise<void> {
    // The SDK's tasks/cancel handler is the only caller; a client cannot set any other status.
    if (status !== "cancelled") throw new McpError(ErrorCode.InvalidRequest, `a task's status cannot be set to ${status}`);
    if (!(await this.source.cancel(this.view(), taskId, statusMessage ?? "cancelled by the client"))) {
      throw new McpError(ErrorCode.InvalidRequest, "this task runs in another mcphub process (a gateway sharing the data directory); cancel it there");
    }
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    return this.source.list(this.view(), cursor);
  }
}
