// The OpenTelemetry side of tracing, loaded only when `telemetry.otlp.url` is set (index.ts).
// One tracer provider per setting, with a batch processor and the OTLP/HTTP exporter (JSON);
// the context manager (AsyncLocalStorage: the current span follows awaits) and the W3C trace
// context propagator are installed once per process. The provider is not registered as the
// global one, so a reload can replace it (OpenTelemetry refuses a second global registration).
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-node";
import type { OtlpSettings, SpanAttributes, SpanEnd, TracingBackend } from "./types.js";

/** How often finished spans are sent (the batch processor's default is 5 s). */
const EXPORT_DELAY_MS = 1000;

let installed = false;

function installGlobals(): void {
  if (installed) return;
  installed = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

/** Node's request headers have lower-case names. */
const getter = {
  keys: (carrier: Record<string, string | string[] | undefined>) => Object.keys(carrier),
  get: (carrier: Record<string, string | string[] | undefined>, key: string) => carrier[key.toLowerCase()],
};

const setter = { set: (carrier: Record<string, string>, key: string, value: string) => (carrier[key] = value) };

export function startOtel(settings: OtlpSettings, version: string): TracingBackend {
  installGlobals();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": settings.service_name, "service.version": version }),
    // A client's sampled traceparent is followed; a request without one is sampled at `sample`.
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sample) }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }), { scheduledDelayMillis: EXPORT_DELAY_MS })],
  });
  const tracer: Tracer = provider.getTracer("mcphub", version);

  const run = <T>(span: Span, parent: Context, fn: () => T): T => {
    let out: T;
    try {
      out = context.with(trace.setSpan(parent, span), fn);
    } catch (err) {
      fail(span, err);
      span.end();
      throw err;
    }
    if (out instanceof Promise) {
      return out.then(
        (v: unknown) => {
          span.end();
          return v;
        },
        (err: unknown) => {
          fail(span, err);
          span.end();
          throw err;
        },
      ) as T;
    }
    span.end();
    return out;
  };

  return {
    request: (name, attributes, fn) => {
      const parent = context.active();
      return run(tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent), parent, fn);
    },
    span: (name, kind, attributes, fn) => {
      const parent = context.active();
      const span = tracer.startSpan(name, { kind: kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL, ...(attributes ? { attributes } : {}) }, parent);
      return run(span, parent, fn);
    },
    annotate: (end: SpanEnd) => {
      const span = trace.getSpan(context.active());
      if (!span?.isRecording()) return;
      if (end.attributes) span.setAttributes(end.attributes);
      if (end.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: end.error });
    },
    outside: (fn) => context.with(ROOT_CONTEXT, fn),
    withRemoteParent: (headers, fn) => {
      if (headers.traceparent === undefined) return fn();
      return context.with(propagation.extract(ROOT_CONTEXT, headers, getter), fn);
    },
    inject: (headers) => propagation.inject(context.active(), headers, setter),
    traceId: () => {
      const id = trace.getSpan(context.active())?.spanContext().traceId;
      return id && id !== "00000000000000000000000000000000" ? id : undefined;
    },
    shutdown: () => provider.shutdown(),
  };
}

/** A thrown error marks the span failed by its class name only: a message may quote an argument. */
function fail(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : "error" });
}
