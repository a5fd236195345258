// One upstream request's spans (CallTrace), as classes: a call's handles are an object each
// with methods on the prototype, not a dozen closures a call. Spans are SpanRecords, made with
// explicit parents and handed to the sink as each ends.
import { SpanKind, TraceFlags, type SpanContext, type TraceState } from "@opentelemetry/api";
import type { SpanSink } from "./export.js";
import type { PooledIdGenerator } from "./sampling.js";
import { CallClock, OwnSpanContext, SpanRecord, type SpanSource, type WallClock } from "./span-record.js";
import type { CallTrace, ClientSpan, SpanAttributes, SpanEnd, StageSpan } from "./types.js";

/** What every call of one backend shares. */
export interface Recorder {
  readonly source: SpanSource;
  readonly sink: SpanSink;
  readonly ids: PooledIdGenerator;
  readonly clock: WallClock;
  /** Runs `fn` with `span` as the current context (for an HTTP downstream's traceparent). */
  within<T>(span: SpanContext, fn: () => T): T;
}

const NO_ATTRIBUTES: SpanAttributes = Object.freeze({});
const NO_SPAN: StageSpan = { end: () => undefined };

function finish(call: Call, span: SpanRecord, end: SpanEnd | undefined): void {
  if (end?.attributes) span.addAttributes(end.attributes);
  if (end?.error !== undefined) span.fail(end.error);
  if (span.finish(performance.now())) call.recorder.sink.add(span);
}

/** A stage: its span is made when it ends kept (or failed), or at once when a child needs it as parent. */
class Stage implements StageSpan {
  span: SpanRecord | undefined = undefined;
  private readonly startedMs = performance.now();

  constructor(
    private readonly call: Call,
    private readonly name: string,
  ) {}

  made(): SpanRecord {
    this.span ??= this.call.record(this.name, SpanKind.INTERNAL, this.call.context(), this.call.rootContext, this.startedMs, NO_ATTRIBUTES);
    return this.span;
  }

  end(end: SpanEnd & { keep: boolean }): void {
    if (this.call.running === this) this.call.running = undefined;
    if (this.span || end.keep || end.error !== undefined) finish(this.call, this.made(), end);
  }
}

/** A span under the running stage; its context is made even when not recording (it is still propagated, unsampled). */
class Child implements ClientSpan {
  constructor(
    private readonly call: Call,
    private readonly spanContext: SpanContext,
    private readonly span: SpanRecord | undefined,
  ) {}

  end(end?: SpanEnd): void {
    if (this.span) finish(this.call, this.span, end);
  }

  within<T>(fn: () => T): T {
    return this.call.recorder.within(this.spanContext, fn);
  }
}

/** A trace's id, as hex and as bytes (the id pool's, or a client's id decoded once) from `at`. */
export interface TraceIdentity {
  readonly id: string;
  readonly bytes: Uint8Array;
  readonly at: number;
}

export class Call implements CallTrace {
  readonly traceId: string;
  readonly rootContext: OwnSpanContext;
  private readonly root: SpanRecord | undefined;
  private readonly clock: CallClock;
  private readonly traceFlags: TraceFlags;
  /** The stage now running (a call's stages run one after another). */
  running: Stage | undefined = undefined;

  constructor(
    readonly recorder: Recorder,
    private readonly trace: TraceIdentity,
    private readonly traceState: TraceState | undefined,
    parent: SpanContext | undefined,
    private readonly recording: boolean,
    name: string,
    attributes: SpanAttributes,
  ) {
    const startedMs = performance.now();
    this.clock = new CallClock(recorder.clock, recorder.clock.offset(), startedMs);
    this.traceId = trace.id;
    this.traceFlags = recording ? TraceFlags.SAMPLED : TraceFlags.NONE;
    this.rootContext = this.context();
    this.root = recording ? new SpanRecord(recorder.source, name, SpanKind.SERVER, this.rootContext, parent, this.clock, startedMs, attributes) : undefined;
  }

  /** A new span's context in this trace (as the SDK's Tracer makes it: the trace's id, flags and state). */
  context(): OwnSpanContext {
    const ids = this.recorder.ids;
    const spanId = ids.generateSpanId();
    return new OwnSpanContext(this.traceId, spanId, this.traceFlags, this.traceState, this.trace.bytes, this.trace.at, ids.bytes, ids.at);
  }

  record(name: string, kind: SpanKind, context: SpanContext, parent: SpanContext, startMs: number, attributes: SpanAttributes): SpanRecord {
    return new SpanRecord(this.recorder.source, name, kind, context, parent, this.clock, startMs, attributes);
  }

  stage(name: string): StageSpan {
    // An unsampled request's stages would be non-recording spans: none are made.
    if (!this.recording) return NO_SPAN;
    const stage = new Stage(this, name);
    this.running = stage;
    return stage;
  }

  child(name: string, kind: "internal" | "client", attributes?: SpanAttributes): ClientSpan {
    const spanContext = this.context();
    const parent = this.running ? this.running.made().spanContext() : this.rootContext;
    const span = this.recording ? this.record(name, kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL, spanContext, parent, performance.now(), attributes ?? NO_ATTRIBUTES) : undefined;
    return new Child(this, spanContext, span);
  }

  annotate(end: SpanEnd): void {
    if (!this.root) return;
    if (end.attributes) this.root.addAttributes(end.attributes);
    if (end.error !== undefined) this.root.fail(end.error);
  }

  end(end?: SpanEnd): void {
    if (this.root) finish(this, this.root, end);
  }
}
