// Tool calls a downstream runs as MCP tasks, through the real supervisor against real servers:
// our task fixture (each step recorded) and server-everything's simulate-research-query. The
// call goes out task-augmented exactly when the server takes tasks and the tool requires it (or
// allows it and the caller asked), is followed to its result through tasks/get and tasks/result,
// and a cancelled or timed-out call sends tasks/cancel and stops the work downstream.
import { join } from "node:path";
import type { Task } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { OutcomeUnknownError } from "../../../src/downstream/types.js";
import { goesAsTask, taskSupportOf, withoutRelatedTask } from "../../../src/downstream/tasks.js";
import { startServerEverything } from "../../helpers/servers.js";
import type { ClientHooks } from "../../../src/downstream/types.js";
import { eventually, fixture, lines, supervisorKit, textOf } from "./util.js";

const kit = supervisorKit();
afterEach(() => kit.cleanup());

const EVERYTHING = join(import.meta.dirname, "../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");

function taskServer(env: Record<string, string> = {}) {
  const events = join(kit.tmp(), "events.log");
  const sup = kit.supervisor({ t: fixture("task-server.mjs", { env: { TASK_EVENTS: events, ...env } }) });
  sup.start();
  return { sup, events: () => lines(events) };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected the promise to reject");
}

describe("when a call goes downstream as a task", () => {
  it("follows the spec's rules: the server's capability first, then the tool's taskSupport", () => {
    const caps = { tasks: { requests: { tools: { call: {} } } } };
    expect(taskSupportOf({ execution: { taskSupport: "required" } })).toBe("required");
    expect(taskSupportOf({})).toBe("forbidden");
    expect(taskSupportOf(undefined)).toBe("forbidden");
    expect(goesAsTask(caps, "required", false)).toBe(true);
    expect(goesAsTask(caps, "optional", false)).toBe(false);
    expect(goesAsTask(caps, "optional", true)).toBe(true);
    expect(goesAsTask(caps, "forbidden", true)).toBe(false);
    expect(goesAsTask({ tools: {} }, "required", true)).toBe(false);
    expect(goesAsTask({ tasks: { list: {} } }, "required", true)).toBe(false);
  });

  it("drops only the downstream's related-task _meta from a result", () => {
    const related = { "io.modelcontextprotocol/related-task": { taskId: "d-1" } };
    expect(withoutRelatedTask({ content: [], _meta: related })).toEqual({ content: [] });
    expect(withoutRelatedTask({ content: [], _meta: { ...related, keep: 1 } })).toEqual({ content: [], _meta: { keep: 1 } });
    const plain = { content: [], _meta: { keep: 1 } };
    expect(withoutRelatedTask(plain)).toBe(plain);
  });
});

describe("Downstream task calls", () => {
  it("runs a task-required tool as a task and returns its result, reporting every status on the way", async () => {
    const { sup, events } = taskServer();
    const seen: Task[] = [];
    const r = await sup.callTool("t", "slow", { steps: 3, stepMs: 30, pollInterval: 100 }, { maxTotalMs: 60_000, onTask: (t) => seen.push(t) });
    expect(textOf(r)).toBe("done after 3 steps");
    expect(r._meta).toBeUndefined();
    expect(events()[0]).toBe("call slow task=yes");
    expect(events().some((e) => e.startsWith("tasks/result "))).toBe(true);
    // One task id throughout, the steps' messages in order, completed at the end.
    expect(new Set(seen.map((t) => t.taskId)).size).toBe(1);
    expect(seen.at(-1)?.status).toBe("completed");
    const messages = seen.map((t) => t.statusMessage).filter((m): m is string => m !== undefined);
    expect(messages).toEqual([...messages].sort());
    expect(messages).toContain("step 3 of 3");
  });

  it("is woken by notifications/tasks/status: statuses arrive between polls far apart", async () => {
    const { sup, events } = taskServer();
    const seen: string[] = [];
    // The server suggests polling every minute (clamped to 5 s); its steps take 40 ms each.
    const r = await sup.callTool("t", "slow", { steps: 4, stepMs: 40, pollInterval: 60_000 }, { maxTotalMs: 60_000, onTask: (t) => seen.push(t.statusMessage ?? t.status) });
    expect(textOf(r)).toBe("done after 4 steps");
    expect(seen).toEqual(expect.arrayContaining(["step 1 of 4", "step 2 of 4", "step 3 of 4", "step 4 of 4"]));
    // Each wake-up polls once; there were no more polls than status changes.
    expect(events().filter((e) => e.startsWith("tasks/get")).length).toBeLessThanOrEqual(seen.length + 1);
  });

  it("runs an optional tool as a task only when asked, and a tool without task support never", async () => {
    const { sup, events } = taskServer();
    expect(textOf(await sup.callTool("t", "maybe", {}))).toBe("ran inline");
    expect(textOf(await sup.callTool("t", "maybe", {}, { task: { ttl: 5000 } }))).toBe("ran as a task");
    expect(textOf(await sup.callTool("t", "echo", { message: "hi" }, { task: {} }))).toBe("echo: hi");
    expect(events().filter((e) => e.startsWith("call ") || e.startsWith("created "))).toEqual([
      "call maybe task=no",
      "call maybe task=yes",
      expect.stringMatching(/^created maybe [0-9a-f]+ ttl=5000$/),
      "call echo task=no",
    ]);
  });

  it("never sends a task to a server without the tasks capability, whatever its tools say", async () => {
    const { sup, events } = taskServer({ TASKS_CAP: "off" });
    const err = await rejection(sup.callTool("t", "slow", {}));
    expect((err as Error).message).toContain("requires task augmentation");
    expect(events()).toEqual(["call slow task=no"]);
  });

  it("input_required: the task's queued elicitation arrives on tasks/result, tagged with its task, and the answer completes it", async () => {
    const events = join(kit.tmp(), "events.log");
    const asked: { method: string; params?: Record<string, unknown> }[] = [];
    const sup = kit.supervisor(
      { t: fixture("task-server.mjs", { env: { TASK_EVENTS: events } }) },
      {
        hooks: {
          capabilities: { elicitation: { form: {} } },
          request: async (_origin, req) => {
            asked.push(req);
            return { action: "accept", content: { name: "Ada" } };
          },
          notification: () => {},
          connected: () => {},
        },
      },
    );
    sup.start();
    const seen: Task[] = [];
    const r = await sup.callTool("t", "ask", { question: "Who?" }, { maxTotalMs: 60_000, onTask: (t) => seen.push(t) });
    expect(textOf(r)).toBe('answer: accept {"name":"Ada"}');
    expect(asked).toHaveLength(1);
    expect(asked[0]?.method).toBe("elicitation/create");
    expect(asked[0]?.params?.message).toBe("Who?");
    // The gateway attributes it by this id: the one the call's task was created with.
    expect(asked[0]?.params?._meta).toEqual({ "io.modelcontextprotocol/related-task": { taskId: seen[0]?.taskId } });
    expect(seen.map((t) => t.status)).toContain("input_required");
    expect(lines(events)).toContain("answered accept");
  });

  it("returns a failed task's isError result", async () => {
    const { sup } = taskServer();
    const r = await sup.callTool("t", "fails", {});
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe("it broke");
  });

  it("cancelled by the caller: sends tasks/cancel, the work stops downstream, the outcome is unknown and nothing is re-sent", async () => {
    const { sup, events } = taskServer();
    const ctl = new AbortController();
    const seen: Task[] = [];
    const call = sup.callTool("t", "slow", { steps: 200, stepMs: 50, pollInterval: 100 }, { signal: ctl.signal, onTask: (t) => seen.push(t) });
    await eventually(() => seen.some((t) => t.statusMessage === "step 2 of 200"), "the task at step 2");
    ctl.abort(new Error("user pressed stop"));
    const err = await rejection(call);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as OutcomeUnknownError).reason).toBe("cancelled");
    await eventually(() => events().some((e) => e.startsWith("stopped ")), "the work to stop downstream");
    const id = seen[0]?.taskId ?? "";
    expect(events()).toContain(`tasks/cancel ${id}`);
    expect(events().filter((e) => e.startsWith("call "))).toEqual(["call slow task=yes"]);
    expect(events().some((e) => e.startsWith("done "))).toBe(false);
    await eventually(() => seen.at(-1)?.status === "cancelled", "the cancelled status from tasks/cancel");
    // The connection is fine for the next call.
    expect(textOf(await sup.callTool("t", "echo", { message: "still up" }))).toBe("echo: still up");
  });

  it("past its timeout: sends tasks/cancel and reports a timeout with an unknown outcome", async () => {
    const { sup, events } = taskServer();
    await sup.waitForServer("t", { timeoutMs: 20_000 });
    const err = await rejection(sup.callTool("t", "slow", { steps: 200, stepMs: 50, pollInterval: 100 }, { timeoutMs: 600 }));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as OutcomeUnknownError).reason).toBe("timeout");
    expect((err as Error).message).toContain("no answer within its timeout of 600ms");
    await eventually(() => events().some((e) => e.startsWith("tasks/cancel ")), "tasks/cancel");
    await eventually(() => events().some((e) => e.startsWith("stopped ")), "the work to stop downstream");
  });

  it("past call_timeout (no per-call timeout): says so", async () => {
    const { sup } = taskServer();
    await sup.waitForServer("t", { timeoutMs: 20_000 });
    const err = await rejection(sup.callTool("t", "slow", { steps: 200, stepMs: 50, pollInterval: 100 }, { maxTotalMs: 500, idleTimeoutMs: 10_000 }));
    expect((err as OutcomeUnknownError).reason).toBe("timeout");
    expect((err as Error).message).toContain("it ran past call_timeout (500ms)");
  });

  it("server-everything's simulate-research-query completes through the supervisor", async () => {
    const sup = kit.supervisor({ everything: { command: process.execPath, args: [EVERYTHING], enabled: true } });
    sup.start();
    await sup.waitForServer("everything", { timeoutMs: 20_000 });
    const tool = sup.snapshot("everything")?.tools.find((t) => t.name === "simulate-research-query");
    expect(tool?.execution?.taskSupport).toBe("required");
    const seen: string[] = [];
    const r = await sup.callTool("everything", "simulate-research-query", { topic: "tides" }, { maxTotalMs: 60_000, onTask: (t) => seen.push(`${t.status}: ${t.statusMessage ?? ""}`) });
    expect(textOf(r)).toContain("# Research Report: tides");
    expect(r._meta).toBeUndefined();
    expect(seen).toEqual(expect.arrayContaining(["working: Gathering sources...", "working: Generating report..."]));
    expect(seen.at(-1)?.startsWith("completed")).toBe(true);
  });

  for (const mode of ["streamableHttp", "sse"] as const) {
    it(`over ${mode}: simulate-research-query's clarifying elicitation reaches the hooks and the report uses the answer`, async () => {
      const remote = await startServerEverything(mode);
      try {
        const asked: string[] = [];
        const hooks: ClientHooks = {
          capabilities: { elicitation: { form: {} } },
          request: async (_origin, req) => {
            asked.push(req.method);
            return { action: "accept", content: { interpretation: "historical" } };
          },
          notification: () => {},
          connected: () => {},
        };
        const sup = kit.supervisor({ everything: { url: remote.url, transport: mode === "sse" ? "sse" : "http", enabled: true } }, { hooks });
        sup.start();
        const seen: string[] = [];
        const r = await sup.callTool("everything", "simulate-research-query", { topic: "rome", ambiguous: true }, { maxTotalMs: 60_000, onTask: (t) => seen.push(t.status) });
        expect(textOf(r)).toContain("# Research Report: rome (historical)");
        expect(asked).toEqual(["elicitation/create"]);
        expect(seen).toContain("input_required");
      } finally {
        await remote.close();
      }
    });
  }
});
