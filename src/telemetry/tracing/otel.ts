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
import { context, isSpanContextValid, propagation, ROOT_CONTEXT, SamplingDecision, SpanKind, trace, TraceFlags, type SpanContext } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { otlpHttpSender, SpanExport, type SendBatch } from "./export.js";
import { ParentFirstSampler, PooledIdGenerator } from "./sampling.js";
import { SpanRecord, WallClock, type SpanSource } from "./span-record.js";
import type { CallTrace, ClientSpan, OtlpSettings, SpanAttributes, SpanEnd, StageSpan, TracingBackend } from "./types.js";

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

const NO_SPAN: StageSpan = { end: () => undefined };
const NO_ATTRIBUTES: SpanAttributes = Object.freeze({});

/** `send` replaces the OTLP/HTTP sender for the benchmark's rows that stop before the network (bench/ops-spans.ts). */
export function startOtel(settings: OtlpSettings, version: string, send?: SendBatch): TracingBackend {
  if (!propagatorSet) {
    propagatorSet = true;
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  }
  const resource = { "service.name": settings.service_name, "service.version": version };
  const source: SpanSource = { resource: resourceFromAttributes(resource), instrumentationScope: { name: "mcphub", version } };
  const envelope = { resource, scope: source.instrumentationScope };
  const sender = send ? { send, shutdown: async () => undefined } : otlpHttpSender(settings.url);
  const processor = new SpanExport(envelope, sender.send, () => sender.shutdown());
  // A client's sampled traceparent is followed; a request without one is sampled at `sample`
  // (ParentBasedSampler's decisions, with less work per span: sampling.ts).
  const sampler = new ParentFirstSampler(settings.sample);
  const ids = new PooledIdGenerator();
  const clock = new WallClock();

  const startCall = (name: string, attributes: SpanAttributes, headers: Record<string, string | string[] | undefined> | undefined): CallTrace => {
    const startedMs = performance.now();
    const offset = clock.offset();
    const parentContext = headers?.traceparent !== undefined ? propagation.extract(ROOT_CONTEXT, headers, getter) : ROOT_CONTEXT;
    // As the SDK's Tracer: a valid parent gives the trace id and trace state; else a new trace.
    const remote = trace.getSpanContext(parentContext);
    const parent = remote !== undefined && isSpanContextValid(remote) ? remote : undefined;
    const traceId = parent?.traceId ?? ids.generateTraceId();
    const recording = sampler.shouldSample(parentContext, traceId, name, SpanKind.SERVER, attributes, []).decision === SamplingDecision.RECORD_AND_SAMPLED;
    const traceFlags = recording ? TraceFlags.SAMPLED : TraceFlags.NONE;
    const traceState = parent?.traceState;
    const contextOf = (): SpanContext => (traceState ? { traceId, spanId: ids.generateSpanId(), traceFlags, traceState } : { traceId, spanId: ids.generateSpanId(), traceFlags });
    const rootContext = contextOf();
    const root = recording ? new SpanRecord(source, name, SpanKind.SERVER, rootContext, parent, clock.at(startedMs, offset), attributes) : undefined;
    const record = (spanName: string, kind: SpanKind, spanContext: SpanContext, parentOf: SpanContext, startMs: number, attrs: SpanAttributes | undefined) =>
      new SpanRecord(source, spanName, kind, spanContext, parentOf, clock.at(startMs, offset), attrs ?? NO_ATTRIBUTES);
    const finish = (span: SpanRecord, end: SpanEnd | undefined): void => {
      if (end?.attributes) span.addAttributes(end.attributes);
      if (end?.error !== undefined) span.fail(end.error);
      if (span.finish(clock.at(performance.now(), offset))) processor.add(span);
    };
    // The running stage: its span is made only when kept or needed as a parent.
    let stage: { name: string; startedMs: number; span: SpanRecord | undefined } | undefined;
    const made = (s: NonNullable<typeof stage>): SpanRecord => (s.span ??= record(s.name, SpanKind.INTERNAL, contextOf(), rootContext, s.startedMs, undefined));
    return {
      traceId,
      stage: (stageName) => {
        // An unsampled request's stages would be non-recording spans: none are made.
        if (!recording) return NO_SPAN;
        const own = { name: stageName, startedMs: performance.now(), span: undefined };
        stage = own;
        return {
          end: (end) => {
            if (stage === own) stage = undefined;
            if (own.span || end.keep || end.error !== undefined) finish(made(own), end);
          },
        };
      },
      child: (childName, kind, attrs) => {
        // Its context is made even when not recording: it is still propagated downstream (unsampled).
        const spanContext = contextOf();
        const span = recording ? record(childName, kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL, spanContext, stage ? made(stage).spanContext() : rootContext, performance.now(), attrs) : undefined;
        return {
          end: (end) => {
            if (span) finish(span, end);
          },
          within: (fn) => {
            installContextManager();
            return context.with(trace.setSpanContext(ROOT_CONTEXT, spanContext), fn);
          },
        } satisfies ClientSpan;
      },
      annotate: (end) => {
        if (!root) return;
        if (end.attributes) root.addAttributes(end.attributes);
        if (end.error !== undefined) root.fail(end.error);
      },
      end: (end) => {
        if (root) finish(root, end);
      },
    };
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
