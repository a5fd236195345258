// Telemetry: append-only per-day NDJSON call records, and the aggregates read from them.
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
