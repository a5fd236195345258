// The metrics every tool call moves (calls by server/tool/agent/outcome, gateway and downstream
// time), kept in plain counters and bucket arrays and handed to prom-client's registry as
// metrics of its own shape (a `get()` returning the values prom-client's Counter and Histogram
// return), so the exposition is prom-client's formatter's. Why not prom-client's Counter and
// Histogram: they hash the label object on every inc/observe (even through `.labels()`), and a
// histogram finds its bucket by a float-keyed property (a number-to-string conversion per
// observation); with three of those per call that was ~15 µs of CPU a call (bench/ops.ts,
// profiled), more than the +5% the issue allows. Here a call is a Map lookup on a key built
// from the label values and a short bucket scan.
import type { MetricObjectWithValues, MetricValueWithName } from "prom-client";

type Values = MetricValueWithName<string>[];

/** What prom-client's Registry reads of a metric: its name, help, type and `get()`. */
abstract class Series<S> {
  readonly aggregator = "sum" as const;
  protected readonly series = new Map<string, S>();
  abstract readonly type: "counter" | "histogram";
  constructor(
    readonly name: string,
    readonly help: string,
    protected readonly labelNames: readonly string[],
  ) {}

  /** prom-client calls this (Registry#getMetricsAsString); nothing to collect: values are live. */
  collect(): void {}

  protected labelsOf(values: readonly string[]): Record<string, string> {
    const labels: Record<string, string> = {};
    this.labelNames.forEach((n, i) => (labels[n] = values[i] ?? ""));
    return labels;
  }

  protected abstract valuesOf(s: S): Values;

  get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const values: Values = [];
    for (const s of this.series.values()) values.push(...this.valuesOf(s));
    // prom-client types `type` as an enum whose values are these strings.
    const metric = { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, collect: () => undefined, values };
    return Promise.resolve(metric as unknown as MetricObjectWithValues<MetricValueWithName<string>>);
  }
}

/** The label values as one Map key (no label value holds a NUL). */
const keyOf = (values: readonly string[]) => (values.length === 1 ? (values[0] as string) : values.join("\u0000"));

interface CounterSeries {
  labels: Record<string, string>;
  value: number;
}

export class LabelledCounter extends Series<CounterSeries> {
  readonly type = "counter" as const;

  inc(values: readonly string[], by = 1): void {
    const key = keyOf(values);
    const s = this.series.get(key);
    if (s) s.value += by;
    else this.series.set(key, { labels: this.labelsOf(values), value: by });
  }

  protected valuesOf(s: CounterSeries): Values {
    return [{ labels: s.labels, value: s.value }];
  }
}

interface HistogramSeries {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative); the last slot is above the top bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class LabelledHistogram extends Series<HistogramSeries> {
  readonly type = "histogram" as const;

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  observe(values: readonly string[], value: number): void {
    if (!Number.isFinite(value)) return;
    const key = keyOf(values);
    let s = this.series.get(key);
    if (!s) {
      s = { labels: this.labelsOf(values), counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    s.counts[i] = (s.counts[i] as number) + 1;
    s.sum += value;
    s.count++;
  }

  protected valuesOf(s: HistogramSeries): Values {
    const bucket = `${this.name}_bucket`;
    const out: Values = [];
    let acc = 0;
    this.bounds.forEach((le, i) => {
      acc += s.counts[i] as number;
      out.push({ metricName: bucket, labels: { le, ...s.labels }, value: acc });
    });
    out.push({ metricName: bucket, labels: { le: "+Inf", ...s.labels }, value: s.count });
    out.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
    out.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    return out;
  }
}
