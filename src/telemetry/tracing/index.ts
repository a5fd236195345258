// Traces (docs/operations.md#traces): a span per upstream tools/call with children for the
// pipeline's stages and the downstream call, exported over OTLP/HTTP (protobuf) when
// `telemetry.otlp.url` is set. This module is the facade the rest of mcphub calls; it never loads
// OpenTelemetry itself. `configureTracing` loads the SDK (otel.ts) on first use, so a gateway
// with tracing off (the default) pays one test per call and nothing at start-up.
//
// A call's spans hang on a CallTrace that the call carries (its context), each made with an
// explicit parent: no context switch per stage (see otel.ts for why that matters). It is one
// per process on purpose: OpenTelemetry's propagators are process-wide, and the downstream HTTP
// transports, which sit in another part, reach the same tracer through here.
//
// Attributes carry names, sizes and classes only: never an argument value, a result value or
// an error message (a message may quote an argument). See `SpanAttributes`.

import type { CallTrace, ExportCounts, OtlpSettings, SpanAttributes, TracingBackend } from "./types.js";

export type { CallTrace, ClientSpan, ExportCounts, OtlpSettings, SpanAttributes, SpanEnd, StageSpan, TraceSpan, TracingBackend } from "./types.js";

let backend: TracingBackend | undefined;
/** The process's span counts, kept across reloads (each backend adds to the same object). */
const exported: ExportCounts = { sent: 0, failed: 0 };
let current = "";
let configuring: Promise<void> = Promise.resolve();

/** Whether spans are being made now. */
export function tracingEnabled(): boolean {
  return backend !== undefined;
}

/**
 * Applies `telemetry.otlp` (undefined: tracing off). Starting loads the SDK; a changed setting
 * replaces the exporter (the old one is flushed first); calls are serialised. Resolves once
 * the new setting is in force.
 */
export function configureTracing(settings: OtlpSettings | undefined, version: string): Promise<void> {
  const key = settings ? JSON.stringify([settings.url, settings.sample, settings.service_name]) : "";
  configuring = configuring.then(async () => {
    if (key === current) return;
    const old = backend;
    backend = undefined;
    current = key;
    await old?.shutdown().catch(() => undefined);
    if (!settings) return;
    const { startOtel } = await import("./otel.js");
    if (current === key) backend = startOtel(settings, version, { counts: exported });
  });
  return configuring;
}

/** Spans sent to the collector, and lost in failed sends, since the process started (for /metrics). */
export function traceExportCounts(): Readonly<ExportCounts> {
  return exported;
}

/** Flushes and stops the exporter (at shutdown). */
export function shutdownTracing(): Promise<void> {
  return configureTracing(undefined, "");
}

/** Span names by method, then by target; forgotten all at once past MAX_NAMES (a long tail of targets cannot grow it). */
const names = new Map<string, Map<string, string>>();
let namesHeld = 0;
const MAX_NAMES = 4096;

/**
 * A span's name, "{method} {target}" (OpenTelemetry's convention for MCP), as the same string
 * for the same pair. A name built per call is a new string each time, which the encoder's
 * lookup of the name's bytes (otlp-proto.ts) copies flat and hashes again: measured in one
 * process, that was ~0.1 µs a span.
 */
export function spanName(method: string, target: string): string {
  let byTarget = names.get(method);
  let name = byTarget?.get(target);
  if (name === undefined) {
    if (namesHeld >= MAX_NAMES) {
      names.clear();
      namesHeld = 0;
      byTarget = undefined;
    }
    if (byTarget === undefined) names.set(method, (byTarget = new Map()));
    name = `${method} ${target}`;
    byTarget.set(target, name);
    namesHeld++;
  }
  return name;
}

/**
 * The trace of one upstream request (its span is the root of the call's tree, or a child of the
 * traceparent in the HTTP client's `headers`); undefined while tracing is off.
 */
export function startCallTrace(name: string, attributes: SpanAttributes, headers?: Record<string, string | string[] | undefined>): CallTrace | undefined {
  return backend?.startCall(name, attributes, headers);
}

/**
 * Runs `fn` (sync, or returning a promise) in a span under the call's running stage, ending it
 * when `fn` settles (a throw marks it failed by the error's class); just `fn` without a trace.
 */
export function traceChild<T>(trace: CallTrace | undefined, name: string, fn: () => T): T {
  if (!trace) return fn();
  const span = trace.child(name, "internal");
  let out: T;
  try {
    out = fn();
  } catch (err) {
    span.end({ error: errorClassOf(err) });
    throw err;
  }
  if (out instanceof Promise) {
    return out.then(
      (v: unknown) => {
        span.end();
        return v;
      },
      (err: unknown) => {
        span.end({ error: errorClassOf(err) });
        throw err;
      },
    ) as T;
  }
  span.end();
  return out;
}

/** The class of a thrown value, for a span's status (never its message: it may quote an argument). */
export function errorClassOf(err: unknown): string {
  return err instanceof Error ? err.name : "error";
}

/** Runs `fn` outside the current trace (work a request starts but does not own: its spans and log lines are not the request's). */
export function outsideTrace<T>(fn: () => T): T {
  return backend ? backend.outside(fn) : fn();
}

/** The current span's traceparent (and tracestate) as headers for an outgoing request; none when off. */
export function traceHeaders(): Record<string, string> | undefined {
  if (!backend) return undefined;
  const headers: Record<string, string> = {};
  backend.inject(headers);
  return Object.keys(headers).length > 0 ? headers : undefined;
}

/** The current trace's id (for log lines), when a span is current. */
export function currentTraceId(): string | undefined {
  return backend?.traceId();
}
