// A finished span as the SDK's span processors and OTLP exporters read it (ReadableSpan), made
// directly rather than through the SDK's Tracer and Span. A call makes five spans; measured in
// one process (bench/ops-spans.ts), the SDK's Span cost ~3.4 µs each to make and end on a quiet
// machine: sanitising attributes again, span limits, a processor's onStart, a clock offset and
// two time conversions per span. Our spans' attributes are typed (SpanAttributes) and few, and
// a call's times come from one clock, so a record holds them as given. A record is a whole
// ReadableSpan, so the SDK's serialisers read it as they read their own spans: the test of
// otlp-proto.ts compares our bytes with theirs on records.
import { SpanStatusCode, type Attributes, type HrTime, type Link, type SpanContext, type SpanKind, type SpanStatus } from "@opentelemetry/api";
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

  constructor() {
    const origin = performance.timeOrigin;
    this.originS = Math.floor(origin / 1000);
    this.originNs = Math.round((origin - this.originS * 1000) * 1e6);
  }

  /** The wall clock's lead over performance.timeOrigin + performance.now(), in ms. */
  offset(): number {
    return Date.now() - (performance.timeOrigin + performance.now());
  }

  /** The HrTime of a performance.now() reading `ms`, with a call's `offset`. */
  at(ms: number, offset: number): HrTime {
    const ns = this.originNs + Math.round((ms + offset) * 1e6);
    const carry = Math.floor(ns / NS_PER_S);
    return [this.originS + carry, ns - carry * NS_PER_S];
  }
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
    readonly clock: WallClock,
    readonly offset: number,
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
    return this.clock.at(this.startMs, this.offset);
  }

  get endTime(): HrTime {
    return this.clock.at(this.endMs, this.offset);
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
