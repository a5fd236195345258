// The metrics on prom-client: one Registry per process with mcphub's series and Node's process
// metrics (collectDefaultMetrics: CPU, memory, event-loop lag, GC). Counters and histograms are
// fed by the record stage and the management tools; gauges are read from live state at scrape
// time (GaugeSource). The text is prom-client's own exposition; a scraper that may see only one
// agent gets the same text with the other agents' series left out.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from "prom-client";
import { LabelledCounter, LabelledHistogram } from "./series.js";
import { MAX_TOOL_LABELS, OTHER_TOOL, UNSCOPED_AGENT, type CallMetric, type GaugeSource, type Metrics, type ScrapeView } from "./types.js";

/** Seconds; the gateway's own time per call is tens of microseconds to milliseconds. */
const GATEWAY_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** Seconds; a downstream answers in milliseconds to minutes. */
const DOWNSTREAM_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const DISCOVERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/**
 * How often the event-loop lag is sampled (prom-client's eventLoopMonitoringPrecision, Node's
 * monitorEventLoopDelay resolution), in ms. prom-client's 10 ms is a timer that wakes the process
 * a hundred times a second, busy or idle: an idle `mcp serve` with metrics spent 6.10 ms of CPU a
 * second at 10 ms and 0.73 at 100 ms, against 0.07 without metrics (`bench/ops.ts --idle`), some
 * 2.5 µs a call at one call in flight. A 15 s scrape still summarises 150 samples of the lag.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/** prom-client's formatter for one metric (Registry#getMetricsAsString, not in its typings). */
interface MetricLike {
  get(): Promise<MetricObjectWithValues<MetricValue<string>>>;
}
type Formatter = { getMetricsAsString(metric: MetricLike): Promise<string> };

export class PromMetrics implements Metrics {
  readonly enabled = true;
  private readonly registry = new Registry();
  private readonly tools = new Set<string>();
  // Moved by every call: our own series (series.ts), not prom-client's Counter and Histogram.
  private readonly calls: LabelledCounter;
  private readonly gatewayTime: LabelledHistogram;
  private readonly downstreamTime: LabelledHistogram;
  private readonly discoveryTime: Histogram<"tool">;
  private readonly storeOps: Counter<"store" | "op" | "outcome">;
  private readonly storeTime: Histogram<"store" | "op">;
  private readonly guardrails: Counter<"event" | "reason" | "agent">;
  private readonly refusals: Counter<"limit" | "agent" | "server">;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    this.calls = this.own(
      new LabelledCounter(
        "mcphub_tool_calls_total",
        "Tool calls that reached a tool in scope (or named none: server and tool empty), by outcome: ok, tool_error, an error class, a guardrail refusal or limited.",
        ["server", "tool", "agent", "outcome"],
      ),
    );
    this.gatewayTime = this.own(
      new LabelledHistogram(
        "mcphub_tool_call_gateway_seconds",
        "Time a tool call spent in the gateway itself: from the request to the answer, less the downstream call and any wait for a server to start, the user's confirmation or a server's queue.",
        ["server"],
        GATEWAY_BUCKETS,
      ),
    );
    this.downstreamTime = this.own(
      new LabelledHistogram("mcphub_tool_call_downstream_seconds", "Time the downstream server took to answer a tool call (sent to answered or failed).", ["server"], DOWNSTREAM_BUCKETS),
    );
    this.discoveryTime = new Histogram({
      name: "mcphub_discovery_seconds",
      help: "Time a discovery management tool took to answer (search_tools, resolve_tool, describe_tool, list_servers).",
      labelNames: ["tool"],
      buckets: DISCOVERY_BUCKETS,
      registers,
    });
    this.storeOps = new Counter({
      name: "mcphub_store_operations_total",
      help: "Operations on the vault's stores (results: stored results and receipts; detached: the detached-call journal), by outcome.",
      labelNames: ["store", "op", "outcome"],
      registers,
    });
    this.storeTime = new Histogram({
      name: "mcphub_store_operation_seconds",
      help: "Time of one operation on a vault store.",
      labelNames: ["store", "op"],
      buckets: STORE_BUCKETS,
      registers,
    });
    this.guardrails = new Counter({
      name: "mcphub_guardrail_events_total",
      help: "Guardrail audit events: refused, confirmed, declined, changed, awaiting_approval, approved (reason: the refusal's or the change's).",
      labelNames: ["event", "reason", "agent"],
      registers,
    });
    this.refusals = new Counter({
      name: "mcphub_limit_refusals_total",
      help: "Calls refused by a limit: calls_per_minute, concurrent_calls (per agent), server_concurrent_calls, server_queue_timeout.",
      labelNames: ["limit", "agent", "server"],
      registers,
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  call(c: CallMetric): void {
    const server = c.server;
    this.calls.inc([server, this.tool(c.tool), agentLabel(c.agent), c.outcome]);
    if (server === "") return;
    this.gatewayTime.observe([server], c.gatewaySeconds);
    if (c.downstreamSeconds !== undefined) this.downstreamTime.observe([server], c.downstreamSeconds);
  }

  /** Registers one of our own series with the registry (it reads name, help, type and get()). */
  private own<T extends LabelledCounter | LabelledHistogram>(metric: T): T {
    this.registry.registerMetric(metric as unknown as Parameters<Registry["registerMetric"]>[0]);
    return metric;
  }

  discovery(tool: string, seconds: number): void {
    this.discoveryTime.observe({ tool }, seconds);
  }

  storeOp(store: string, op: string, ok: boolean, seconds: number): void {
    this.storeOps.inc({ store, op, outcome: ok ? "ok" : "error" });
    this.storeTime.observe({ store, op }, seconds);
  }

  guardrail(event: string, reason: string | undefined, agent: string): void {
    this.guardrails.inc({ event, reason: reason ?? "", agent: agentLabel(agent) });
  }

  limited(kind: string, agent: string, server: string): void {
    this.refusals.inc({ limit: kind, agent: agentLabel(agent), server });
  }

  gauge(source: GaugeSource): void {
    const config = { name: source.name, help: source.help, labelNames: [...source.labelNames], registers: [this.registry] };
    // Read afresh at each scrape, after a reset: series that are gone (a server removed, a
    // session closed) must not linger. A counter's total is kept by its owner and set here.
    const rows = () => [...source.read()].map(({ labels, value }) => ({ labels: "agent" in labels ? { ...labels, agent: agentLabel(labels.agent ?? "") } : labels, value }));
    if (source.counter)
      new Counter({
        ...config,
        collect() {
          this.reset();
          for (const r of rows()) this.inc(r.labels, r.value);
        },
      });
    else
      new Gauge({
        ...config,
        collect() {
          this.reset();
          for (const r of rows()) this.set(r.labels, r.value);
        },
      });
  }

  async scrape(view: ScrapeView): Promise<string> {
    if (view.kind === "all") return this.registry.metrics();
    // The same formatter, over a copy of each of mcphub's metrics that keeps only this agent's series.
    const own = agentLabel(view.agent);
    const formatter = this.registry as unknown as Formatter;
    const parts: string[] = [];
    for (const metric of this.registry.getMetricsAsArray()) {
      if (!metric.name.startsWith("mcphub_")) continue;
      const m = await (metric as unknown as MetricLike).get();
      const values = m.values.filter((v) => {
        const labels = v.labels as Record<string, string | number | undefined>;
        if (labels.agent !== undefined) return labels.agent === own && (labels.server === undefined || labels.server === "" || view.allowsServer(String(labels.server)));
        return labels.server !== undefined && labels.server !== "" && view.allowsServer(String(labels.server));
      });
      parts.push(await formatter.getMetricsAsString({ get: async () => ({ ...m, values }) }));
    }
    return `${parts.join("\n\n")}\n`;
  }

  /** The tool label: catalogue names, at most MAX_TOOL_LABELS of them; the rest share one. */
  private tool(name: string): string {
    if (name === "" || this.tools.has(name)) return name;
    if (this.tools.size >= MAX_TOOL_LABELS) return OTHER_TOOL;
    this.tools.add(name);
    return name;
  }
}

function agentLabel(agent: string): string {
  return agent === "" ? UNSCOPED_AGENT : agent;
}
