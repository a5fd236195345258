// What a traced call's spans cost, piece by piece, in one process (issue 28; the whole gateway's
// figure is bench/ops.ts). One command:
//   npx tsx bench/ops-spans.ts [--calls 4000] [--rounds 6]
// Each row makes the five spans of a plain echo call (the request's, locate, guard, dispatch and
// the downstream call under it, with the gateway's attributes), 16 calls at a time with a 4 ms
// pause between groups (~3,000 calls a second, as the gateway does with 16 in flight), and counts
// this process's CPU (every thread: process.cpuUsage) per call, including the batch the export
// timer sends after the row. Rows run round-robin, order reversed every other round; medians.
//   loop alone          the calls without spans (subtracted from the rows below)
//   SDK spans           NodeTracerProvider + BatchSpanProcessor with the SDK's own sampler and ids
//                       (ParentBasedSampler, RandomIdGenerator), an exporter that drops the batch
//   + mcphub's sampler  the same with mcphub's sampler and ids (src/telemetry/tracing/sampling.ts)
//   + OTLP JSON         the same, the exporter serialising each batch as OTLPTraceExporter does
//   mcphub, protobuf    mcphub's own tracing (src/telemetry/tracing/otel.ts): span records,
//                       each written to OTLP/protobuf as it ends; the batches are dropped
//   mcphub, sent        the same, sent over OTLP/HTTP to the receiver (bench/otlp-receiver.mjs,
//                       a process of its own)
// Then one send of N spans by N, what a send costs apart from its spans: through the SDK's
// OTLPTraceExporter (JSON, serialised in the send) and through mcphub's sender (protobuf already
// written, as the spans ended: src/telemetry/tracing/export.ts).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT_CONTEXT, SpanKind, trace, type Tracer } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace-node";
import { otlpHttpSender, type SendBatch } from "../src/telemetry/tracing/export.js";
import { SpanBatch } from "../src/telemetry/tracing/otlp-proto.js";
import { startOtel } from "../src/telemetry/tracing/otel.js";
import { ParentFirstSampler, PooledIdGenerator } from "../src/telemetry/tracing/sampling.js";
import { ROOT, numberFlag } from "./setup.js";

const CALLS = numberFlag("calls", 4000);
const ROUNDS = numberFlag("rounds", 6);
const GROUP = 16;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

async function receiver(): Promise<{ url: string; close(): void }> {
  const child = spawn(process.execPath, [join(ROOT, "bench/otlp-receiver.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding("utf8").once("data", (d: string) => resolve(Number(d.trim())));
    child.once("exit", () => reject(new Error("the OTLP receiver exited")));
  });
  return { url: `http://127.0.0.1:${port}/v1/traces`, close: () => child.stdin.end() };
}

/** An exporter that answers at once: `serialize` makes the OTLP JSON body first, as OTLPTraceExporter does. */
function localExporter(serialize: boolean): SpanExporter {
  return {
    export: (spans: ReadableSpan[], done: (r: ExportResult) => void) => {
      if (serialize) JsonTraceSerializer.serializeRequest(spans);
      done({ code: ExportResultCode.SUCCESS });
    },
    shutdown: async () => undefined,
  };
}

const ROOT_ATTRS = { "mcp.method.name": "tools/call", "gen_ai.tool.name": "bench__echo", "mcphub.agent": "default", "mcphub.session": 1 };
const CLIENT_ATTRS = { "mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "mcphub.server": "bench" };
const OUTCOME_ATTRS = { "mcphub.outcome": "ok", "mcphub.server": "bench", "mcphub.tool": "bench__echo" };

/** One call's spans through the SDK, shaped as otel.ts makes them (stages started late, with their own start time). */
async function sdkCall(tracer: Tracer): Promise<void> {
  const root = tracer.startSpan("tools/call bench__echo", { kind: SpanKind.SERVER, attributes: ROOT_ATTRS }, ROOT_CONTEXT);
  const rootContext = trace.setSpan(ROOT_CONTEXT, root);
  for (const stage of ["mcphub.locate", "mcphub.guard"]) tracer.startSpan(stage, { startTime: performance.now() }, rootContext).end();
  const dispatch = tracer.startSpan("mcphub.dispatch", { startTime: performance.now() }, rootContext);
  const client = tracer.startSpan("tools/call echo", { kind: SpanKind.CLIENT, attributes: CLIENT_ATTRS }, trace.setSpan(ROOT_CONTEXT, dispatch));
  await null; // the downstream answers later
  client.end();
  dispatch.end();
  root.setAttributes(OUTCOME_ATTRS);
  root.end();
}

interface Row {
  label: string;
  call: () => Promise<void>;
  shutdown: () => Promise<void>;
}

function sdkRow(label: string, exporter: SpanExporter, ours: boolean): Row {
  const provider = new NodeTracerProvider({
    ...(ours ? { sampler: new ParentFirstSampler(1), idGenerator: new PooledIdGenerator() } : {}),
    resource: resourceFromAttributes({ "service.name": "mcphub", "service.version": "bench" }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000, maxQueueSize: 16_384, maxExportBatchSize: 2048 })],
  });
  const tracer = provider.getTracer("mcphub", "bench");
  return { label, call: () => sdkCall(tracer), shutdown: () => provider.shutdown() };
}

function mcphubRow(url: string, label = "mcphub's tracing, sent (OTLP/HTTP)", send?: SendBatch): Row {
  const backend = startOtel({ url, sample: 1, service_name: "mcphub" }, "bench", send ? { send } : {});
  return {
    label,
    call: async () => {
      const t = backend.startCall("tools/call bench__echo", ROOT_ATTRS, undefined);
      for (const stage of ["mcphub.locate", "mcphub.guard"]) t.stage(stage).end({ keep: true });
      const dispatch = t.stage("mcphub.dispatch");
      const client = t.child("tools/call echo", "client", CLIENT_ATTRS);
      await null;
      client.end();
      dispatch.end({ keep: true });
      t.annotate({ attributes: OUTCOME_ATTRS });
      t.end();
    },
    shutdown: () => backend.shutdown(),
  };
}

async function runRow(row: Row, calls: number): Promise<number> {
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i += GROUP) {
    await Promise.all(Array.from({ length: GROUP }, () => row.call()));
    await sleep(4);
  }
  await sleep(1100); // the export timer's last batch
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / calls;
}

/** The CPU of one send of `size` spans, sent one after another, by `send` (the body made inside it, or before). */
async function sendCost(size: number, send: () => Promise<boolean>): Promise<number> {
  for (let i = 0; i < 10; i++) await send();
  const sends = Math.max(20, Math.round(8192 / size));
  const c0 = process.cpuUsage();
  for (let i = 0; i < sends; i++) if (!(await send())) throw new Error(`a send of ${size} spans failed`);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / sends;
}

/** OTLPTraceExporter: the batch serialised to JSON and sent. */
async function sdkSendCost(url: string, spans: ReadableSpan[], size: number): Promise<number> {
  const exporter = new OTLPTraceExporter({ url });
  const batch = spans.slice(0, size);
  const us = await sendCost(size, () => new Promise<boolean>((r) => exporter.export(batch, (e) => r(e.code === ExportResultCode.SUCCESS))));
  await exporter.shutdown();
  return us;
}

/** mcphub's sender: a request already written (as its spans ended), sent. */
async function mcphubSendCost(url: string, spans: ReadableSpan[], size: number): Promise<number> {
  const sender = otlpHttpSender(url);
  const batch = new SpanBatch({ resource: { "service.name": "mcphub" }, scope: { name: "mcphub", version: "bench" } });
  for (const span of spans.slice(0, size)) batch.add(span);
  const body = batch.take() as Uint8Array;
  const us = await sendCost(size, () => new Promise<boolean>((r) => sender.send(body, size, r)));
  await sender.shutdown();
  return us;
}

async function main() {
  console.log(`span cost benchmark: ${CALLS} calls of five spans per row, ${ROUNDS} rounds, node ${process.version}, load ${load()}, ${new Date().toISOString()}`);
  const otlp = await receiver();
  const loop: Row = { label: "loop alone (no spans)", call: async () => void (await null), shutdown: async () => undefined };
  const rows = [
    loop,
    sdkRow("SDK spans (batch dropped)", localExporter(false), false),
    sdkRow("+ mcphub's sampler and ids", localExporter(false), true),
    sdkRow("+ OTLP JSON (serialised, not sent)", localExporter(true), true),
    mcphubRow(otlp.url, "mcphub's spans, protobuf (dropped)", (_body, _spans, done) => done(true)),
    mcphubRow(otlp.url),
  ];
  for (const row of rows) await runRow(row, 1000);
  const samples = new Map<Row, number[]>(rows.map((r) => [r, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const row of round % 2 ? [...rows].reverse() : rows) samples.get(row)?.push(await runRow(row, CALLS));
    process.stderr.write(`round ${round + 1}/${ROUNDS} done (load ${load()})\n`);
  }
  const base = median(samples.get(loop) ?? []);
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(`\n${pad("row", 40)}${pad("CPU µs/call", 16)}${pad("less the loop", 16)}per span`);
  for (const row of rows) {
    const xs = samples.get(row) ?? [];
    const m = median(xs);
    const net = m - base;
    console.log(`${pad(row.label, 40)}${pad(`${m.toFixed(1)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`, 16)}${pad(row === loop ? "" : net.toFixed(1), 16)}${row === loop ? "" : (net / 5).toFixed(1)}`);
  }
  for (const row of rows) await row.shutdown();

  // Spans to send: made once, kept in memory.
  const memory = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ resource: resourceFromAttributes({ "service.name": "mcphub" }), spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("mcphub", "bench");
  for (let i = 0; i < 410; i++) await sdkCall(tracer);
  const spans = memory.getFinishedSpans();
  console.log(`\n${pad("one send of", 40)}${pad("CPU µs/send", 16)}per span`);
  for (const size of [32, 128, 512, 2048]) {
    const sdk = await sdkSendCost(otlp.url, spans, size);
    console.log(`${pad(`${size} spans, OTLPTraceExporter (JSON)`, 40)}${pad(sdk.toFixed(0), 16)}${(sdk / size).toFixed(1)}`);
    const ours = await mcphubSendCost(otlp.url, spans, size);
    console.log(`${pad(`${size} spans, mcphub's (protobuf written)`, 40)}${pad(ours.toFixed(0), 16)}${(ours / size).toFixed(1)}`);
  }
  await provider.shutdown();
  console.log(`\n(load at the end ${load()})`);
  otlp.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
