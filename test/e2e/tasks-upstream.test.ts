// MCP tasks served upstream by the real gateway (`mcphub mcp serve` over stdio, `mcphub up` over
// HTTP), with the SDK's experimental tasks API as the client, in front of server-everything and
// our task fixture:
// - simulate-research-query (task-required downstream) as a task, mounted (expose: all) and
//   through lazy call_tool: status notifications arrive, the clarifying elicitation reaches the
//   client on tasks/result and its answer shapes the report; cancel stops it downstream;
// - a plain tool as a task (mcphub is the receiver): completed, tasks/result, tasks/list,
//   poll_result on the same id, an oversized result as a receipt;
// - kill the gateway mid-task and start it again: the task is still listed, with its outcome;
//   another agent's tasks/get for it is refused like an unknown id;
// - what is advertised: execution.taskSupport on mounted tools, call_tool and describe_tool.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  McpError,
  TaskStatusNotificationSchema,
  type CallToolResult,
  type ElicitRequest,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alive, BIN, doc, EVERYTHING, FIXTURES, tempHome, text, until, type TempHome } from "../helpers/gateway.js";
import { createTokens, startDaemon } from "../helpers/daemon.js";
import { lines } from "../unit/downstream/util.js";

interface TaskClient {
  client: Client;
  statuses: Task[];
  elicited: ElicitRequest["params"][];
  pid?: number;
  close(): Promise<void>;
}

async function taskClient(transport: Transport, elicit?: Record<string, unknown>): Promise<TaskClient> {
  const client = new Client({ name: "tasks-upstream-e2e", version: "1.0.0" }, { capabilities: elicit ? { elicitation: { form: {} } } : {} });
  const statuses: Task[] = [];
  const elicited: ElicitRequest["params"][] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    statuses.push(n.params);
  });
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      elicited.push(req.params);
      return { action: "accept", content: elicit };
    });
  }
  await client.connect(transport);
  return { client, statuses, elicited, close: () => client.close().catch(() => undefined) };
}

function stdio(home: TempHome, cfg: string, agent?: string): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "--config", cfg, "mcp", "serve", ...(agent ? ["--agent", agent] : [])],
    env: home.env as Record<string, string>,
    stderr: "pipe",
  });
}

/** Runs callToolStream to its end: every message's type, the task, and the result or error. */
async function stream(c: Client, name: string, args: Record<string, unknown>, ttl?: number) {
  const types: string[] = [];
  let task: Task | undefined;
  let result: CallToolResult | undefined;
  let error: Error | undefined;
  for await (const m of c.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: ttl !== undefined ? { ttl } : {}, timeout: 120_000 })) {
    types.push(m.type);
    if (m.type === "taskCreated") task = m.task;
    else if (m.type === "result") result = m.result as CallToolResult;
    else if (m.type === "error") error = m.error;
  }
  return { types, task, result, error };
}

async function rejection(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (err) {
    return err as McpError;
  }
  throw new Error("expected the request to fail");
}

/**
 * server-everything as it is, its stderr kept in `log`: after tasks/cancel reaches it, its
 * research loop's next status update is refused as coming from a cancelled task, and it says so
 * on stderr. Only a downstream tasks/cancel makes it say that (notifications/cancelled would let
 * the task run on to its report).
 */
const everythingLogged = (log: string) => ({
  command: "/bin/sh",
  args: ["-c", 'exec "$0" "$1" 2>>"$2"', process.execPath, EVERYTHING, log],
});
const CANCELLED_DOWNSTREAM = /Cannot update task "[0-9a-f]+" from terminal status "cancelled"/;
const logged = (log: string) => (existsSync(log) ? readFileSync(log, "utf8") : "");

/**
 * Starts simulate-research-query as a task (mounted, or through call_tool), waits until the
 * research is under way, cancels the task, and checks that server-everything's own task was
 * cancelled and that mcphub's stays cancelled, without a result.
 */
async function cancelResearch(c: Client, log: string, via: "mount" | "call_tool"): Promise<void> {
  const args = { topic: `stop ${via}` };
  const params =
    via === "mount"
      ? { name: "everything__simulate-research-query", arguments: args, task: {} }
      : { name: "mcphub_call_tool", arguments: { tool: "everything__simulate-research-query", arguments: args }, task: {} };
  const created = (await c.request({ method: "tools/call", params }, CallToolResultSchema.passthrough())) as unknown as { task: Task };
  const id = created.task.taskId;
  const before = (logged(log).match(new RegExp(CANCELLED_DOWNSTREAM, "g")) ?? []).length;
  await until(async () => (await c.experimental.tasks.getTask(id)).statusMessage === "Analyzing content...", "the research to be under way");
  expect((await c.experimental.tasks.cancelTask(id)).status).toBe("cancelled");
  await until(() => (logged(log).match(new RegExp(CANCELLED_DOWNSTREAM, "g")) ?? []).length > before, "server-everything's task to be cancelled");
  expect((await c.experimental.tasks.getTask(id)).status).toBe("cancelled");
  expect((await c.experimental.tasks.listTasks()).tasks.find((t) => t.taskId === id)?.status).toBe("cancelled");
  const noResult = await rejection(c.experimental.tasks.getTaskResult(id, CallToolResultSchema));
  expect(noResult.message).toContain("cancelled before it finished");
}

const servers = (events: string) => ({
  everything: { command: process.execPath, args: [EVERYTHING] },
  jobs: { command: process.execPath, args: [join(FIXTURES, "task-server.mjs")], env: { TASK_EVENTS: events } },
  slow: { command: process.execPath, args: [join(FIXTURES, "progress-cancel.mjs")] },
});

describe("upstream tasks over the stdio gateway", () => {
  let home: TempHome;
  let all: string;
  let lazy: string;
  let events: string;
  let research: string;
  let researchLog: string;

  beforeAll(() => {
    home = tempHome("mcphub-tasks-up-");
    events = join(home.dir, "task-events.log");
    researchLog = join(home.dir, "everything-stderr.log");
    research = home.writeConfig({ expose: "all", servers: { everything: everythingLogged(researchLog) } }, "research.yaml");
    all = home.writeConfig({ expose: "all", response_budget: "2KB", servers: servers(events), agents: { a: {}, b: {} } }, "all.yaml");
    lazy = home.writeConfig({ expose: "lazy", pin: ["everything__simulate-research-query"], servers: servers(events) }, "lazy.yaml");
  });
  afterAll(() => home?.cleanup());

  it("declares tasks and advertises taskSupport truthfully: optional on every mounted tool and call_tool, none on the rest", async () => {
    const u = await taskClient(stdio(home, all, "a"));
    try {
      expect(u.client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const d = doc(await u.client.callTool({ name: "mcphub_list_servers", arguments: {} }) as CallToolResult);
      expect((d.servers as { name: string }[]).length).toBe(3);
      await until(async () => (await u.client.listTools()).tools.some((t) => t.name === "everything__simulate-research-query"), "the research tool listed");
      const tools = (await u.client.listTools()).tools;
      const by = new Map(tools.map((t) => [t.name, t]));
      expect(by.get("everything__simulate-research-query")?.execution).toEqual({ taskSupport: "optional" });
      expect(by.get("everything__echo")?.execution).toEqual({ taskSupport: "optional" });
      expect(by.get("mcphub_call_tool")?.execution).toEqual({ taskSupport: "optional" });
      expect(by.get("mcphub_search_tools")?.execution).toBeUndefined();
      const described = doc((await u.client.callTool({ name: "mcphub_describe_tool", arguments: { tool: "everything__simulate-research-query" } })) as CallToolResult);
      expect(described).toMatchObject({ execution: { taskSupport: "optional" }, downstream_task_support: "required" });
      const plain = doc((await u.client.callTool({ name: "mcphub_describe_tool", arguments: { tool: "everything__echo" } })) as CallToolResult);
      expect(plain.execution).toEqual({ taskSupport: "optional" });
      expect(plain).not.toHaveProperty("downstream_task_support");
      // A management tool that answers at once refuses to be a task.
      const err = await rejection(u.client.request({ method: "tools/call", params: { name: "mcphub_stats", arguments: {}, task: {} } }, CallToolResultSchema));
      expect(err.code).toBe(-32601);
      expect(err.message).toContain("mcphub_stats does not run as a task");
    } finally {
      await u.close();
    }
  });

  it("simulate-research-query as a task (expose: all): statuses notified, the elicitation arrives on tasks/result tagged with mcphub's task id, the report uses the answer", async () => {
    const u = await taskClient(stdio(home, all, "a"), { interpretation: "snake" });
    try {
      const r = await stream(u.client, "everything__simulate-research-query", { topic: "python", ambiguous: true }, 60_000);
      expect(r.error).toBeUndefined();
      expect(r.types[0]).toBe("taskCreated");
      expect(r.types.at(-1)).toBe("result");
      expect(text(r.result as CallToolResult)).toContain("# Research Report: python (snake)");
      const id = r.task?.taskId ?? "";
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(r.task?.ttl).toBe(60_000);
      // A new task suggests polling soon (a quarter of its age, from 100 ms up to 1 s).
      expect(r.task?.pollInterval).toBe(100);
      // What the client sees of the task is mcphub's: its id on the elicitation and the result.
      expect(u.elicited).toHaveLength(1);
      expect(u.elicited[0]?._meta).toEqual({ "io.modelcontextprotocol/related-task": { taskId: id } });
      expect(r.result?._meta).toEqual({ "io.modelcontextprotocol/related-task": { taskId: id } });
      const seen = u.statuses.filter((s) => s.taskId === id).map((s) => `${s.status}${s.statusMessage ? `: ${s.statusMessage}` : ""}`);
      expect(seen).toEqual(expect.arrayContaining(["working: Gathering sources...", "working: Generating report..."]));
      expect(seen.some((s) => s.startsWith("input_required"))).toBe(true);
      expect(seen.at(-1)).toBe("completed");
    } finally {
      await u.close();
    }
  });

  it("lazy call_tool as a task: the same, through mcphub_call_tool; a pinned tool is advertised like a mounted one", async () => {
    const u = await taskClient(stdio(home, lazy));
    try {
      await until(async () => (await u.client.listTools()).tools.some((t) => t.name === "everything__simulate-research-query"), "the pinned tool listed");
      const pinned = (await u.client.listTools()).tools.find((t) => t.name === "everything__simulate-research-query");
      expect(pinned?.execution).toEqual({ taskSupport: "optional" });
      const r = await stream(u.client, "mcphub_call_tool", { tool: "everything__simulate-research-query", arguments: { topic: "tides" } });
      expect(r.error).toBeUndefined();
      expect(text(r.result as CallToolResult)).toContain("# Research Report: tides");
      expect(u.statuses.some((s) => s.statusMessage === "Analyzing content...")).toBe(true);
      // The inner call's problems are refusals at creation: no task exists for them.
      const bad = await rejection(u.client.request({ method: "tools/call", params: { name: "mcphub_call_tool", arguments: { tool: "everything__simulate-research-query", arguments: {} }, task: {} } }, CallToolResultSchema));
      expect(bad.code).toBe(-32602);
      expect(bad.message).toContain("no task was started: invalid arguments for everything__simulate-research-query");
    } finally {
      await u.close();
    }
  });

  it("tasks/cancel stops the task downstream and the task stays cancelled", async () => {
    const u = await taskClient(stdio(home, all, "a"));
    try {
      const created = await u.client.request({ method: "tools/call", params: { name: "jobs__slow", arguments: { steps: 400, stepMs: 50, pollInterval: 100 }, task: {} } }, CallToolResultSchema.passthrough());
      const id = (created as unknown as { task: Task }).task.taskId;
      await until(() => lines(events).some((l) => l.startsWith("tasks/get ")), "the downstream task being followed");
      const cancelled = await u.client.experimental.tasks.cancelTask(id);
      expect(cancelled.status).toBe("cancelled");
      await until(() => lines(events).some((l) => l.startsWith("tasks/cancel ")), "tasks/cancel downstream");
      await until(() => lines(events).some((l) => l.startsWith("stopped ")), "the work to stop downstream");
      expect((await u.client.experimental.tasks.getTask(id)).status).toBe("cancelled");
      const again = await rejection(u.client.experimental.tasks.cancelTask(id));
      expect(again.code).toBe(-32602);
      expect(lines(events).some((l) => l.startsWith("done "))).toBe(false);
    } finally {
      await u.close();
    }
  });

  it("tasks/cancel of simulate-research-query, mounted and through call_tool, cancels server-everything's own task", async () => {
    const u = await taskClient(stdio(home, research));
    try {
      await until(async () => (await u.client.listTools()).tools.some((t) => t.name === "everything__simulate-research-query"), "the research tool listed");
      await cancelResearch(u.client, researchLog, "mount");
      await cancelResearch(u.client, researchLog, "call_tool");
    } finally {
      await u.close();
    }
  });

  it("a plain tool as a task: completed, tasks/result, tasks/list, poll_result on the same id; an oversized result is a receipt", async () => {
    const u = await taskClient(stdio(home, all, "a"));
    try {
      const r = await stream(u.client, "everything__echo", { message: "hello as a task" });
      expect(r.types).toEqual(expect.arrayContaining(["taskCreated", "taskStatus", "result"]));
      expect(text(r.result as CallToolResult)).toBe("Echo: hello as a task");
      const id = r.task?.taskId ?? "";
      expect((await u.client.experimental.tasks.getTask(id)).status).toBe("completed");
      const listed = await u.client.experimental.tasks.listTasks();
      expect(listed.tasks.map((t) => t.taskId)).toContain(id);
      // One mechanism: the task is a detached call, poll_result reads the same record.
      const polled = (await u.client.callTool({ name: "mcphub_poll_result", arguments: { callId: id } })) as CallToolResult;
      expect(text(polled)).toBe("Echo: hello as a task");
      // Over the 2 KB budget: the task's result is the receipt, readable with get_result.
      const big = await stream(u.client, "everything__echo", { message: "x".repeat(5000) });
      const receipt = doc(big.result as CallToolResult);
      expect(receipt).toMatchObject({ status: "stored", namespaced: "everything__echo" });
      const page = doc((await u.client.callTool({ name: "mcphub_get_result", arguments: { callId: receipt.callId, format: "text" } })) as CallToolResult);
      expect(String(page.text)).toContain("x".repeat(100));
      // detach: true starts the same kind of record: tasks/get and tasks/result read it.
      const accepted = doc((await u.client.callTool({ name: "mcphub_call_tool", arguments: { tool: "everything__echo", arguments: { message: "detached" }, detach: true } })) as CallToolResult);
      const detachedId = String(accepted.callId);
      await until(async () => (await u.client.experimental.tasks.getTask(detachedId)).status === "completed", "the detached call to complete");
      const res = await u.client.experimental.tasks.getTaskResult(detachedId, CallToolResultSchema);
      expect(text(res as CallToolResult)).toBe("Echo: detached");
    } finally {
      await u.close();
    }
  });

  it("a client without tasks: a plain call of simulate-research-query waits for its report; past timeout_ms it gets a callId it can poll", async () => {
    const u = await taskClient(stdio(home, all, "a"));
    try {
      // The SDK client calls it plainly: the tool is advertised as optional.
      const r = (await u.client.callTool({ name: "everything__simulate-research-query", arguments: { topic: "plain" } }, undefined, { timeout: 120_000 })) as CallToolResult;
      expect(text(r)).toContain("# Research Report: plain");
      const early = doc((await u.client.callTool({ name: "mcphub_call_tool", arguments: { tool: "everything__simulate-research-query", arguments: { topic: "later" }, timeout_ms: 1200 } })) as CallToolResult);
      expect(early).toMatchObject({ status: "accepted", namespaced: "everything__simulate-research-query" });
      expect(String(early.nextAction)).toContain("still running when this call stopped waiting");
      let polled: CallToolResult | undefined;
      await until(async () => {
        polled = (await u.client.callTool({ name: "mcphub_poll_result", arguments: { callId: early.callId } })) as CallToolResult;
        return !/"status":\s*"pending"/.test(text(polled));
      }, "the report");
      expect(text(polled as CallToolResult)).toContain("# Research Report: later");
    } finally {
      await u.close();
    }
  });

  it("kill the gateway mid-task and start it again: the task is listed with its outcome, never re-run; another agent's tasks/get is refused", async () => {
    const first = stdio(home, all, "a");
    const u = await taskClient(first);
    const pid = first.pid ?? 0;
    const done = await stream(u.client, "everything__echo", { message: "before the crash" });
    const doneId = done.task?.taskId ?? "";
    const created = (await u.client.request({ method: "tools/call", params: { name: "slow__slow", arguments: { steps: 2000 }, task: { ttl: 600_000 } } }, CallToolResultSchema.passthrough())) as unknown as { task: Task };
    const runningId = created.task.taskId;
    expect((await u.client.experimental.tasks.getTask(runningId)).status).toBe("working");
    process.kill(pid, "SIGKILL");
    await until(() => !alive(pid), "the gateway to die");
    await u.close();

    const again = await taskClient(stdio(home, all, "a"));
    try {
      const listed = await again.client.experimental.tasks.listTasks();
      const byId = new Map(listed.tasks.map((t) => [t.taskId, t]));
      expect(byId.get(doneId)?.status).toBe("completed");
      expect(byId.get(runningId)).toMatchObject({ status: "failed", ttl: 600_000 });
      expect(byId.get(runningId)?.statusMessage).toContain("stopped before it finished, so its outcome is unknown. It was not retried");
      expect(text((await again.client.experimental.tasks.getTaskResult(doneId, CallToolResultSchema)) as CallToolResult)).toBe("Echo: before the crash");
      const lost = (await again.client.experimental.tasks.getTaskResult(runningId, CallToolResultSchema)) as CallToolResult;
      expect(lost.isError).toBe(true);
      expect(text(lost)).toContain("outcome is unknown");
    } finally {
      await again.close();
    }
    const other = await taskClient(stdio(home, all, "b"));
    try {
      const refused = await rejection(other.client.experimental.tasks.getTask(runningId));
      expect(refused.code).toBe(-32602);
      expect(refused.message).toContain("Task not found");
      const unknownId = await rejection(other.client.experimental.tasks.getTask("0".repeat(32)));
      // Exactly like an id that does not exist: nothing tells the other agent the task is there.
      expect(unknownId.message).toBe(refused.message);
      expect((await rejection(other.client.experimental.tasks.getTaskResult(doneId, CallToolResultSchema))).code).toBe(-32602);
      expect((await other.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(doneId);
    } finally {
      await other.close();
    }
  });
});

describe("upstream tasks through the daemon (mcphub up)", () => {
  let home: TempHome;
  let stop: () => Promise<unknown>;
  let url: string;
  let token: string;
  let researchLog: string;

  beforeAll(async () => {
    home = tempHome("mcphub-tasks-up-http-");
    researchLog = join(home.dir, "everything-stderr.log");
    const cfg = home.writeConfig({ expose: "all", servers: { ...servers(join(home.dir, "events.log")), everything: everythingLogged(researchLog) }, agents: { a: {} } });
    token = (await createTokens(home, cfg, ["a"])).a ?? "";
    const d = await startDaemon(home, cfg);
    url = d.url;
    stop = d.stop;
  });
  afterAll(async () => {
    await stop?.();
    home?.cleanup();
  });

  const connect = (elicit?: Record<string, unknown>) =>
    taskClient(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }), elicit);

  it("simulate-research-query as a task, mounted and through call_tool, with its elicitation and status notifications", async () => {
    const u = await connect({ interpretation: "programming" });
    try {
      const r = await stream(u.client, "everything__simulate-research-query", { topic: "python", ambiguous: true });
      expect(r.error).toBeUndefined();
      expect(text(r.result as CallToolResult)).toContain("# Research Report: python (programming)");
      expect(u.elicited).toHaveLength(1);
      const id = r.task?.taskId;
      await until(() => u.statuses.some((s) => s.taskId === id && s.status === "completed"), "the completed notification");
      const viaCallTool = await stream(u.client, "mcphub_call_tool", { tool: "everything__simulate-research-query", arguments: { topic: "rome" } });
      expect(text(viaCallTool.result as CallToolResult)).toContain("# Research Report: rome");
      expect(u.statuses.some((s) => s.taskId === viaCallTool.task?.taskId && s.statusMessage === "Generating report...")).toBe(true);
    } finally {
      await u.close();
    }
  });

  it("tasks/cancel of simulate-research-query, mounted and through call_tool, cancels server-everything's own task", async () => {
    const u = await connect();
    try {
      await cancelResearch(u.client, researchLog, "mount");
      await cancelResearch(u.client, researchLog, "call_tool");
    } finally {
      await u.close();
    }
  });
});
