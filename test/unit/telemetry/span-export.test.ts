// Spans on their way to a collector (src/telemetry/tracing/export.ts): a batch goes out once
// it holds 2,048 spans, fewer a second after the first of them, the rest at shutdown, through
// the SDK's OTLP/HTTP delegate to a real receiver; a collector that is down costs the spans of
// that send and nothing else (no throw, no hang, a count).
import { SpanKind, TraceFlags } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { otlpHttpSender, SpanExport } from "../../../src/telemetry/tracing/export.js";
import { CallClock, SpanRecord, WallClock } from "../../../src/telemetry/tracing/span-record.js";
import { freePort } from "../../helpers/servers.js";
import { startOtlpReceiver, type OtlpReceiver } from "../../helpers/otlp.js";

const RESOURCE = { "service.name": "mcphub-test", "service.version": "1" };
const envelope = { resource: RESOURCE, scope: { name: "mcphub", version: "1" } };
const source = { resource: resourceFromAttributes(RESOURCE), instrumentationScope: envelope.scope };
const clock = new WallClock();

function spans(n: number, traceId: string): SpanRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const now = performance.now();
    const s = new SpanRecord(source, `span ${i}`, SpanKind.INTERNAL, { traceId, spanId: (i + 1).toString(16).padStart(16, "0"), traceFlags: TraceFlags.SAMPLED }, undefined, new CallClock(clock, 0, now), now, { i });
    s.finish(now + 0.01);
    return s;
  });
}

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver?.close();
});

describe("span export", () => {
  it("sends a full batch at once and the rest at shutdown, every span arriving once", async () => {
    const sender = otlpHttpSender(receiver.url);
    const out = new SpanExport(envelope, sender.send, () => sender.shutdown());
    const traceId = "1234567890abcdef1234567890abcdef";
    for (const s of spans(2050, traceId)) out.add(s);
    await out.shutdown();
    const got = receiver.spans.filter((s) => s.traceId === traceId);
    expect(receiver.contentTypes).toEqual(["application/x-protobuf", "application/x-protobuf"]);
    expect(got).toHaveLength(2050);
    expect(new Set(got.map((s) => s.spanId)).size).toBe(2050);
    expect(got.find((s) => s.name === "span 2049")?.attributes).toEqual({ i: 2049 });
    expect(out.counts).toEqual({ sent: 2050, failed: 0 });
  });

  it("counts the spans of a send the collector refused, and still shuts down", async () => {
    // The receiver answers 404 off /v1/traces: an error the delegate does not retry.
    const sender = otlpHttpSender(receiver.url.replace("/v1/traces", "/v1/elsewhere"));
    const out = new SpanExport(envelope, sender.send, () => sender.shutdown());
    for (const s of spans(10, "abcdefabcdefabcdefabcdefabcdefab")) out.add(s);
    await out.shutdown();
    expect(out.counts).toEqual({ sent: 0, failed: 10 });
    out.add(spans(1, "abcdefabcdefabcdefabcdefabcdefab")[0] as SpanRecord); // after shutdown: ignored
    await out.shutdown();
    expect(out.counts.failed).toBe(10);
  });

  it("does not wait out the delegate's retries of an unreachable collector at shutdown", async () => {
    const port = await freePort(); // nothing listens: refused, and retried with backoff for up to 10 s
    const sender = otlpHttpSender(`http://127.0.0.1:${port}/v1/traces`);
    const out = new SpanExport(envelope, sender.send, () => sender.shutdown());
    for (const s of spans(3, "0123456789abcdef0123456789abcdef")) out.add(s);
    await out.shutdown();
    // Shutdown returned while the send was still being retried (its failure not yet counted);
    // waiting for the retries, it would have counted the three spans failed after ~8 s.
    expect(out.counts.failed).toBe(0);
  });

  it("sends a full batch at once, fewer spans a second after the first of them, the rest at shutdown", async () => {
    vi.useFakeTimers();
    try {
      const sends: number[] = [];
      const out = new SpanExport(envelope, (_body, n, done) => (sends.push(n), done(true)));
      const made = spans(2048 + 63, "22222222222222222222222222222222");
      for (const s of made.slice(0, 2047)) out.add(s);
      expect(sends).toEqual([]); // 2,047 spans: not yet a batch
      out.add(made[2047] as SpanRecord);
      expect(sends).toEqual([2048]); // the 2,048th sends the batch at once
      for (const s of made.slice(2048, 2048 + 10)) out.add(s);
      vi.advanceTimersByTime(999);
      expect(sends).toEqual([2048]);
      vi.advanceTimersByTime(1);
      expect(sends).toEqual([2048, 10]); // ten spans: sent on the timer
      for (const s of made.slice(2058)) out.add(s);
      await out.shutdown();
      expect(sends).toEqual([2048, 10, 53]);
      expect(out.counts).toEqual({ sent: 2048 + 63, failed: 0 });
    } finally {
      vi.useRealTimers();
    }
  });
});
