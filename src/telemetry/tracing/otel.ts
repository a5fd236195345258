// The OpenTelemetry side of tracing, loaded only when `telemetry.otlp.url` is set (index.ts).
// One tracer provider per setting, with a batch processor and the OTLP/HTTP exporter (JSON);
// the W3C trace context propagator is installed once per process. The provider is not
// registered as the global one, so a reload can replace it (OpenTelemetry refuses a second
// global registration).
//
// A call's spans are made with explicit parents (CallTrace), not through the context manager.
// The AsyncLocalStorage context manager, once enabled, runs a hook for every promise the process
// makes, traced or not: profiled on the echo bench that was ~40 µs of a 200–550 µs call, more
// than the whole budget tracing has (+20%). So it is installed only when something needs the
// current span to follow awaits into code that cannot be handed it: the fetch of an HTTP
// downstream, deep inside the SDK's transport, which adds the traceparent (ClientSpan.within).
// A gateway whose downstreams are all stdio never installs it.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type SpanOptions, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ParentFirstSampler, PooledIdGenerator } from "./sampling.js";
import type { CallTrace, ClientSpan, OtlpSettings, SpanAttributes, SpanEnd, StageSpan, TracingBackend } from "./types.js";

/** How often finished spans are sent (the batch processor's default is 5 s). */
const EXPORT_DELAY_MS = 1000;
/**
 * Spans a send carries at most (the batch processor's default is 512). A send costs the gateway
 * ~0.4–0.6 ms of CPU whatever it carries (an HTTP request and its answer through Node's client,
 * measured here with a 100-byte and a 250 kB body alike), besides ~4.4 µs a span for the OTLP
 * JSON. At 512 that fixed part was ~5 µs of a five-span call; at 2,048 it is a quarter of that.
 */
const EXPORT_BATCH_SPANS = 2048;
/**
 * Spans waiting for export. A plain call makes five; at a few thousand calls a second the default
 * (2,048) would drop spans between two sends, while a send of a batch is under way.
 */
const MAX_QUEUED_SPANS = 16_384;

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

export function startOtel(settings: OtlpSettings, version: string): TracingBackend {
  if (!propagatorSet) {
    propagatorSet = true;
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": settings.service_name, "service.version": version }),
    // A client's sampled traceparent is followed; a request without one is sampled at `sample`
    // (ParentBasedSampler's decisions, with less work per span: sampling.ts).
    sampler: new ParentFirstSampler(settings.sample),
    idGenerator: new PooledIdGenerator(),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }), { scheduledDelayMillis: EXPORT_DELAY_MS, maxQueueSize: MAX_QUEUED_SPANS, maxExportBatchSize: EXPORT_BATCH_SPANS })],
  });
  const tracer: Tracer = provider.getTracer("mcphub", version);

  const startCall = (name: string, attributes: SpanAttributes, headers: Record<string, string | string[] | undefined> | undefined): CallTrace => {
    const parent = headers?.traceparent !== undefined ? propagation.extract(ROOT_CONTEXT, headers, getter) : ROOT_CONTEXT;
    const root = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    const rootContext = trace.setSpan(ROOT_CONTEXT, root);
    const recording = root.isRecording();
    // The running stage: its span is made only when kept or needed as a parent (then its context too).
    let stage: { name: string; startedMs: number; span: Span | undefined; context: Context | undefined } | undefined;
    const made = (s: NonNullable<typeof stage>): Span => {
      // A performance.now() start time: the SDK converts it with its own time origin.
      s.span ??= tracer.startSpan(s.name, { startTime: s.startedMs }, rootContext);
      return s.span;
    };
    return {
      traceId: root.spanContext().traceId,
      stage: (stageName) => {
        // An unsampled request's stages would be non-recording spans: none are made.
        if (!recording) return NO_SPAN;
        const own = { name: stageName, startedMs: performance.now(), span: undefined, context: undefined };
        stage = own;
        return {
          end: (end) => {
            if (stage === own) stage = undefined;
            // Ended at a performance.now() time too: given a start time but no end time, the SDK
            // ends a span at Date.now() (whole milliseconds, another clock), and a stage of a
            // few µs came out up to a millisecond or more long.
            if (own.span || end.keep || end.error !== undefined) finish(made(own), end, performance.now());
          },
        };
      },
      child: (childName, kind, attrs) => {
        // Made even when not recording: its (unsampled) context is still propagated downstream.
        const parent = stage ? (stage.context ??= trace.setSpan(ROOT_CONTEXT, made(stage))) : rootContext;
        const options: SpanOptions = { kind: kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL };
        if (attrs) options.attributes = attrs;
        const span = tracer.startSpan(childName, options, parent);
        return {
          end: (end) => finish(span, end),
          within: (fn) => {
            installContextManager();
            return context.with(trace.setSpan(ROOT_CONTEXT, span), fn);
          },
        } satisfies ClientSpan;
      },
      annotate: (end) => {
        if (!recording) return;
        if (end.attributes) root.setAttributes(end.attributes);
        if (end.error !== undefined) root.setStatus({ code: SpanStatusCode.ERROR, message: end.error });
      },
      end: (end) => finish(root, end),
    };
  };

  return {
    startCall,
    outside: (fn) => (contextManager ? context.with(ROOT_CONTEXT, fn) : fn()),
    inject: (headers) => propagation.inject(context.active(), headers, setter),
    traceId: () => {
      const id = trace.getSpan(context.active())?.spanContext().traceId;
      return id && id !== "00000000000000000000000000000000" ? id : undefined;
    },
    shutdown: () => provider.shutdown(),
  };
}

/**
 * Ends a span (at `endMs`, a performance.now() time, for a span started with one); an error
 * marks it failed by its class name only (a message may quote an argument).
 */
function finish(span: Span, end: SpanEnd | undefined, endMs?: number): void {
  if (end?.attributes) span.setAttributes(end.attributes);
  if (end?.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: end.error });
  span.end(endMs);
}

