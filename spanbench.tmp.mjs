import { spawn } from "node:child_process";
import { context, trace, ROOT_CONTEXT, SpanKind } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-node";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base";
import { createOtlpHttpExportDelegate, convertLegacyHttpOptions } from "@opentelemetry/otlp-exporter-base/node-http";
import { ProtobufTraceSerializer, TraceExporterMetricsHelper } from "@opentelemetry/otlp-transformer";
const mode = process.argv[2]; // json|proto|none
const als = process.argv[3] === "als";
const batch = Number(process.argv[4] ?? 512);
const N = 20000;
const child = spawn(process.execPath, ["/tmp/ops-tools/recv.mjs"], { stdio: ["ignore", "pipe", "inherit"] });
const port = await new Promise((r) => child.stdout.once("data", (d) => r(Number(String(d).trim()))));
const url = `http://127.0.0.1:${port}/v1/traces`;
if (als) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
let exporter;
if (mode === "json") exporter = new OTLPTraceExporter({ url });
else if (mode === "proto") exporter = new OTLPExporterBase(createOtlpHttpExportDelegate(convertLegacyHttpOptions({ url }, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" }), ProtobufTraceSerializer, "otlp_http_span_exporter", TraceExporterMetricsHelper));
else if (mode === "custom") {
  const http = await import("node:http");
  const agent = new http.Agent({ keepAlive: true });
  const ns = (t) => `${t[0]}${String(t[1]).padStart(9, "0")}`;
  const av = (v) => (typeof v === "string" ? `{"stringValue":${JSON.stringify(v)}}` : typeof v === "boolean" ? `{"boolValue":${v}}` : Number.isInteger(v) ? `{"intValue":${v}}` : `{"doubleValue":${v}}`);
  const attrs = (a) => Object.entries(a).map(([k, v]) => `{"key":${JSON.stringify(k)},"value":${av(v)}}`).join(",");
  exporter = {
    export(spans, cb) {
      const parts = spans.map((s) => { const c = s.spanContext(); return `{"traceId":"${c.traceId}","spanId":"${c.spanId}"${s.parentSpanContext ? `,"parentSpanId":"${s.parentSpanContext.spanId}"` : ""},"name":${JSON.stringify(s.name)},"kind":${s.kind + 1},"startTimeUnixNano":"${ns(s.startTime)}","endTimeUnixNano":"${ns(s.endTime)}","attributes":[${attrs(s.attributes)}],"status":{"code":${s.status.code}}}`; });
      const body = `{"resourceSpans":[{"resource":{"attributes":[${attrs(spans[0].resource.attributes)}]},"scopeSpans":[{"scope":{"name":"mcphub","version":"0.1.0"},"spans":[${parts.join(",")}]}]}]}`;
      const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => { res.resume(); res.on("end", () => cb({ code: 0 })); });
      req.on("error", () => cb({ code: 1 })); req.end(body);
    }, shutdown: async () => {}, forceFlush: async () => {} };
}
else exporter = { export: (s, cb) => cb({ code: 0 }), shutdown: async () => {}, forceFlush: async () => {} };
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": "mcphub", "service.version": "0.1.0" }),
  sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(1) }),
  spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000, maxExportBatchSize: batch, maxQueueSize: Math.max(2048, batch * 4) })],
});
const tracer = provider.getTracer("mcphub", "0.1.0");
const stages = ["mcphub.locate", "mcphub.guard", "mcphub.limit", "mcphub.dispatch", "mcphub.finalize"];
async function call(i) {
  const root = tracer.startSpan("tools/call bench__echo", { kind: SpanKind.SERVER, attributes: { "mcp.method.name": "tools/call", "gen_ai.tool.name": "bench__echo", "mcphub.agent": "", "mcphub.session": 1 } }, ROOT_CONTEXT);
  const ctx = trace.setSpan(ROOT_CONTEXT, root);
  if (als) {
    for (const s of stages) { const sp = tracer.startSpan(s, {}, ctx); await context.with(trace.setSpan(ctx, sp), async () => { await null; }); sp.end(); }
  } else {
    const t0 = performance.timeOrigin + performance.now();
    for (const s of stages) { const sp = tracer.startSpan(s, { startTime: t0 }, ctx); sp.end(t0 + 0.1); }
  }
  const c = tracer.startSpan("tools/call echo", { kind: SpanKind.CLIENT, attributes: { "mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "mcphub.server": "bench" } }, ctx);
  await null; c.end();
  root.setAttributes({ "mcphub.outcome": "ok", "mcphub.server": "bench", "mcphub.tool": "bench__echo" });
  root.end();
}
// warmup
for (let i = 0; i < 3000; i++) await call(i);
await provider.forceFlush();
const u0 = process.cpuUsage(); const t0 = performance.now();
for (let i = 0; i < N; i++) { await call(i); if (i % 16 === 0) await new Promise((r) => setImmediate(r)); }
await provider.forceFlush();
const u = process.cpuUsage(u0);
const stats = await (await fetch(`http://127.0.0.1:${port}/`)).json();
console.log(`${mode} als=${als} batch=${batch}: ${((u.user + u.system) / N).toFixed(1)} us/call cpu (user ${(u.user/N).toFixed(1)} sys ${(u.system/N).toFixed(1)}), ${(stats.bytes / (N+3000) / 7).toFixed(0)} B/span`);
await provider.shutdown(); child.kill();
