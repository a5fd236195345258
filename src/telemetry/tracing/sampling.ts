// The sampler and the span ids of mcphub's tracer provider (otel.ts): the SDK's decisions, made
// with less work per span. Every span asks both, and a plain call makes five: measured on the
// SDK alone (a call's five spans made and ended, export dropped), the SDK's ParentBasedSampler
// and RandomIdGenerator were ~0.7 µs of a span's ~5.2 µs (bench/ops-spans.ts has the pieces).
//   - ParentBasedSampler asks its getters and validates the parent's ids with two regular
//     expressions on every span; a child of a span we made ourselves needs neither.
//   - RandomIdGenerator draws Math.random per 4 bytes and hex-encodes each id on its own; here
//     ids are cut from one hex string of 4 kB of crypto randomness, refilled when used up.
import { randomFillSync } from "node:crypto";
import { isSpanContextValid, trace, TraceFlags, type Attributes, type Context, type Link, type SpanKind } from "@opentelemetry/api";
import { AlwaysOnSampler, SamplingDecision, TraceIdRatioBasedSampler, type IdGenerator, type Sampler, type SamplingResult } from "@opentelemetry/sdk-trace-node";

const SAMPLED: SamplingResult = Object.freeze({ decision: SamplingDecision.RECORD_AND_SAMPLED });
const NOT_SAMPLED: SamplingResult = Object.freeze({ decision: SamplingDecision.NOT_RECORD });

/**
 * ParentBasedSampler's decisions with its default delegates: a span with a parent (a client's
 * traceparent, or a span of ours) is sampled exactly when its parent is; a root is sampled at
 * `ratio` (by trace id, as TraceIdRatioBasedSampler does). A remote parent with invalid ids
 * counts as none, as there.
 */
export class ParentFirstSampler implements Sampler {
  private readonly root: Sampler;
  constructor(private readonly ratio: number) {
    this.root = ratio >= 1 ? new AlwaysOnSampler() : new TraceIdRatioBasedSampler(ratio);
  }

  shouldSample(context: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    const parent = trace.getSpanContext(context);
    // Our own spans' ids are valid by construction; only a remote parent's need checking.
    if (parent !== undefined && (!parent.isRemote || isSpanContextValid(parent))) {
      return (parent.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? SAMPLED : NOT_SAMPLED;
    }
    return this.root.shouldSample(context, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `ParentFirstSampler{root=${this.root.toString()}}`;
  }
}

/** Bytes of crypto randomness per refill (8,192 hex characters). */
const POOL_BYTES = 4096;
const ZERO_SPAN_ID = "0".repeat(16);
const ZERO_TRACE_ID = "0".repeat(32);

/**
 * Trace and span ids cut from a pool of random hex (W3C: never all zeros). The pool's bytes
 * are kept beside its hex: after a take, `bytes` and `at` say where the id's bytes are (a
 * refill makes a new pool, so a taken id's bytes stay as they were).
 */
export class PooledIdGenerator implements IdGenerator {
  private hex = "";
  private next = 0;
  /** The bytes of the id taken last, from `at`. */
  bytes: Uint8Array = new Uint8Array(0);
  at = 0;

  private take(chars: number, zero: string): string {
    for (;;) {
      if (this.next + chars > this.hex.length) {
        const pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
        this.bytes = pool;
        this.hex = pool.toString("hex");
        this.next = 0;
      }
      const id = this.hex.slice(this.next, this.next + chars);
      this.at = this.next >> 1;
      this.next += chars;
      if (id !== zero) return id;
    }
  }

  generateTraceId(): string {
    return this.take(32, ZERO_TRACE_ID);
  }

  generateSpanId(): string {
    return this.take(16, ZERO_SPAN_ID);
  }
}
