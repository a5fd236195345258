// The per-call metrics' own series (src/telemetry/metrics/series.ts) must expose exactly what
// prom-client's Counter and Histogram would for the same observations: same lines, same order
// of labels, cumulative buckets (`le` first, as prom-client writes it), +Inf, _sum and _count.
import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { LabelledCounter, LabelledHistogram } from "../../../src/telemetry/metrics/series.js";

const BOUNDS = [0.001, 0.01, 0.1, 1];
const OBSERVED: [string, number][] = [
  ["a", 0.0005],
  ["a", 0.001],
  ["a", 0.05],
  ["b", 3],
  ["a", 0.1],
  ["b", 0.01],
];

async function text(register: (r: Registry) => void): Promise<string> {
  const r = new Registry();
  register(r);
  return r.metrics();
}

describe("metrics series", () => {
  it("a histogram reads as prom-client's for the same observations", async () => {
    const ours = await text((r) => {
      const h = new LabelledHistogram("t_seconds", "Time.", ["server"], BOUNDS);
      r.registerMetric(h as never);
      for (const [server, v] of OBSERVED) h.observe([server], v);
      h.observe(["a"], Number.NaN);
    });
    const theirs = await text((r) => {
      const h = new Histogram({ name: "t_seconds", help: "Time.", labelNames: ["server"], buckets: BOUNDS, registers: [r] });
      for (const [server, v] of OBSERVED) h.observe({ server }, v);
    });
    expect(ours).toBe(theirs);
    expect(ours).toContain('t_seconds_bucket{le="0.001",server="a"} 2');
    expect(ours).toContain('t_seconds_bucket{le="+Inf",server="b"} 2');
  });

  it("a counter reads as prom-client's, one series per label tuple", async () => {
    const calls: [string, string][] = [
      ["echo", "ok"],
      ["echo", "ok"],
      ["echo", "timeout"],
      ["", "bad_reference"],
    ];
    const ours = await text((r) => {
      const c = new LabelledCounter("t_total", "Calls.", ["server", "outcome"]);
      r.registerMetric(c as never);
      for (const labels of calls) c.inc(labels);
      c.inc(["echo", "ok"], 3);
    });
    const theirs = await text((r) => {
      const c = new Counter({ name: "t_total", help: "Calls.", labelNames: ["server", "outcome"], registers: [r] });
      for (const [server, outcome] of calls) c.inc({ server, outcome });
      c.inc({ server: "echo", outcome: "ok" }, 3);
    });
    expect(ours).toBe(theirs);
    expect(ours).toContain('t_total{server="echo",outcome="ok"} 5');
  });
});
