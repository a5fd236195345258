// Telemetry: append-only per-day NDJSON call records and the aggregates read from them; metrics
// (metrics/, Prometheus text through prom-client, loaded only where /metrics is served) and
// traces (tracing/, OpenTelemetry over OTLP/HTTP, loaded only when telemetry.otlp.url is set).
export { callRecord, encodeRecord, normalizeErrorClass, ERROR_CLASS_RE, type CallRecord, type CallVia } from "./record.js";
export { Telemetry, type TelemetryOptions } from "./writer.js";
export { AUDIT_EVENTS, encodeAudit, queryAudit, type AuditEvent, type AuditQuery, type AuditRecord, type AuditReport } from "./audit.js";
export {
  queryStats,
  topTools,
  calledServers,
  type StatsQuery,
  type StatsReport,
  type StatsTotals,
  type ServerStats,
  type ToolStats,
  type RecentCall,
  type AgentStats,
} from "./query.js";
export { pruneTelemetry, dayFileName, telemetryDir, DEFAULT_RETENTION_DAYS, DAY_MS } from "./files.js";
export { RecentCalls, RECENT_WINDOW_MS, type RecentServerStats } from "./recent.js";
export { createMetrics, MAX_TOOL_LABELS, NO_METRICS, OTHER_TOOL, UNSCOPED_AGENT, type CallMetric, type GaugeSource, type Labels, type Metrics, type ScrapeView } from "./metrics/index.js";
export {
  configureTracing,
  currentTraceId,
  errorClassOf,
  outsideTrace,
  shutdownTracing,
  spanName,
  startCallTrace,
  traceChild,
  traceExportCounts,
  traceHeaders,
  tracingEnabled,
  type CallTrace,
  type ClientSpan,
  type OtlpSettings,
  type SpanAttributes,
  type StageSpan,
  type TraceSpan,
} from "./tracing/index.js";
