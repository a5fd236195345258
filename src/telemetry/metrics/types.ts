// The shapes of mcphub's metrics: what the rest of mcphub records (Metrics), the gauges read at
// scrape time and the label bounds. Apart from index.ts so the prom-client implementation can
// implement them without importing the entry that loads it.

/** One finished tool call, as the record stage reports it. */
export interface CallMetric {
  /** The agent's name, "" for the unscoped daemon's clients. */
  agent: string;
  /** The server and the public tool name; "" when the call named no tool in scope. */
  server: string;
  tool: string;
  /** `ok`, `tool_error`, an error class (`timeout`, ...), a refusal reason or `limited`. */
  outcome: string;
  /** Time the call spent in the gateway itself: not downstream, not waiting for the user or a queue. */
  gatewaySeconds: number;
  /** Time the downstream took to answer, when the call was sent. */
  downstreamSeconds?: number | undefined;
}

export type Labels = Record<string, string>;

/** A gauge read from live state at scrape time (sessions, downstream states, limits). */
export interface GaugeSource {
  name: string;
  help: string;
  labelNames: readonly string[];
  read(): Iterable<{ labels: Labels; value: number }>;
  /** A total that only grows, kept elsewhere and read at scrape time: exposed as a counter. */
  counter?: boolean;
}

/** What one scraper may see: everything, or the series of one agent (and its servers). */
export type ScrapeView = { kind: "all" } | { kind: "agent"; agent: string; allowsServer(server: string): boolean };

export interface Metrics {
  /** False for NO_METRICS: callers may skip work that only feeds metrics. */
  readonly enabled: boolean;
  call(c: CallMetric): void;
  /** A discovery management tool (search_tools, resolve_tool, describe_tool, ...) answered. */
  discovery(tool: string, seconds: number): void;
  /** One operation on a store (the vault's results, the detached journal, ...). */
  storeOp(store: string, op: string, ok: boolean, seconds: number): void;
  /** A guardrail audit event (refused, confirmed, declined, changed, ...). */
  guardrail(event: string, reason: string | undefined, agent: string): void;
  /** A call refused by a limit (its kind: calls_per_minute, concurrent_calls, ...). */
  limited(kind: string, agent: string, server: string): void;
  gauge(source: GaugeSource): void;
  /** The text exposition for a scraper with this view. */
  scrape(view: ScrapeView): Promise<string>;
  readonly contentType: string;
}

/** The label value of the unscoped daemon's clients (an empty label value would read as "no label"). */
export const UNSCOPED_AGENT = "(unscoped)";
/** Distinct tool label values one process keeps; further tools are counted as "_other". */
export const MAX_TOOL_LABELS = 1000;
export const OTHER_TOOL = "_other";
