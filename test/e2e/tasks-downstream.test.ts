// MCP tasks a downstream runs, through the real stdio gateway (`mcphub mcp serve`) in front of
// server-everything and our task fixture, with real SDK clients upstream:
// - a client without tasks calls simulate-research-query (task-required downstream) and gets its
//   report; with `ambiguous: true` the task's elicitation (queued downstream, delivered on
//   tasks/result) reaches that client and its answer shapes the report;
// - the async sampling and elicitation tools appear (mcphub declares tasks to its downstreams and
//   is their receiver) and work for a client that declares tasks for them (the request reaches it
//   as a task) and for one that does not (it reaches it as a plain request);
// - cancelling the upstream call (or the upstream task) stops the task downstream (tasks/cancel).
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type ClientCapabilities,
  type CreateMessageResult,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema, type RawConfig } from "../../src/config/schema.js";
import { startHttpGateway, TokenStore, type HttpGateway } from "../../src/serve/index.js";
import { memoryLogger } from "../../src/util/log.js";
import { BIN, doc, EVERYTHING, FIXTURES, tempHome, text, type TempHome } from "../helpers/gateway.js";
import { eventually, peerClient, type Answers } from "../helpers/passthrough.js";
import { lines } from "../unit/downstream/util.js";

interface Upstream {
  client: Client;
  asked: { method: string; params: Record<string, unknown>; asTask: boolean }[];
  close(): Promise<void>;
}

/**
 * A real SDK client over stdio to the gateway. `tasks`: it declares task-augmented sampling and
 * elicitation and runs them as tasks of its own (its SDK task store answers tasks/get|result).
 */
async function upstream(home: TempHome, cfg: string, opts: { tasks?: boolean; elicit?: ElicitResult; sample?: string } = {}): Promise<Upstream> {
  const capabilities: ClientCapabilities = {
    ...(opts.sample !== undefined ? { sampling: {} } : {}),
    ...(opts.elicit ? { elicitation: { form: {} } } : {}),
    ...(opts.tasks ? { tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } } } : {}),
  };
  const client = new Client({ name: "tasks-e2e", version: "1.0.0" }, { capabilities, ...(opts.tasks ? { taskStore: new InMemoryTaskStore() } : {}) });
  const asked: Upstream["asked"] = [];
  const { elicit, sample } = opts;
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
      asked.push({ method: req.method, params: req.params as Record<string, unknown>, asTask: req.params.task !== undefined });
      if (!req.params.task) return elicit;
      const task = await extra.taskStore!.createTask({ ttl: req.params.task.ttl ?? 60_000, pollInterval: 100 });
      setTimeout(() => void extra.taskStore!.storeTaskResult(task.taskId, "completed", elicit), 150);
      return { task };
    });
  }
  if (sample !== undefined) {
    client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => {
      asked.push({ method: req.method, params: req.params as Record<string, unknown>, asTask: req.params.task !== undefined });
      const answer: CreateMessageResult = { role: "assistant", content: { type: "text", text: sample }, model: "test-model", stopReason: "endTurn" };
      if (!req.params.task) return answer;
      const task = await extra.taskStore!.createTask({ ttl: req.params.task.ttl ?? 60_000, pollInterval: 100 });
      setTimeout(() => void extra.taskStore!.storeTaskResult(task.taskId, "completed", answer), 150);
      return { task };
    });
  }
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "--config", cfg, "mcp", "serve"], env: home.env as Record<string, string>, stderr: "pipe" }));
  return { client, asked, close: () => client.close().catch(() => undefined) };
}

const call = async (u: Upstream, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> =>
  // A raw tools/call with a timeout of its own (a research task takes several seconds).
  (await u.client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, { timeout: 120_000, ...(signal ? { signal } : {}) })) as CallToolResult;

describe("tasks a downstream runs, through the stdio gateway", () => {
  let home: TempHome;
  let lazy: string;
  let all: string;
  let events: string;

  beforeAll(() => {
    home = tempHome("mcphub-tasks-ds-");
    events = join(home.dir, "task-events.log");
    const servers = {
      everything: { command: process.execPath, args: [EVERYTHING] },
      jobs: { command: process.execPath, args: [join(FIXTURES, "task-server.mjs")], env: { TASK_EVENTS: events } },
    };
    lazy = home.writeConfig({ expose: "lazy", servers }, "lazy.yaml");
    all = home.writeConfig({ expose: "all", servers }, "all.yaml");
  });
  afterAll(() => home?.cleanup());

  it("lazy call_tool: a client without tasks gets simulate-research-query's report", async () => {
    const u = await upstream(home, lazy);
    try {
      const r = await call(u, "mcphub_call_tool", { tool: "everything__simulate-research-query", arguments: { topic: "tides" } });
      expect(r.isError).toBeFalsy();
      expect(text(r)).toContain("# Research Report: tides");
      expect(r._meta).toBeUndefined();
    } finally {
      await u.close();
    }
  });

  it("expose: all: the task's elicitation reaches the client that called, and its answer shapes the report", async () => {
    const u = await upstream(home, all, { elicit: { action: "accept", content: { interpretation: "snake" } } });
    try {
      const r = await call(u, "everything__simulate-research-query", { topic: "python", ambiguous: true });
      expect(text(r)).toContain("# Research Report: python (snake)");
      const asked = u.asked.find((a) => a.method === "elicitation/create");
      expect(asked?.params.message).toContain('The research query "python" could have multiple interpretations');
      // The downstream's task id never reaches the client.
      expect(asked?.params._meta).toBeUndefined();
    } finally {
      await u.close();
    }
  });

  it("the async sampling and elicitation tools appear, and reach a client that declares tasks for them as tasks", async () => {
    const u = await upstream(home, all, { tasks: true, sample: "sampled as a task", elicit: { action: "accept", content: { name: "Ada", favoriteColor: "Blue" } } });
    try {
      const names = (await u.client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["everything__trigger-sampling-request-async", "everything__trigger-elicitation-request-async"]));
      const s = await call(u, "everything__trigger-sampling-request-async", { prompt: "hello" });
      expect(text(s)).toContain("[COMPLETED] Async sampling completed!");
      expect(text(s)).toContain("sampled as a task");
      const e = await call(u, "everything__trigger-elicitation-request-async", {});
      expect(text(e)).toContain("[COMPLETED] User provided the requested information!");
      expect(text(e)).toContain("- Name: Ada");
      expect(u.asked.map((a) => `${a.method} task=${a.asTask}`)).toEqual(["sampling/createMessage task=true", "elicitation/create task=true"]);
    } finally {
      await u.close();
    }
  });

  it("...and reach a client without tasks as plain requests, mcphub running the task for the server", async () => {
    const u = await upstream(home, lazy, { sample: "sampled plainly" });
    try {
      const s = await call(u, "mcphub_call_tool", { tool: "everything__trigger-sampling-request-async", arguments: { prompt: "hello" } });
      expect(text(s)).toContain("[COMPLETED] Async sampling completed!");
      expect(text(s)).toContain("sampled plainly");
      expect(u.asked.map((a) => `${a.method} task=${a.asTask}`)).toEqual(["sampling/createMessage task=false"]);
      // No elicitation capability: the server is refused at once, its tool reports it.
      const e = await call(u, "mcphub_call_tool", { tool: "everything__trigger-elicitation-request-async", arguments: {} });
      expect(text(e)).toContain("did not declare the elicitation capability");
    } finally {
      await u.close();
    }
  });

  it("cancelling the call stops the task downstream with tasks/cancel", async () => {
    const u = await upstream(home, lazy);
    try {
      const ctl = new AbortController();
      const pending = call(u, "mcphub_call_tool", { tool: "jobs__slow", arguments: { steps: 400, stepMs: 50, pollInterval: 100 } }, ctl.signal).catch((e: unknown) => e);
      await eventually(() => lines(events).some((l) => l.startsWith("tasks/get ")), "the task being polled");
      ctl.abort("stop");
      await pending;
      await eventually(() => lines(events).some((l) => l.startsWith("tasks/cancel ")), "tasks/cancel downstream");
      await eventually(() => lines(events).some((l) => l.startsWith("stopped ")), "the work to stop");
      expect(lines(events).some((l) => l.startsWith("done "))).toBe(false);
      // The gateway carries on.
      const d = doc(await call(u, "mcphub_list_servers", {}));
      expect((d.servers as { name: string; state: string }[]).find((s) => s.name === "jobs")?.state).toBe("ready");
    } finally {
      await u.close();
    }
  });
});

describe("tasks a downstream runs, in the daemon (shared connection)", () => {
  let home: TempHome;
  let gw: HttpGateway;
  const tokens: Record<string, string> = {};
  let events: string;

  beforeAll(async () => {
    home = tempHome("mcphub-tasks-daemon-");
    events = join(home.dir, "task-events.log");
    const raw: RawConfig = {
      expose: "lazy",
      servers: {
        jobs: { command: process.execPath, args: [join(FIXTURES, "task-server.mjs")], env: { TASK_EVENTS: events } },
        everything: { command: process.execPath, args: [EVERYTHING] },
      },
      agents: { alice: {}, bob: {} },
    };
    const dataDir = join(home.dir, "data");
    const store = TokenStore.open(dataDir);
    for (const agent of ["alice", "bob"]) tokens[agent] = (await store.create(agent)).token;
    gw = await startHttpGateway({ config: configSchema.parse(raw), dataDir, env: home.env, log: memoryLogger(), listen: { host: "127.0.0.1", port: 0 } });
  });
  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  const connect = async (agent: string, answers: Answers) => {
    const transport = new StreamableHTTPClientTransport(new URL(gw.url), { requestInit: { headers: { Authorization: `Bearer ${tokens[agent]}` } } });
    const peer = await peerClient(transport, answers, agent);
    // Ends the session on the daemon (DELETE), as a harness does when it quits.
    const close = async () => {
      await transport.terminateSession().catch(() => undefined);
      await peer.close();
    };
    return { ...peer, close };
  };

  it("a task's elicitation goes to the session whose call created the task, even with another session's call in flight", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const answer = (name: string) => async () => (await gate, { action: "accept" as const, content: { name } });
    const a = await connect("alice", { elicit: answer("alice") });
    const b = await connect("bob", { elicit: answer("bob") });
    try {
      const ra = a.call("mcphub_call_tool", { tool: "jobs__ask", arguments: { question: "for alice" } });
      const rb = b.call("mcphub_call_tool", { tool: "jobs__ask", arguments: { question: "for bob" } });
      // Both calls are in flight on the one shared connection when both questions are asked.
      await eventually(() => a.asked.length === 1 && b.asked.length === 1, "both questions");
      release();
      expect(text(await ra)).toBe('answer: accept {"name":"alice"}');
      expect(text(await rb)).toBe('answer: accept {"name":"bob"}');
      expect(a.asked.map((x) => x.params.message)).toEqual(["for alice"]);
      expect(b.asked.map((x) => x.params.message)).toEqual(["for bob"]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("tasks/cancel of simulate-research-query (a task through call_tool) cancels server-everything's own task", async () => {
    const a = await connect("alice", {});
    try {
      const created = (await a.client.request(
        { method: "tools/call", params: { name: "mcphub_call_tool", arguments: { tool: "everything__simulate-research-query", arguments: { topic: "stop me" } }, task: {} } },
        CallToolResultSchema.passthrough(),
      )) as unknown as { task: { taskId: string } };
      const id = created.task.taskId;
      await eventually(async () => (await a.client.experimental.tasks.getTask(id)).statusMessage === "Analyzing content...", "the research to be under way");
      expect((await a.client.experimental.tasks.cancelTask(id)).status).toBe("cancelled");
      // server-everything's own task is cancelled: its next status update is refused as coming
      // from a terminal task, which it reports on stderr (the supervisor keeps the tail).
      await eventually(() => /Cannot update task "[0-9a-f]+" from terminal status "cancelled"/.test(gw.hub.supervisor.snapshot("everything")?.stderrTail ?? ""), "the downstream task to be cancelled");
      expect((await a.client.experimental.tasks.getTask(id)).status).toBe("cancelled");
    } finally {
      await a.close();
    }
  });

  it("mcphub's own tasks for a downstream (async sampling) do not outlive their session", async () => {
    const a = await connect("alice", { sample: () => ({ role: "assistant", content: { type: "text", text: "ok" }, model: "m", stopReason: "endTurn" }) });
    const r = await a.call("mcphub_call_tool", { tool: "everything__trigger-sampling-request-async", arguments: { prompt: "hi" } });
    expect(text(r)).toContain("[COMPLETED] Async sampling completed!");
    expect(gw.hub.passthrough.stats().client_tasks).toBe(1);
    await a.close();
    await eventually(() => gw.hub.passthrough.stats().sessions === 0, "the session to end");
    expect(gw.hub.passthrough.stats().client_tasks).toBe(0);
  });
});
