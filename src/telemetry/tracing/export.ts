// Finished spans to the collector: each span is written to OTLP/protobuf as it ends
// (otlp-proto.ts says why), and a batch is sent once it holds EXPORT_BATCH_SPANS spans or its
// first span has waited EXPORT_DELAY_MS, as the SDK's BatchSpanProcessor sends. The sending
// is the SDK's OTLP/HTTP export delegate (the one OTLPTraceExporter is made of): its HTTP
// transport with keep-alive, timeout and retry of retryable answers, OTEL_EXPORTER_OTLP_*
// headers and compression, and its bound on sends in flight.
import { diag } from "@opentelemetry/api";
import { ExportResultCode } from "@opentelemetry/core";
import { createOtlpHttpExportDelegate, convertLegacyHttpOptions } from "@opentelemetry/otlp-exporter-base/node-http";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { SpanBatch, type Envelope } from "./otlp-proto.js";
import type { ExportCounts } from "./types.js";

/** How often finished spans are sent (the batch processor's default is 5 s). */
const EXPORT_DELAY_MS = 1000;
/**
 * Spans a send carries at most (the batch processor's default is 512). A send costs the gateway
 * ~0.35 ms of CPU whatever it carries (an HTTP request and its answer through Node's client;
 * bench/ops-spans.ts measured 350 µs for 32 spans and 325 µs for 2,048), so fewer, fuller
 * sends are cheaper: at 2,048 it is ~0.2 µs a span.
 */
const EXPORT_BATCH_SPANS = 2048;

/**
 * How long shutdown waits for sends under way. The delegate retries a collector that refuses
 * or is unreachable for up to its timeout (10 s); a gateway that is stopping waits this long.
 */
const SHUTDOWN_WAIT_MS = 2000;

/** A batch as the delegate carries it: the request's bytes and its span count (for the SDK's exporter metrics). */
interface EncodedBatch {
  body: Uint8Array;
  spans: number;
}

/** Where spans go once ended. */
export interface SpanSink {
  add(span: ReadableSpan): void;
  shutdown(): Promise<void>;
}

/** Sends one request's bytes (`spans` of them) and says whether it arrived; the benchmark's rows that stop before the network pass their own. */
export type SendBatch = (body: Uint8Array, spans: number, done: (ok: boolean) => void) => void;

/** The SDK's OTLP/HTTP delegate, sending protobuf to `url` (the full /v1/traces URL, as `telemetry.otlp.url` is). */
export function otlpHttpSender(url: string): { send: SendBatch; shutdown(): Promise<void> } {
  const delegate = createOtlpHttpExportDelegate<EncodedBatch, unknown>(
    convertLegacyHttpOptions({ url }, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" }),
    { serializeRequest: (batch) => batch.body, deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data) },
    "otlp_http_span_exporter",
    { name: "span", countItems: (batch) => batch.spans },
    undefined,
  );
  return {
    send: (body, spans, done) => delegate.export({ body, spans }, (result) => done(result.code === ExportResultCode.SUCCESS)),
    shutdown: () => delegate.shutdown(),
  };
}

/** Spans batched as bytes and sent by `send`. */
export class SpanExport implements SpanSink {
  private readonly batch: SpanBatch;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly pending = new Set<Promise<void>>();

  /** `counts` is added to as sends end (failed spans are counted, not retried beyond the delegate's own retries). */
  constructor(
    envelope: Envelope,
    private readonly send: SendBatch,
    private readonly close: () => Promise<void> = async () => undefined,
    readonly counts: ExportCounts = { sent: 0, failed: 0 },
  ) {
    this.batch = new SpanBatch(envelope);
  }

  add(span: ReadableSpan): void {
    if (this.closed) return;
    this.batch.add(span);
    if (this.batch.count >= EXPORT_BATCH_SPANS) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), EXPORT_DELAY_MS);
      this.timer.unref(); // a pending batch never keeps the process alive; shutdown sends it
    }
  }

  private flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const spans = this.batch.count;
    const body = this.batch.take();
    if (!body) return;
    const sent = new Promise<void>((resolve) =>
      this.send(body, spans, (ok) => {
        if (ok) this.counts.sent += spans;
        else {
          this.counts.failed += spans;
          diag.debug(`mcphub: an OTLP export of ${spans} spans failed`);
        }
        resolve();
      }),
    );
    this.pending.add(sent);
    void sent.then(() => this.pending.delete(sent));
  }

  /**
   * Sends what is batched, waits for the sends under way and closes the sender, for
   * SHUTDOWN_WAIT_MS at most (a send still being retried then goes on, and the process's own
   * exit ends it).
   */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS)));
    await Promise.race([Promise.all(this.pending).then(() => this.close()), waited]);
    clearTimeout(timer);
  }
}
