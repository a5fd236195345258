// Metrics in the Prometheus text format (docs/operations.md#metrics), behind one small interface
// the rest of mcphub records into. The implementation (prom.ts, on prom-client) is loaded only
// by a process that serves /metrics: the daemon, or `mcp serve` with its opt-in metrics port. A
// stdio gateway without that port records into NO_METRICS and never loads prom-client, so its
// start-up is unchanged.
//
// Every label is bounded: server and agent names come from the config, tool names from the
// catalogue (at most MAX_TOOL_LABELS distinct ones per process, the rest counted as "_other"),
// outcomes and events from fixed sets in the code. No argument value, id or message is a label.

import type { Metrics } from "./types.js";

export { MAX_TOOL_LABELS, OTHER_TOOL, UNSCOPED_AGENT, type CallMetric, type GaugeSource, type Labels, type Metrics, type ScrapeView } from "./types.js";

export const NO_METRICS: Metrics = {
  enabled: false,
  call: () => undefined,
  discovery: () => undefined,
  storeOp: () => undefined,
  guardrail: () => undefined,
  limited: () => undefined,
  gauge: () => undefined,
  scrape: () => Promise.resolve(""),
  contentType: "text/plain; version=0.0.4; charset=utf-8",
};

/** Loads prom-client and builds the process's metrics (with Node's process metrics beside them). */
export async function createMetrics(): Promise<Metrics> {
  const { PromMetrics } = await import("./prom.js");
  return new PromMetrics();
}
