// The shapes of tracing: what a span may carry, the OTLP settings, and the backend the
// OpenTelemetry module (otel.ts) provides. Apart from index.ts so otel.ts can implement them
// without importing the facade that loads it.

/** The attribute values a span may carry: names, numbers, flags. */
export type SpanAttributes = Record<string, string | number | boolean>;

export interface OtlpSettings {
  url: string;
  sample: number;
  service_name: string;
}

/** A span's ending: `error` sets the span's status to ERROR with this class (never a message). */
export interface SpanEnd {
  error?: string | undefined;
  attributes?: SpanAttributes | undefined;
}

/** One span of a call's tree, ended once. */
export interface TraceSpan {
  end(end?: SpanEnd): void;
}

/** A stage's span: made only if it is kept (or a span under it was made), with the stage's own start time. */
export interface StageSpan {
  end(end: SpanEnd & { keep: boolean }): void;
}

/** A span whose trace context an outgoing request carries (the downstream call). */
export interface ClientSpan extends TraceSpan {
  /**
   * Runs `fn` with this span as the current context, so an HTTP downstream's fetch, deep in the
   * SDK, adds its traceparent (traceHeaders). The only place a call enters a context: see otel.ts.
   */
  within<T>(fn: () => T): T;
}

/**
 * The spans of one upstream request, made with explicit parents (no context switch per stage):
 * the request's span, a span per stage under it, and the spans a stage starts (the downstream
 * call, a store operation) under that stage. A call's stages run one after another, so "the
 * stage now running" is well defined per call.
 */
export interface CallTrace {
  readonly traceId: string;
  /**
   * A stage starts: its span (under the request's) is made when the stage ends kept, or an error,
   * or at once when a `child` span is made while it runs (it is that span's parent).
   */
  stage(name: string): StageSpan;
  /** A span under the running stage (or the request's, between stages). */
  child(name: string, kind: "internal" | "client", attributes?: SpanAttributes): ClientSpan;
  /** Adds attributes (and an error class) to the request's span. */
  annotate(end: SpanEnd): void;
  /** Ends the request's span. */
  end(end?: SpanEnd): void;
}

/** Spans handed to the collector since the process started, by how their send ended. */
export interface ExportCounts {
  /** In sends the collector accepted. */
  sent: number;
  /** In sends that failed after the delegate's retries (a collector down or refusing). */
  failed: number;
}

/** What otel.ts provides once loaded. */
export interface TracingBackend {
  /** The trace of one upstream request; its parent is the W3C traceparent in `headers` (an HTTP client's), if any. */
  startCall(name: string, attributes: SpanAttributes, headers: Record<string, string | string[] | undefined> | undefined): CallTrace;
  outside<T>(fn: () => T): T;
  inject(headers: Record<string, string>): void;
  traceId(): string | undefined;
  shutdown(): Promise<void>;
}
