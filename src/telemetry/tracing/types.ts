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

/** What otel.ts provides once loaded. */
export interface TracingBackend {
  request<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T>;
  span<T>(name: string, kind: "internal" | "client", attributes: SpanAttributes | undefined, fn: () => T): T;
  annotate(end: SpanEnd): void;
  outside<T>(fn: () => T): T;
  withRemoteParent<T>(headers: Record<string, string | string[] | undefined>, fn: () => T): T;
  inject(headers: Record<string, string>): void;
  traceId(): string | undefined;
  shutdown(): Promise<void>;
}
