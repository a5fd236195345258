// What MCP tasks cost through mcphub, side by side in one run.
//   npx tsx bench/tasks.ts [--calls 100] [--task-calls 20]
// One SDK client per path, sequential calls, after a warm-up:
//   echo (a plain tool, server-everything): (a) a plain call directly over stdio, (b) a plain call
//   through the stdio gateway, (c) the same tool as an upstream task (mcphub is the receiver)
//   with tasks/result right after the CreateTaskResult (the fastest a requestor can be), and
//   (d) as a task through the SDK's callToolStream (tasks/get at the pollInterval, then
//   tasks/result).
//   slow (a task-required tool of our fixture: 3 status steps of 100 ms, pollInterval 500 ms):
//   (e) directly with callToolStream, (f) a plain call through the gateway (mcphub follows the
//   downstream task for a client without tasks), (g) callToolStream through the gateway (the
//   upstream task mirrors the downstream one).
// For each: latency p50/p95, JSON-RPC messages and bytes on the client's wire per call, and the
// bytes of the answer a model would read (the result, or the CreateTaskResult's
// model-immediate-response). Then the tools/list bytes that `execution.taskSupport` adds.
// No bare forwarder or peer gateway here speaks tasks (bench/forwarder.mjs forwards tools/call
// plainly, so a task-required tool fails through it with -32601), so the baseline is the direct path.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolResultSchema, CreateTaskResultSchema, type CallToolResult, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import YAML from "yaml";
import { BIN, ROOT, isolatedEnv, numberFlag } from "./setup.js";

const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const FIXTURE = join(ROOT, "test/fixtures/task-server.mjs");
const CALLS = numberFlag("calls", 100);
const TASK_CALLS = numberFlag("task-calls", 20);
const WARMUP = 5;
const SLOW_ARGS = { steps: 3, stepMs: 100, pollInterval: 500 };

const home = mkdtempSync(join(tmpdir(), "mcphub-bench-tasks-"));
const env = isolatedEnv(home);

/** A client whose transport counts what crosses it, both ways. */
interface Counted {
  client: Client;
  messages: number;
  bytes: number;
}

async function connect(command: string, args: string[]): Promise<Counted> {
  const transport = new StdioClientTransport({ command, args, env, stderr: "ignore" });
  const counted: Counted = { client: new Client({ name: "bench-tasks", version: "1.0.0" }), messages: 0, bytes: 0 };
  count(transport, counted);
  await counted.client.connect(transport);
  return counted;
}

function count(t: Transport, c: Counted): void {
  const send = t.send.bind(t);
  t.send = async (m: JSONRPCMessage, o) => {
    c.messages++;
    c.bytes += Buffer.byteLength(JSON.stringify(m));
    return send(m, o);
  };
  // The client sets onmessage when it connects; wrap whatever it sets.
  let handler: Transport["onmessage"];
  Object.defineProperty(t, "onmessage", {
    get: () => handler,
    set: (h: Transport["onmessage"]) => {
      handler = (m, extra) => {
        c.messages++;
        c.bytes += Buffer.byteLength(JSON.stringify(m));
        h?.(m, extra);
      };
    },
  });
}

interface Row {
  path: string;
  ms: number[];
  messages: number;
  bytes: number;
  /** What a model reads of the answer it is given first. */
  answer: number;
}

type Way = (c: Client) => Promise<number>;

const bytes = (x: unknown) => Buffer.byteLength(JSON.stringify(x));

function check(r: CallToolResult, what: string): CallToolResult {
  if (r.isError) throw new Error(`${what} failed: ${JSON.stringify(r.content).slice(0, 300)}`);
  return r;
}

const plain =
  (name: string, args: Record<string, unknown>): Way =>
  async (c) =>
    bytes(check((await c.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, { timeout: 120_000 })) as CallToolResult, name).content);

/** tools/call with task, then tasks/result at once (it blocks until the task is done). */
const taskThenResult =
  (name: string, args: Record<string, unknown>): Way =>
  async (c) => {
    const created = await c.request({ method: "tools/call", params: { name, arguments: args, task: {} } }, CreateTaskResultSchema);
    const r = (await c.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)) as CallToolResult;
    check(r, name);
    const immediate = created._meta?.["io.modelcontextprotocol/model-immediate-response"];
    return bytes(immediate ?? created.task);
  };

/** The SDK's own requestor loop. */
const stream =
  (name: string, args: Record<string, unknown>): Way =>
  async (c) => {
    let answer = 0;
    let done = false;
    for await (const m of c.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: {}, timeout: 120_000 })) {
      if (m.type === "taskCreated") answer = bytes(m.task);
      else if (m.type === "result") done = Boolean(check(m.result as CallToolResult, name));
      else if (m.type === "error") throw m.error;
    }
    if (!done) throw new Error(`${name}: no result`);
    return answer;
  };

async function measure(path: string, c: Counted, way: Way, n: number): Promise<Row> {
  for (let i = 0; i < WARMUP; i++) await way(c.client);
  const ms: number[] = [];
  const m0 = c.messages;
  const b0 = c.bytes;
  let answer = 0;
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    answer = await way(c.client);
    ms.push(performance.now() - t);
  }
  return { path, ms, messages: (c.messages - m0) / n, bytes: (c.bytes - b0) / n, answer };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const f1 = (x: number) => x.toFixed(1);

function config(name: string, servers: Record<string, unknown>): string {
  const path = join(home, `${name}.yaml`);
  writeFileSync(path, YAML.stringify({ expose: "all", servers }));
  return path;
}

async function gateway(cfg: string, wait: string): Promise<Counted> {
  const c = await connect(process.execPath, [BIN, "--config", cfg, "mcp", "serve"]);
  for (let i = 0; i < 600; i++) {
    if ((await c.client.listTools()).tools.some((t) => t.name === wait)) return c;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${wait} never listed`);
}

try {
  const servers = {
    everything: { command: process.execPath, args: [EVERYTHING], start: "eager" },
    jobs: { command: process.execPath, args: [FIXTURE], start: "eager" },
  };
  const gw = await gateway(config("all", servers), "jobs__slow");
  const everything = await connect(process.execPath, [EVERYTHING]);
  const fixture = await connect(process.execPath, [FIXTURE]);
  const echo = { message: "hello" };
  const rows: Row[] = [];
  rows.push(await measure("echo, plain call, direct", everything, plain("echo", echo), CALLS));
  rows.push(await measure("echo, plain call, through mcphub", gw, plain("everything__echo", echo), CALLS));
  rows.push(await measure("echo as a task through mcphub (call + tasks/result)", gw, taskThenResult("everything__echo", echo), CALLS));
  rows.push(await measure("echo as a task through mcphub (callToolStream)", gw, stream("everything__echo", echo), CALLS));
  rows.push(await measure("slow task, callToolStream, direct", fixture, stream("slow", SLOW_ARGS), TASK_CALLS));
  rows.push(await measure("slow task, plain call through mcphub (mcphub follows it)", gw, plain("jobs__slow", SLOW_ARGS), TASK_CALLS));
  rows.push(await measure("slow task, callToolStream through mcphub", gw, stream("jobs__slow", SLOW_ARGS), TASK_CALLS));

  console.log(`\nsequential calls (echo ${CALLS}, slow ${TASK_CALLS}, after ${WARMUP} warm-up); slow = ${JSON.stringify(SLOW_ARGS)}\n`);
  console.log("| path | p50 ms | p95 ms | messages / call | wire bytes / call | first answer bytes |");
  console.log("|---|---|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.path} | ${f1(pct(r.ms, 50))} | ${f1(pct(r.ms, 95))} | ${f1(r.messages)} | ${Math.round(r.bytes)} | ${r.answer} |`);
  const p50 = (i: number) => pct(rows[i]?.ms ?? [], 50);
  console.log(`\necho: through mcphub / direct ${(p50(1) / p50(0)).toFixed(2)}x; as a task (call + result) / plain through mcphub ${(p50(2) / p50(1)).toFixed(2)}x`);
  console.log(`slow: plain through mcphub / direct stream ${(p50(5) / p50(4)).toFixed(2)}x; stream through mcphub / direct stream ${(p50(6) / p50(4)).toFixed(2)}x`);

  const tools = (await gw.client.listTools()).tools;
  const all = bytes(tools);
  const without = bytes(tools.map(({ execution: _e, ...rest }) => rest));
  const marked = tools.filter((t) => t.execution !== undefined).length;
  console.log(`\ntools/list (expose: all, everything + jobs, ${tools.length} tools): ${all} bytes, of which execution.taskSupport ${all - without} (${marked} tools, ${((100 * (all - without)) / all).toFixed(1)} %)`);
  for (const c of [gw, everything, fixture]) await c.client.close();
} finally {
  rmSync(home, { recursive: true, force: true });
}
