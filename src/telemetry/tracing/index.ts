// Traces (docs/operations.md#traces): a span per upstream tools/call with children for the
// pipeline's stages and the downstream call, exported over OTLP/HTTP (JSON) when
// `telemetry.otlp.url` is set. This module is the facade the rest of mcphub calls; it never loads
// OpenTelemetry itself. `configureTracing` loads the SDK (otel.ts) on first use, so a gateway
// with tracing off (the default) pays one boolean test per call and nothing at start-up.
//
// It is one per process on purpose: OpenTelemetry's context (which span is current across
// awaits) and its propagators are process-wide, and the downstream HTTP transports and the
// daemon's listener, which sit in other parts, reach the same tracer through here.
//
// Attributes carry names, sizes and classes only: never an argument value, a result value or
// an error message (a message may quote an argument). See `SpanAttributes`.

import type { OtlpSettings, SpanAttributes, SpanEnd, TracingBackend } from "./types.js";

export type { OtlpSettings, SpanAttributes, SpanEnd, TracingBackend } from "./types.js";

let backend: TracingBackend | undefined;
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
    if (current === key) backend = startOtel(settings, version);
  });
  return configuring;
}

/** Flushes and stops the exporter (at shutdown). */
export function shutdownTracing(): Promise<void> {
  return configureTracing(undefined, "");
}

/** Runs an upstream request in its own span (the root of a call's tree, or a child of the client's traceparent). */
export function traceRequest<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  return backend ? backend.request(name, attributes, fn) : fn();
}

/** Runs `fn` (sync, or returning a promise) in a child span of the current one. */
export function traceSpan<T>(name: string, fn: () => T, attributes?: SpanAttributes, kind: "internal" | "client" = "internal"): T {
  return backend ? backend.span(name, kind, attributes, fn) : fn();
}

/** Adds attributes (and an error class) to the current span. */
export function annotateSpan(end: SpanEnd): void {
  backend?.annotate(end);
}

/** Runs `fn` outside the current trace (work a request starts but does not own: its spans and log lines are not the request's). */
export function outsideTrace<T>(fn: () => T): T {
  return backend ? backend.outside(fn) : fn();
}

/** Runs `fn` with the W3C traceparent of these request headers (if any) as the current context. */
export function withRemoteParent<T>(headers: Record<string, string | string[] | undefined>, fn: () => T): T {
  return backend ? backend.withRemoteParent(headers, fn) : fn();
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
