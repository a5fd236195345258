// The spans of one call as mcphub's tracing (src/telemetry/tracing/otel.ts) exports them over
// OTLP/HTTP to a receiver: the tree of a plain call, and durations that nest. A stage's span is
// made as the stage ends, with the stage's own start time; the SDK, given a start time but no
// end time, ends a span at Date.now() (whole milliseconds, another clock), so a stage of a few
// µs came out as long as a millisecond or more: longer than the request around it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOtel } from "../../../src/telemetry/tracing/otel.js";
import type { TracingBackend } from "../../../src/telemetry/tracing/types.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../../helpers/otlp.js";

const CALLS = 40;

let receiver: OtlpReceiver;
let backend: TracingBackend;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  backend = startOtel({ url: receiver.url, sample: 1, service_name: "mcphub-test" }, "test");
});
afterAll(async () => {
  await backend?.shutdown();
  await receiver?.close();
});

describe("a call's spans", () => {
  it("make the tree of a plain call, each child's duration within its parent's", async () => {
    const traceIds: string[] = [];
    for (let i = 0; i < CALLS; i++) {
      const t = backend.startCall("tools/call bench__echo", { "mcp.method.name": "tools/call", "gen_ai.tool.name": "bench__echo" }, undefined);
      traceIds.push(t.traceId);
      t.stage("mcphub.locate").end({ keep: true });
      t.stage("mcphub.guard").end({ keep: true });
      const dispatch = t.stage("mcphub.dispatch");
      const call = t.child("tools/call echo", "client", { "mcphub.server": "bench" });
      await new Promise((r) => setImmediate(r)); // the downstream answers later
      call.end();
      dispatch.end({ keep: true });
      t.annotate({ attributes: { "mcphub.outcome": "ok" } });
      t.end();
    }
    await backend.shutdown(); // sends what is queued
    const duration = (s: ReceivedSpan) => s.endNs - s.startNs;
    for (const traceId of traceIds) {
      const spans = receiver.spans.filter((s) => s.traceId === traceId);
      const root = spans.find((s) => s.parentSpanId === "") as ReceivedSpan;
      expect(root.name).toBe("tools/call bench__echo");
      const stages = spans.filter((s) => s.parentSpanId === root.spanId);
      expect(stages.map((s) => s.name).sort()).toEqual(["mcphub.dispatch", "mcphub.guard", "mcphub.locate"]);
      const dispatch = stages.find((s) => s.name === "mcphub.dispatch") as ReceivedSpan;
      const call = spans.find((s) => s.parentSpanId === dispatch.spanId) as ReceivedSpan;
      expect(call.name).toBe("tools/call echo");
      expect(spans).toHaveLength(5);
      for (const [child, parent] of [...stages.map((s) => [s, root] as const), [call, dispatch] as const]) {
        expect(duration(child), `${child.name} (trace ${traceId})`).toBeGreaterThanOrEqual(0n);
        expect(duration(child), `${child.name} against ${parent.name} (trace ${traceId})`).toBeLessThanOrEqual(duration(parent));
      }
    }
  });
});
