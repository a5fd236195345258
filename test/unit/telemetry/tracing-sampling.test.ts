// mcphub's sampler and id generator (src/telemetry/tracing/sampling.ts) must decide exactly as
// the SDK's ParentBasedSampler (default delegates, root at the ratio) and make ids the W3C
// trace context accepts: compared decision by decision over the cases a gateway meets.
import { ROOT_CONTEXT, SpanKind, TraceFlags, trace, type Context, type SpanContext } from "@opentelemetry/api";
import { AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-node";
import { describe, expect, it } from "vitest";
import { spanName } from "../../../src/telemetry/tracing/index.js";
import { ParentFirstSampler, PooledIdGenerator } from "../../../src/telemetry/tracing/sampling.js";

const ids = new PooledIdGenerator();
const parent = (over: Partial<SpanContext>): Context =>
  trace.setSpanContext(ROOT_CONTEXT, { traceId: ids.generateTraceId(), spanId: ids.generateSpanId(), traceFlags: TraceFlags.SAMPLED, ...over });

const CONTEXTS: [string, () => Context][] = [
  ["no parent", () => ROOT_CONTEXT],
  ["a sampled remote parent", () => parent({ isRemote: true })],
  ["an unsampled remote parent", () => parent({ isRemote: true, traceFlags: TraceFlags.NONE })],
  ["a sampled local parent", () => parent({})],
  ["an unsampled local parent", () => parent({ traceFlags: TraceFlags.NONE })],
  ["a remote parent with an all-zero trace id", () => parent({ isRemote: true, traceId: "0".repeat(32) })],
  ["a remote parent with a malformed span id", () => parent({ isRemote: true, spanId: "xyz", traceFlags: TraceFlags.NONE })],
];

describe("ParentFirstSampler", () => {
  for (const ratio of [1, 0.5, 0]) {
    it(`decides as ParentBasedSampler at sample ${ratio}`, () => {
      const ours = new ParentFirstSampler(ratio);
      const sdk = new ParentBasedSampler({ root: ratio >= 1 ? new AlwaysOnSampler() : new TraceIdRatioBasedSampler(ratio) });
      for (const [what, make] of CONTEXTS) {
        // Many trace ids, so a ratio's root decisions cover both outcomes.
        for (let i = 0; i < 200; i++) {
          const ctx = make();
          const traceId = ids.generateTraceId();
          const a = ours.shouldSample(ctx, traceId, "tools/call x", SpanKind.SERVER, {}, []).decision;
          const b = sdk.shouldSample(ctx, traceId, "tools/call x", SpanKind.SERVER, {}, []).decision;
          expect(a, `${what}, trace ${traceId}`).toBe(b);
        }
      }
    });
  }
});

describe("PooledIdGenerator", () => {
  it("makes lower-case hex ids of W3C lengths, never all zeros, all distinct", () => {
    const gen = new PooledIdGenerator();
    const seen = new Set<string>();
    // Past several refills of the pool.
    for (let i = 0; i < 5000; i++) {
      const t = gen.generateTraceId();
      const s = gen.generateSpanId();
      expect(t).toMatch(/^[0-9a-f]{32}$/);
      expect(s).toMatch(/^[0-9a-f]{16}$/);
      expect(t).not.toBe("0".repeat(32));
      expect(s).not.toBe("0".repeat(16));
      seen.add(t);
      seen.add(s);
    }
    expect(seen.size).toBe(10_000);
  });
});

describe("spanName", () => {
  it("is '{method} {target}', the same string for the same pair, and stays bounded over a long tail of targets", () => {
    const first = spanName("tools/call", "files__read_text_file");
    expect(first).toBe("tools/call files__read_text_file");
    // A target that arrives as a new string each call (as a request's tool name does).
    expect(spanName("tools/call", ["files__", "read_text_file"].join(""))).toBe(first);
    for (let i = 0; i < 10_000; i++) expect(spanName("tools/call", `tool_${i}`)).toBe(`tools/call tool_${i}`);
    expect(spanName("tools/call", "files__read_text_file")).toBe("tools/call files__read_text_file");
  });
});
