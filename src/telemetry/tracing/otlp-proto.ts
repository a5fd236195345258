// OTLP/protobuf bytes for finished spans, written as each span ends (export.ts batches them).
//
// Why not hand the spans to the SDK's BatchSpanProcessor and serialiser: a batch holds its
// spans as objects until it is sent (up to 2,048 spans, five objects and more each), so they
// outlive the young generation and the old one is marked and compacted for them. Measured in
// one process making a call's five spans 16 calls at a time (bench/ops-spans.ts), the V8
// helper threads' GC alone was ~9 µs a call with the export dropped, and the SDK's JSON was
// another ~15 µs, against a budget of ~8 µs a call with 16 in flight (+20% of a ~39 µs call).
// A span written to bytes the moment it ends leaves no object behind, and its strings (names,
// attribute keys and values, all from small sets) are encoded once and cached.
//
// The layout is the SDK's own protobuf serialiser's, field for field and in the same order
// (@opentelemetry/otlp-transformer's trace-serializer): a test compares the bytes of the two
// for the same spans (test/unit/telemetry/otlp-proto.test.ts). The message is
// opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest.
import type { HrTime } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { epochWords, OwnSpanContext, SpanRecord } from "./span-record.js";
import type { SpanAttributes } from "./types.js";

// Wire types.
const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;

/** OTLP span flags: the W3C trace flags, and whether the parent's remoteness is known (it always is here). */
const FLAGS_HAS_IS_REMOTE = 0x100;
const FLAGS_IS_REMOTE = 0x200;

/** Cached encodings at most (names, keys and values come from small sets; the rest is bounded). */
const MAX_CACHED = 4096;

const tag = (field: number, wire: number): number => (field << 3) | wire;
const varintSize = (v: number): number => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX["0123456789abcdef".charCodeAt(i)] = i;
  HEX["0123456789ABCDEF".charCodeAt(i)] = i;
}

const utf8 = new TextEncoder();

/** A growable byte buffer with protobuf's primitive writes. */
class Bytes {
  buf: Uint8Array;
  view: DataView;
  pos = 0;

  constructor(size: number) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }

  room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  varint(v: number): void {
    this.room(5);
    let x = v >>> 0;
    while (x > 0x7f) {
      this.buf[this.pos++] = (x & 0x7f) | 0x80;
      x >>>= 7;
    }
    this.buf[this.pos++] = x;
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** A lower-case or upper-case hex id as its bytes, with its tag and length. */
  hex(field: number, id: string): void {
    const n = id.length >> 1;
    this.room(2 + n);
    this.buf[this.pos++] = tag(field, BYTES);
    this.buf[this.pos++] = n;
    for (let i = 0; i < n; i++) this.buf[this.pos++] = (HEX[id.charCodeAt(2 * i)]! << 4) | HEX[id.charCodeAt(2 * i + 1)]!;
  }

  /** An id's `n` bytes from `bytes` at `at` (one of our contexts': no hex to decode), with its tag and length. */
  id(field: number, bytes: Uint8Array, at: number, n: number): void {
    this.room(2 + n);
    const buf = this.buf;
    let pos = this.pos;
    buf[pos++] = tag(field, BYTES);
    buf[pos++] = n;
    for (let i = at; i < at + n; i++) buf[pos++] = bytes[i]!;
    this.pos = pos;
  }

  /** Epoch ns as fixed64: the high and low 32-bit words, `low` possibly past 2^32 or below 0 (a CallClock's base plus a distance). */
  epoch(field: number, high: number, low: number): void {
    this.room(9);
    this.buf[this.pos++] = tag(field, FIXED64);
    const carry = Math.floor(low / 0x100000000);
    this.view.setUint32(this.pos, low - carry * 0x100000000, true);
    this.view.setUint32(this.pos + 4, high + carry, true);
    this.pos += 8;
  }

  /** An HrTime as fixed64 nanoseconds since the epoch. */
  time(field: number, [seconds, nanos]: HrTime): void {
    const [high, low] = epochWords(seconds, nanos);
    this.epoch(field, high, low);
  }

  /** Reserves one byte for a length, as the SDK's writer does; `close` writes it (moving the body if it needs more). */
  open(): number {
    this.room(1);
    return this.pos++;
  }

  close(at: number): void {
    const length = this.pos - at - 1;
    const size = varintSize(length);
    if (size > 1) {
      this.room(size - 1);
      this.buf.copyWithin(at + size, at + 1, this.pos);
      this.pos += size - 1;
    }
    let x = length;
    let p = at;
    while (x > 0x7f) {
      this.buf[p++] = (x & 0x7f) | 0x80;
      x >>>= 7;
    }
    this.buf[p] = x;
  }
}

/** Encodings by key, forgotten all at once when full (a long tail of values cannot grow it). */
class Cache {
  private readonly map = new Map<string, Uint8Array>();
  constructor(private readonly make: (key: string) => Uint8Array) {}
  get(key: string): Uint8Array {
    let v = this.map.get(key);
    if (v === undefined) {
      if (this.map.size >= MAX_CACHED) this.map.clear();
      v = this.make(key);
      this.map.set(key, v);
    }
    return v;
  }
}

/** A string field's bytes: tag, length, UTF-8. */
function stringField(field: number, s: string): Uint8Array {
  const b = new Bytes(64);
  b.varint(tag(field, BYTES));
  const text = utf8.encode(s);
  b.varint(text.length);
  b.raw(text);
  return b.buf.slice(0, b.pos);
}

/** KeyValue{key, value: AnyValue} as the SDK writes an attribute (an integer as int_value, else double_value). */
function keyValue(key: string, value: string | number | boolean): Uint8Array {
  const b = new Bytes(64);
  b.raw(stringField(1, key));
  b.varint(tag(2, BYTES));
  const any = b.open();
  if (typeof value === "string") b.raw(stringField(1, value));
  else if (typeof value === "boolean") {
    b.varint(tag(2, VARINT));
    b.varint(value ? 1 : 0);
  } else if (Number.isInteger(value) && value >= 0 && value <= 0xffffffff) {
    b.varint(tag(3, VARINT));
    b.varint(value);
  } else if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
    // int64 varint of a negative or large integer: ten bytes of two's complement, low group first.
    b.varint(tag(3, VARINT));
    let v = BigInt.asUintN(64, BigInt(value));
    b.room(10);
    while (v > 0x7fn) {
      b.buf[b.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    b.buf[b.pos++] = Number(v);
  } else {
    b.varint(tag(4, FIXED64));
    b.room(8);
    b.view.setFloat64(b.pos, value, true);
    b.pos += 8;
  }
  b.close(any);
  return b.buf.slice(0, b.pos);
}

/** The resource and scope, as the start of a request: everything before its spans. */
export interface Envelope {
  /** Resource attributes (service.name, service.version). */
  resource: SpanAttributes;
  scope: { name: string; version?: string | undefined };
}

/**
 * The spans of one export, encoded as they end. `add` appends a span; `take` returns the whole
 * ExportTraceServiceRequest for the spans added since the last take, and starts afresh.
 */
export class SpanBatch {
  private readonly spans = new Bytes(64 * 1024);
  private added = 0;
  private readonly resource: Uint8Array;
  private readonly scope: Uint8Array;
  /** Span.attributes entries (field 9) by key, then by value (a Map tells "1" from 1). */
  private readonly attributes = new Map<string, Map<string | number | boolean, Uint8Array>>();
  private cachedAttributes = 0;
  private readonly names = new Cache((s) => stringField(5, s));
  private readonly messages = new Cache((s) => stringField(2, s));

  constructor(envelope: Envelope) {
    const r = new Bytes(256);
    r.varint(tag(1, BYTES));
    const resource = r.open();
    for (const [k, v] of Object.entries(envelope.resource)) r.raw(withTag(1, keyValue(k, v)));
    r.varint(tag(2, VARINT));
    r.varint(0);
    r.close(resource);
    this.resource = r.buf.slice(0, r.pos);
    const s = new Bytes(64);
    s.varint(tag(1, BYTES));
    const scope = s.open();
    s.raw(stringField(1, envelope.scope.name));
    if (envelope.scope.version) s.raw(stringField(2, envelope.scope.version));
    s.close(scope);
    this.scope = s.buf.slice(0, s.pos);
  }

  get count(): number {
    return this.added;
  }

  private attribute(key: string, value: string | number | boolean): Uint8Array {
    let byValue = this.attributes.get(key);
    let bytes = byValue?.get(value);
    if (bytes === undefined) {
      if (this.cachedAttributes >= MAX_CACHED) {
        this.attributes.clear();
        this.cachedAttributes = 0;
        byValue = undefined;
      }
      if (byValue === undefined) this.attributes.set(key, (byValue = new Map()));
      bytes = withTag(9, keyValue(key, value));
      byValue.set(value, bytes);
      this.cachedAttributes++;
    }
    return bytes;
  }

  /** A span's attributes, in the order of the object the SDK would hold ({...initial, ...later}). */
  private writeAttributes(initial: SpanAttributes, later: SpanAttributes | undefined): void {
    const b = this.spans;
    for (const key in initial) {
      const value = later !== undefined && key in later ? later[key] : initial[key];
      b.raw(this.attribute(key, value as string | number | boolean));
    }
    if (later !== undefined) for (const key in later) if (!(key in initial)) b.raw(this.attribute(key, later[key] as string | number | boolean));
  }

  /** Appends a span: one of ours, or any ReadableSpan without events or links (ours have none, so none are written). */
  add(span: ReadableSpan | SpanRecord): void {
    const b = this.spans;
    const ctx = span.spanContext();
    b.varint(tag(2, BYTES));
    const at = b.open();
    if (ctx instanceof OwnSpanContext) {
      b.id(1, ctx.traceBytes, ctx.traceAt, 16);
      b.id(2, ctx.spanBytes, ctx.spanAt, 8);
    } else {
      b.hex(1, ctx.traceId);
      b.hex(2, ctx.spanId);
    }
    const traceState = ctx.traceState?.serialize();
    if (traceState) b.raw(stringField(3, traceState));
    const parent = span.parentSpanContext;
    if (parent instanceof OwnSpanContext) b.id(4, parent.spanBytes, parent.spanAt, 8);
    else if (parent?.spanId) b.hex(4, parent.spanId);
    b.raw(this.names.get(span.name));
    b.varint(tag(6, VARINT));
    b.varint(span.kind + 1); // the API has no value for "unspecified"; OTLP's enum starts there
    if (span instanceof SpanRecord) {
      const clock = span.clock;
      b.epoch(7, clock.high, clock.low + clock.since(span.startMs));
      b.epoch(8, clock.high, clock.low + clock.since(span.endMs));
      this.writeAttributes(span.initial, span.later);
    } else {
      b.time(7, span.startTime);
      b.time(8, span.endTime);
      this.writeAttributes(span.attributes as SpanAttributes, undefined);
    }
    // dropped_attributes_count (10), dropped_events_count (12), dropped_links_count (14): zero, written as the SDK does.
    b.room(6);
    b.buf[b.pos++] = tag(10, VARINT);
    b.buf[b.pos++] = 0;
    b.buf[b.pos++] = tag(12, VARINT);
    b.buf[b.pos++] = 0;
    b.buf[b.pos++] = tag(14, VARINT);
    b.buf[b.pos++] = 0;
    b.varint(tag(15, BYTES));
    const status = b.open();
    if (span.status.message) b.raw(this.messages.get(span.status.message));
    b.varint(tag(3, VARINT));
    b.varint(span.status.code);
    b.close(status);
    b.varint(tag(16, FIXED32)); // two bytes: field numbers from 16 on
    b.room(4);
    b.view.setUint32(b.pos, (ctx.traceFlags & 0xff) | FLAGS_HAS_IS_REMOTE | (parent?.isRemote ? FLAGS_IS_REMOTE : 0), true);
    b.pos += 4;
    b.close(at);
    this.added++;
  }

  /** The request for the spans added so far (undefined when none), and a fresh batch. */
  take(): Uint8Array | undefined {
    if (this.added === 0) return undefined;
    const spans = this.spans.buf.subarray(0, this.spans.pos);
    const scopeSpans = this.scope.length + spans.length;
    const resourceSpans = this.resource.length + 1 + varintSize(scopeSpans) + scopeSpans;
    const out = new Bytes(1 + varintSize(resourceSpans) + resourceSpans);
    out.varint(tag(1, BYTES));
    out.varint(resourceSpans);
    out.raw(this.resource);
    out.varint(tag(2, BYTES));
    out.varint(scopeSpans);
    out.raw(this.scope);
    out.raw(spans);
    // The spans' buffer is kept (grown to a batch's size once), so the next batch allocates nothing.
    this.spans.pos = 0;
    this.added = 0;
    return out.buf.subarray(0, out.pos);
  }
}

function withTag(field: number, body: Uint8Array): Uint8Array {
  const b = new Bytes(64);
  b.varint(tag(field, BYTES));
  b.varint(body.length);
  b.raw(body);
  return b.buf.slice(0, b.pos);
}
