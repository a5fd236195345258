// MCP tasks (2025-11-25) as mcphub serves them upstream: the task view of a registry record
// (status.ts) and the SDK TaskStore of a session (store.ts). The records themselves are the
// detached registry's (../call/detached.ts): one mechanism for detach, tasks, and plain calls of
// task-required tools. Protocol notes: docs/protocol.md#tasks.
export * from "./status.js";
export { SessionTaskStore, TASK_NOT_FOUND, type TaskSource } from "./store.js";
