// The OTLP/protobuf bytes mcphub writes as each span ends (src/telemetry/tracing/otlp-proto.ts)
// are the bytes the OpenTelemetry SDK's own protobuf serialiser writes for the same spans: the
// same ExportTraceServiceRequest, field for field. Any collector that reads the SDK's exports
// reads ours.
import { SpanKind, SpanStatusCode, TraceFlags, type SpanContext } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { describe, expect, it } from "vitest";
import { SpanBatch } from "../../../src/telemetry/tracing/otlp-proto.js";
import { Call, type Recorder } from "../../../src/telemetry/tracing/call.js";
import { PooledIdGenerator } from "../../../src/telemetry/tracing/sampling.js";
import { CallClock, OwnSpanContext, SpanRecord, WallClock, type SpanSource } from "../../../src/telemetry/tracing/span-record.js";
import type { SpanAttributes } from "../../../src/telemetry/tracing/types.js";

const RESOURCE = { "service.name": "mcphub-test", "service.version": "1.2.3" };
const source: SpanSource = { resource: resourceFromAttributes(RESOURCE), instrumentationScope: { name: "mcphub", version: "1.2.3" } };
const clock = new WallClock();

function span(name: string, kind: SpanKind, context: SpanContext, parent: SpanContext | undefined, attributes: SpanAttributes, error?: string, lengthMs = 1.5): SpanRecord {
  const started = performance.now();
  // Each its own call's clock, with its base a little before the span (as a stage's is).
  const s = new SpanRecord(source, name, kind, context, parent, new CallClock(clock, clock.offset(), started - 0.37), started, attributes);
  if (error !== undefined) s.fail(error);
  s.finish(started + lengthMs);
  return s;
}

const ctx = (traceId: string, spanId: string, extra: Partial<SpanContext> = {}): SpanContext => ({ traceId, spanId, traceFlags: TraceFlags.SAMPLED, ...extra });
const T = "4bf92f3577b34da6a3ce929d0e0e4736";

function spans(): SpanRecord[] {
  // A client's remote parent; then, as a call makes them, each of ours the parent of the next.
  const remote = ctx(T, "00f067aa0ba902b7", { isRemote: true, traceState: new TraceState("vendor=abc,other=1") });
  const request = span("tools/call bench__echo", SpanKind.SERVER, ctx(T, "a1b2c3d4e5f60718", { traceState: remote.traceState }), remote, { "mcp.method.name": "tools/call", "gen_ai.tool.name": "bench__echo", "mcphub.session": 7, "mcphub.ok": true });
  // Added at the end (annotate, end): one key replaced in place, new ones after, as in the SDK's Span.
  request.addAttributes({ "mcphub.session": 8, "mcphub.outcome": "ok" });
  request.addAttributes({ "mcphub.server": "bench" });
  const stage = span("mcphub.locate", SpanKind.INTERNAL, ctx(T, "0102030405060708", { traceState: remote.traceState }), request.spanContext(), {}, undefined, 0.004);
  return [
    request,
    stage,
    span("tools/call échø ✓", SpanKind.CLIENT, ctx(T, "ffeeddccbbaa9988", { traceState: remote.traceState }), stage.spanContext(), { "mcphub.server": "bench", big: 2 ** 40, negative: -3, ratio: 0.25 }, "McpError", 250),
    span("a root of its own", SpanKind.INTERNAL, ctx("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", { traceFlags: TraceFlags.SAMPLED }), undefined, { ["x".repeat(200)]: "y".repeat(300) }),
    // A client may send its ids in upper case (W3C asks for lower; the API's check allows both).
    span("upper-case ids", SpanKind.SERVER, ctx("0AF7651916CD43DD8448EB211C80319C", "B7aD6b7169203331"), ctx("0AF7651916CD43DD8448EB211C80319C", "00F067AA0BA902B7", { isRemote: true }), {}),
  ];
}

describe("OTLP/protobuf spans", () => {
  it("are the SDK serialiser's bytes for the same spans", () => {
    const batch = new SpanBatch({ resource: RESOURCE, scope: { name: "mcphub", version: "1.2.3" } });
    const all = spans();
    for (const s of all) batch.add(s);
    expect(batch.count).toBe(all.length);
    const ours = batch.take();
    const sdk = ProtobufTraceSerializer.serializeRequest(all);
    expect(ours).toBeDefined();
    expect(Buffer.from(ours as Uint8Array).toString("hex")).toBe(Buffer.from(sdk as Uint8Array).toString("hex"));
  });

  it("start afresh after a take, and keep agreeing over many batches of many spans", () => {
    const batch = new SpanBatch({ resource: RESOURCE, scope: { name: "mcphub", version: "1.2.3" } });
    expect(batch.take()).toBeUndefined();
    for (let round = 0; round < 3; round++) {
      const all = Array.from({ length: 700 }, () => spans()).flat(); // a buffer grown past its first size, and lengths of 3 bytes
      for (const s of all) batch.add(s);
      const ours = batch.take() as Uint8Array;
      expect(batch.count).toBe(0);
      expect(Buffer.compare(Buffer.from(ours), Buffer.from(ProtobufTraceSerializer.serializeRequest(all) as Uint8Array))).toBe(0);
    }
  });

  it("write an error's class as the status message and code", () => {
    const batch = new SpanBatch({ resource: RESOURCE, scope: { name: "mcphub", version: "1.2.3" } });
    const s = span("failed", SpanKind.INTERNAL, ctx(T, "1111111111111111"), undefined, {}, "TimeoutError");
    expect(s.status).toEqual({ code: SpanStatusCode.ERROR, message: "TimeoutError" });
    batch.add(s);
    const bytes = Buffer.from(batch.take() as Uint8Array);
    expect(bytes.includes(Buffer.from("TimeoutError"))).toBe(true);
    expect(Buffer.compare(bytes, Buffer.from(ProtobufTraceSerializer.serializeRequest([s]) as Uint8Array))).toBe(0);
  });

  it("read a record as the SDK's shapes where the SDK reads it", () => {
    const [request, stage] = spans();
    expect(stage?.parentSpanContext).toEqual(request?.spanContext());
    expect(request?.parentSpanContext?.isRemote).toBe(true);
    const [s, ns] = stage?.duration ?? [0, 0];
    expect(s).toBe(0);
    expect(ns).toBeGreaterThanOrEqual(3_000); // 0.004 ms, within the clock's rounding
    expect(ns).toBeLessThanOrEqual(5_000);
  });

  it("keep a call's times to the ns against the wall clock, before its base and days after it", () => {
    const base = performance.now();
    const offset = clock.offset();
    const callClock = new CallClock(clock, offset, base);
    const ns = ([s, n]: [number, number]) => BigInt(s) * 1_000_000_000n + BigInt(n);
    for (const ms of [base, base - 12.5, base + 0.000_7, base + 3 * 86_400_000 + 0.123_456]) {
      const diff = ns(callClock.hrTime(ms)) - ns(clock.at(ms, offset));
      expect(diff <= 1n && diff >= -1n).toBe(true); // the two round apart by 1 ns at most
    }
    const early = new SpanRecord(source, "early and long", SpanKind.INTERNAL, ctx(T, "2222222222222222"), undefined, callClock, base - 12.5, {});
    early.finish(base + 3 * 86_400_000 + 0.123_456);
    const batch = new SpanBatch({ resource: RESOURCE, scope: { name: "mcphub", version: "1.2.3" } });
    batch.add(early);
    expect(Buffer.compare(Buffer.from(batch.take() as Uint8Array), Buffer.from(ProtobufTraceSerializer.serializeRequest([early]) as Uint8Array))).toBe(0);
  });
});

describe("a call's spans, with mcphub's own ids and clock", () => {
  /** A call's five spans, as the gateway makes them, collected as they end. */
  function callSpans(identity?: { parent: SpanContext }): SpanRecord[] {
    const ended: SpanRecord[] = [];
    const ids = new PooledIdGenerator();
    const recorder: Recorder = { source, sink: { add: (s) => void ended.push(s as SpanRecord), shutdown: async () => undefined }, ids, clock, within: (_span, fn) => fn() };
    const parent = identity?.parent;
    const trace = parent ? { id: parent.traceId, bytes: Buffer.from(parent.traceId, "hex"), at: 0 } : { id: ids.generateTraceId(), bytes: ids.bytes, at: ids.at };
    const call = new Call(recorder, trace, parent?.traceState, parent, true, "tools/call bench__echo", { "mcp.method.name": "tools/call", "mcphub.session": 3 });
    call.stage("mcphub.locate").end({ keep: true });
    call.stage("mcphub.guard").end({ keep: true });
    const dispatch = call.stage("mcphub.dispatch");
    const client = call.child("tools/call echo", "client", { "mcphub.server": "bench" });
    client.end({ error: "McpError" });
    dispatch.end({ keep: true });
    call.annotate({ attributes: { "mcphub.outcome": "failed" } });
    call.end();
    return ended;
  }

  it("are the SDK serialiser's bytes: ids copied from the pool, times from the call's clock", () => {
    // Many calls: past several refills of the id pool (a refill leaves earlier ids' bytes as they were).
    const all = Array.from({ length: 200 }, () => callSpans()).flat();
    expect(all.every((s) => s.spanContext() instanceof OwnSpanContext)).toBe(true);
    const batch = new SpanBatch({ resource: RESOURCE, scope: { name: "mcphub", version: "1.2.3" } });
    for (const s of all) batch.add(s);
    expect(Buffer.compare(Buffer.from(batch.take() as Uint8Array), Buffer.from(ProtobufTraceSerializer.serializeRequest(all) as Uint8Array))).toBe(0);
  });

  it("follow a client's trace: its id decoded once, its span the root's remote parent", () => {
    const parent = ctx("0AF7651916CD43DD8448EB211C80319C", "00f067aa0ba902b7", { isRemote: true, traceState: new TraceState("vendor=abc") });
    const all = callSpans({ parent });
    expect(all.map((s) => s.spanContext().traceId)).toEqual(Array(5).fill(parent.traceId));
    expect(all.at(-1)?.parentSpanContext).toBe(parent);
    const batch = new SpanBatch({ resource: RESOURCE, scope: { name: "mcphub", version: "1.2.3" } });
    for (const s of all) batch.add(s);
    expect(Buffer.compare(Buffer.from(batch.take() as Uint8Array), Buffer.from(ProtobufTraceSerializer.serializeRequest(all) as Uint8Array))).toBe(0);
  });
});
