// The OpenTelemetry side of tracing, loaded only when `telemetry.otlp.url` is set (index.ts).
// One backend per setting: a call's spans are SpanRecords (span-record.ts: what the SDK's Span
// costs and why it is not made), with the SDK's sampling decisions (sampling.ts), written to
// OTLP/protobuf as each ends and sent in batches through the SDK's OTLP/HTTP delegate
// (export.ts, otlp-proto.ts). The W3C trace context propagator is installed once per process.
// Nothing is registered as the global tracer provider, so a reload can replace the backend.
//
// A call's spans are made with explicit parents (CallTrace), not through the context manager.
// The AsyncLocalStorage context manager, once enabled, runs a hook for every promise the process
// makes, traced or not: profiled on the echo bench that was ~40 µs of a 200–550 µs call, more
// than the whole budget tracing has (+20%). So it is installed only when something needs the
// current span to follow awaits into code that cannot be handed it: the fetch of an HTTP
// downstream, deep inside the SDK's transport, which adds the traceparent (ClientSpan.within).
// A gateway whose downstreams are all stdio never installs it.
import { context, isSpanContextValid, propagation, ROOT_CONTEXT, SamplingDecision, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { Call, type Recorder, type TraceIdentity } from "./call.js";
import { otlpHttpSender, SpanExport, type SendBatch } from "./export.js";
import { ParentFirstSampler, PooledIdGenerator } from "./sampling.js";
import { WallClock, type SpanSource } from "./span-record.js";
import type { CallTrace, ExportCounts, OtlpSettings, SpanAttributes, TracingBackend } from "./types.js";

let propagatorSet = false;
let contextManager = false;

/** The context manager, installed at the first use of a context (see the head of this file). */
function installContextManager(): void {
  if (contextManager) return;
  contextManager = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

/** Node's request headers have lower-case names. */
const getter = {
  keys: (carrier: Record<string, string | string[] | undefined>) => Object.keys(carrier),
  get: (carrier: Record<string, string | string[] | undefined>, key: string) => carrier[key.toLowerCase()],
};

const setter = { set: (carrier: Record<string, string>, key: string, value: string) => (carrier[key] = value) };

export interface OtelOptions {
  /** Replaces the OTLP/HTTP sender, for the benchmark's rows that stop before the network (bench/ops-spans.ts). */
  send?: SendBatch;
  /** Added to as sends end (the process's counts, across reloads: index.ts). */
  counts?: ExportCounts;
}

export function startOtel(settings: OtlpSettings, version: string, options: OtelOptions = {}): TracingBackend {
  if (!propagatorSet) {
    propagatorSet = true;
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  }
  const resource = { "service.name": settings.service_name, "service.version": version };
  const source: SpanSource = { resource: resourceFromAttributes(resource), instrumentationScope: { name: "mcphub", version } };
  const envelope = { resource, scope: source.instrumentationScope };
  const sender = options.send ? { send: options.send, shutdown: async () => undefined } : otlpHttpSender(settings.url);
  const processor = new SpanExport(envelope, sender.send, () => sender.shutdown(), options.counts);
  // A client's sampled traceparent is followed; a request without one is sampled at `sample`
  // (ParentBasedSampler's decisions, with less work per span: sampling.ts).
  const sampler = new ParentFirstSampler(settings.sample);
  const ids = new PooledIdGenerator();

  const recorder: Recorder = {
    source,
    sink: processor,
    ids,
    clock: new WallClock(),
    within: (span, fn) => {
      installContextManager();
      return context.with(trace.setSpanContext(ROOT_CONTEXT, span), fn);
    },
  };

  const startCall = (name: string, attributes: SpanAttributes, headers: Record<string, string | string[] | undefined> | undefined): CallTrace => {
    const parentContext = headers?.traceparent !== undefined ? propagation.extract(ROOT_CONTEXT, headers, getter) : ROOT_CONTEXT;
    // As the SDK's Tracer: a valid parent gives the trace id and trace state; else a new trace.
    const remote = trace.getSpanContext(parentContext);
    const parent = remote !== undefined && isSpanContextValid(remote) ? remote : undefined;
    // Left to right: the id is taken first, then where its bytes are.
    const identity: TraceIdentity = parent ? { id: parent.traceId, bytes: Buffer.from(parent.traceId, "hex"), at: 0 } : { id: ids.generateTraceId(), bytes: ids.bytes, at: ids.at };
    const recording = sampler.shouldSample(parentContext, identity.id, name, SpanKind.SERVER, attributes, []).decision === SamplingDecision.RECORD_AND_SAMPLED;
    return new Call(recorder, identity, parent?.traceState, parent, recording, name, attributes);
  };

  return {
    startCall,
    outside: (fn) => (contextManager ? context.with(ROOT_CONTEXT, fn) : fn()),
    inject: (headers) => propagation.inject(context.active(), headers, setter),
    traceId: () => {
      const id = trace.getSpanContext(context.active())?.traceId;
      return id && id !== "00000000000000000000000000000000" ? id : undefined;
    },
    shutdown: () => processor.shutdown(),
  };
}
