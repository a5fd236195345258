// A finished span as the SDK's span processors and OTLP exporters read it (ReadableSpan), made
// directly rather than through the SDK's Tracer and Span. A call makes five spans; measured in
// one process (bench/ops-spans.ts), the SDK's Span cost ~3.4 µs each to make and end on a quiet
// machine: sanitising attributes again, span limits, a processor's onStart, a clock offset and
// two time conversions per span. Our spans' attributes are typed (SpanAttributes) and few, and
// a call's times come from one clock, so a record holds them as given. A record is a whole
// ReadableSpan, so the SDK's serialisers read it as they read their own spans: the test of
// otlp-proto.ts compares our bytes with theirs on records.
import { SpanStatusCode, type Attributes, type HrTime, type Link, type SpanContext, type SpanKind, type SpanStatus, type TraceState } from "@opentelemetry/api";
import type { InstrumentationScope } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, TimedEvent } from "@opentelemetry/sdk-trace-node";
import type { SpanAttributes } from "./types.js";

const NS_PER_S = 1e9;
const NO_EVENTS: TimedEvent[] = [];
const NO_LINKS: Link[] = [];
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });

/** What every span of one tracer provider shares. */
export interface SpanSource {
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
}

/**
 * Wall-clock times from performance.now() readings. One call's spans take the wall clock's
 * lead over the monotonic clock once (`offset`, at the request's start, as the SDK takes it per
 * span): the call's times keep the monotonic clock's µs precision and order, and the clocks'
 * drift over a long uptime never enters.
 */
export class WallClock {
  /** performance.timeOrigin as whole seconds and nanoseconds. */
  readonly originS: number;
  readonly originNs: number;
  /** performance.timeOrigin, read once (a getter of Node's, read per call otherwise). */
  private readonly originMs = performance.timeOrigin;

  constructor() {
    const origin = this.originMs;
    this.originS = Math.floor(origin / 1000);
    this.originNs = Math.round((origin - this.originS * 1000) * 1e6);
  }

  /** The wall clock's lead over performance.timeOrigin + performance.now(), in ms. */
  offset(): number {
    return Date.now() - (this.originMs + performance.now());
  }

  /** The HrTime of a performance.now() reading `ms`, with a call's `offset`. */
  at(ms: number, offset: number): HrTime {
    const ns = this.originNs + Math.round((ms + offset) * 1e6);
    const carry = Math.floor(ns / NS_PER_S);
    return [this.originS + carry, ns - carry * NS_PER_S];
  }
}

/** Nanoseconds since the epoch (`seconds` and `nanos` as an HrTime holds them) as the high and low 32-bit words of a 64-bit integer, exactly: no product passes 2^53. */
export function epochWords(seconds: number, nanos: number): [high: number, low: number] {
  const low16 = seconds % 0x10000;
  const high = Math.floor(seconds / 0x10000) * 1e9; // the seconds' upper part, in ns, still to be shifted by 16 bits
  const lower = low16 * 1e9 + nanos + (high % 0x10000) * 0x10000; // < 2^53
  const carry = Math.floor(lower / 0x100000000);
  return [Math.floor(high / 0x10000) + carry, lower - carry * 0x100000000];
}

/**
 * One call's times. Its first reading (`baseMs`) is made a wall-clock time once, with the
 * call's `offset`; every later reading is that time plus its distance in whole ns. So a span's
 * time is written (otlp-proto.ts) as two 32-bit words plus an integer, without an HrTime array
 * or a division per time, and read as an HrTime (the SDK's serialisers) to the same ns.
 */
export class CallClock {
  /** The base as an HrTime's seconds and nanoseconds. */
  readonly seconds: number;
  readonly nanos: number;
  /** The base as epoch ns, in high and low 32-bit words. */
  readonly high: number;
  readonly low: number;

  constructor(
    clock: WallClock,
    offset: number,
    readonly baseMs: number,
  ) {
    [this.seconds, this.nanos] = clock.at(baseMs, offset);
    [this.high, this.low] = epochWords(this.seconds, this.nanos);
  }

  /** Whole ns from the base to the reading `ms` (negative before it). */
  since(ms: number): number {
    return Math.round((ms - this.baseMs) * 1e6);
  }

  hrTime(ms: number): HrTime {
    const ns = this.nanos + this.since(ms);
    const carry = Math.floor(ns / NS_PER_S);
    return [this.seconds + carry, ns - carry * NS_PER_S];
  }
}

/**
 * A span context of ours (Call.context): the API's fields, and the bytes its hex ids were cut
 * from (PooledIdGenerator's pool) with where each id starts in them, so the encoder copies the
 * id's bytes rather than decoding its hex (decoding a call's 14 ids was a third of the encoding).
 */
export class OwnSpanContext implements SpanContext {
  constructor(
    readonly traceId: string,
    readonly spanId: string,
    readonly traceFlags: number,
    readonly traceState: TraceState | undefined,
    /** The trace id's 16 bytes, from `traceAt`. */
    readonly traceBytes: Uint8Array,
    readonly traceAt: number,
    /** The span id's 8 bytes, from `spanAt`. */
    readonly spanBytes: Uint8Array,
    readonly spanAt: number,
  ) {}
}

/**
 * One span: started with its context, parent, attributes and time; `finish` sets its end once.
 * Its times are kept as performance.now() readings and made HrTimes when read.
 */
export class SpanRecord implements ReadableSpan {
  status: SpanStatus = UNSET;
  ended = false;
  endMs: number;
  /** Attributes added later (annotate, end): they win over `initial`'s of the same key. */
  later: SpanAttributes | undefined = undefined;
  readonly events: TimedEvent[] = NO_EVENTS;
  readonly links: Link[] = NO_LINKS;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;

  constructor(
    source: SpanSource,
    readonly name: string,
    readonly kind: SpanKind,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly clock: CallClock,
    readonly startMs: number,
    /** The attributes it started with (often a caller's constant: never written to). */
    readonly initial: SpanAttributes,
  ) {
    this.resource = source.resource;
    this.instrumentationScope = source.instrumentationScope;
    this.endMs = startMs;
  }

  spanContext(): SpanContext {
    return this.context;
  }

  get startTime(): HrTime {
    return this.clock.hrTime(this.startMs);
  }

  get endTime(): HrTime {
    return this.clock.hrTime(this.endMs);
  }

  get duration(): HrTime {
    const start = this.startTime;
    const end = this.endTime;
    let s = end[0] - start[0];
    let ns = end[1] - start[1];
    if (ns < 0) {
      s -= 1;
      ns += NS_PER_S;
    }
    return [s, ns];
  }

  /** All of them, as the SDK's Span would hold them (the encoder reads `initial` and `later` as they are). */
  get attributes(): Attributes {
    return this.later ? { ...this.initial, ...this.later } : this.initial;
  }

  addAttributes(more: SpanAttributes): void {
    this.later = this.later ? { ...this.later, ...more } : more;
  }

  /** Marks the span failed. */
  fail(message: string): void {
    this.status = { code: SpanStatusCode.ERROR, message };
  }

  /** Ends the span at the performance.now() reading `endMs` (a second end is ignored, as the SDK's Span ignores it). */
  finish(endMs: number): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.endMs = endMs;
    return true;
  }
}
