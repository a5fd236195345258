// The status document: what the page draws and what `/api/status` returns. Built on request from
// the hub's live state (server status shared with list_servers, the catalogue, the vault), the
// daemon's sessions and the last hour of telemetry; it stores nothing of its own.
import { byteOrder } from "../../util/json/canonical.js";
import type { RecentCalls, RecentServerStats } from "../../telemetry/recent.js";
import { traceExportCounts } from "../../telemetry/index.js";
import { VERSION } from "../../version.js";
import { Scope, serverStatus, type AgentLimitState, type Hub, type ServerLimitState, type ServerStatus } from "../../gateway/index.js";
import type { TokenStore } from "../tokens.js";
import { probeView, type FollowedProbe, type StoreProbeView } from "../../store/index.js";
import { lastLine, type ServerTimeline } from "./timeline.js";

/** Who is looking: the operator (page session or anonymous loopback) or an agent's bearer token. */
export type Viewer = { kind: "operator" } | { kind: "agent"; agent: string };

export interface DaemonSession {
  /** The token's agent; undefined for an unscoped (anonymous) session. */
  agent: string | undefined;
  opened: number;
  lastSeen: number;
}

export interface StatusSources {
  hub: Hub;
  timeline: ServerTimeline;
  recent: RecentCalls;
  tokens: TokenStore;
  sessions: () => DaemonSession[];
  startedAt: number;
  url: string;
  /** The config file enable/disable writes to; undefined when the daemon was started without one. */
  configPath?: string;
  /** A look at the store, and where it is (the operator sees that). */
  storeHealth?: () => Promise<FollowedProbe>;
  storeWhere?: string;
}

/** The store card: what /healthz shows, and for the operator where the store is and the full error. */
export interface StatusStore extends StoreProbeView {
  where?: string;
  problem?: string;
}

export interface Metrics {
  /** Calls that reached the server(s). */
  calls: number;
  errors: number;
  /** errors / calls: the servers' own failures, refused calls left out. */
  error_rate: number;
  /** Calls refused before they reached a server (invalid arguments, guardrails). */
  refused: number;
  calls_per_min: number;
  p50_ms?: number;
  p95_ms?: number;
  /** One value per minute over the last hour, oldest first (null: no calls that minute). */
  series: { calls: number[]; errors: number[]; p50: (number | null)[]; p95: (number | null)[] };
}

export interface StatusServer {
  name: string;
  enabled: boolean;
  state: string;
  connected: boolean;
  transport: string;
  /** Tools in the catalogue: from the live session, or cached from the last listing while idle. */
  tools: number;
  /** Where `tools` comes from: the running server ("live"), the cache ("cached"), or nowhere yet. */
  catalog: "live" | "cached" | "none";
  /** ISO time of the listing `tools` counts. */
  listed_at?: string;
  description?: string;
  /** ISO time the server entered its current state. */
  since: string;
  /** ISO time of the first failure of the current run of failed attempts. */
  failing_since?: string;
  error?: string;
  /** The last stderr line (sanitised), operator only. */
  stderr_line?: string;
  /**
   * Stdio servers: `off`, or the sandbox (network, what it may write and read). Paths are the
   * operator's to see; an agent's view has the network and the counts.
   */
  sandbox?: { mode: "off" } | { mode: "on"; live: boolean; backend?: string; network: string; write: string[] | number; read: string[] | number; roots?: string[] | number; hidden?: number; notes?: string[] };
  last_error?: { message: string; at: string; stderr_line?: string };
  server_version?: string;
  last_call?: string;
  metrics: Metrics;
  /** Calls sent to it now, waiting in its queue, and its concurrency limit (docs/operations.md#limits). */
  limits: { in_flight: number; queued: number; concurrent_calls?: { limit: number; queue: number; queue_timeout_ms: number } };
  /**
   * Tools that cannot be called until an operator approves them (docs/guardrails.md): changed
   * since approved (with what changed; both descriptions for the operator), awaiting a first
   * approval, or a definitions file that cannot be read.
   */
  definitions?: {
    changed: { tool: string; changes: string[]; description?: { before: string; after: string } }[];
    awaiting_approval: string[];
    unreadable?: string;
  };
}

export interface StatusAgent {
  name: string;
  type?: string;
  mode?: string;
  disabled: boolean;
  /** Servers in scope (as configured, disabled ones included), or "all". */
  servers: string[] | "all";
  /** How many `server__tool` names the agent's allowlist has; absent = every tool. */
  allowed_tools?: number;
  tokens: number;
  sessions: number;
  last_activity?: string;
  /** Its calls in flight and the limits in force, with how full the minute is (docs/operations.md#limits). */
  limits: { in_flight: number; calls_per_minute?: { limit: number; key: string; last_minute: number }; concurrent_calls?: { limit: number; key: string } };
}

export interface StatusDocument {
  mcphub: { version: string; url: string; started: string; uptime_s: number };
  generated: string;
  viewer: Viewer;
  tokens_required: boolean;
  expose: string;
  catalog_revision: string;
  config_path?: string;
  servers: StatusServer[];
  agents: StatusAgent[];
  totals: Metrics;
  vault: { available: boolean; detail?: string; warning?: string; reason?: string };
  /** Where the shared state is kept and whether it answers (the daemon's store). */
  store?: StatusStore;
  /** The operator's only, while telemetry.otlp is set: spans sent to the collector and lost since the process started. */
  tracing?: StatusTracing;
}

export interface StatusTracing {
  sample: number;
  spans_sent: number;
  /** Spans of sends that failed after the exporter's retries (a collector refusing or down). */
  spans_failed: number;
  /** The endpoint without user, password or query (where a collector's key may be). */
  collector: string;
}

function tracingView(otlp: { url: string; sample: number }): StatusTracing {
  const url = new URL(otlp.url);
  const counts = traceExportCounts();
  return { sample: otlp.sample, spans_sent: counts.sent, spans_failed: counts.failed, collector: `${url.origin}${url.pathname}` };
}

const iso = (ms: number) => new Date(ms).toISOString();

function metrics(r: RecentServerStats, windowMin: number): Metrics {
  return {
    calls: r.calls,
    errors: r.errors,
    error_rate: Math.round(r.errorRate * 10_000) / 10_000,
    refused: r.refused,
    calls_per_min: Math.round((r.calls / windowMin) * 100) / 100,
    ...(r.p50Ms !== undefined ? { p50_ms: r.p50Ms } : {}),
    ...(r.p95Ms !== undefined ? { p95_ms: r.p95Ms } : {}),
    series: r.series,
  };
}

function sandboxView(s: NonNullable<ServerStatus["sandbox"]>, operator: boolean): NonNullable<StatusServer["sandbox"]> {
  if (s.mode === "off") return s;
  const list = (xs: string[] | undefined) => (operator ? (xs ?? []) : (xs ?? []).length);
  return {
    mode: "on",
    live: s.live,
    ...(s.backend ? { backend: `${s.backend}${s.version ? ` ${s.version}` : ""}` } : {}),
    network: s.network,
    write: list(s.write),
    read: list(s.read),
    ...(s.roots !== undefined ? { roots: list(s.roots) } : {}),
    ...(s.hidden !== undefined ? { hidden: s.hidden.length } : {}),
    ...(operator && s.notes?.length ? { notes: s.notes } : {}),
  };
}

export async function buildStatus(src: StatusSources, viewer: Viewer): Promise<StatusDocument> {
  const { hub } = src;
  const now = Date.now();
  await src.recent.refresh().catch(() => undefined); // telemetry is best effort: show what we have
  const operator = viewer.kind === "operator";
  const scope = viewer.kind === "agent" ? new Scope(hub.config, viewer.agent) : undefined;
  const windowMin = 60;

  const limits = hub.limits.snapshot();
  const serverLimits = new Map(limits.servers.map((l) => [l.server, l]));
  const servers: StatusServer[] = [];
  for (const name of Object.keys(hub.config.servers).sort(byteOrder)) {
    if (scope && !scope.allowsServer(name)) continue;
    const st = serverStatus(hub, name);
    if (!st) continue;
    const r = src.recent.server(name);
    const last = src.timeline.lastError(name);
    const stderr = operator ? lastLine(st.stderrTail) : undefined;
    const failing = src.timeline.failingSince(name);
    const plan = hub.catalog.planOf(name);
    const report = hub.guard.report(name, hub.catalog.entriesOf(name).filter((e) => !scope || scope.allowsTool(e.server, e.tool, e.wire, plan)));
    servers.push({
      name,
      enabled: st.enabled,
      state: st.state,
      connected: st.connected,
      transport: st.transport,
      // An idle server's tools are still in the catalogue (cached): agents can find and call them.
      tools: st.catalog === "none" ? 0 : hub.catalog.entriesOf(name).length,
      catalog: st.catalog,
      ...(st.catalogListedAt !== undefined ? { listed_at: iso(st.catalogListedAt) } : {}),
      ...(st.description !== undefined ? { description: st.description } : {}),
      since: iso(src.timeline.since(name)),
      ...(failing !== undefined ? { failing_since: iso(failing) } : {}),
      ...(st.error ? { error: st.error } : {}),
      ...(stderr ? { stderr_line: stderr } : {}),
      ...(last
        ? { last_error: { message: last.message, at: iso(last.at), ...(operator && last.stderrLine ? { stderr_line: last.stderrLine } : {}) } }
        : {}),
      ...(st.serverVersion ? { server_version: `${st.serverVersion.name} ${st.serverVersion.version}` } : {}),
      ...(st.sandbox ? { sandbox: sandboxView(st.sandbox, operator) } : {}),
      ...(r.lastCall !== undefined ? { last_call: iso(r.lastCall) } : {}),
      metrics: metrics(r, windowMin),
      limits: serverLimitsOf(serverLimits.get(name)),
      ...(report
        ? {
            definitions: {
              // The new description is the attacker's text: only the operator sees it.
              changed: report.changed.map((c) => ({ tool: c.namespaced, changes: c.changes, ...(operator && c.description ? { description: c.description } : {}) })),
              awaiting_approval: report.awaiting_approval,
              ...(operator && report.unreadable ? { unreadable: report.unreadable } : {}),
            },
          }
        : {}),
    });
  }

  const agents = await agentRows(src, viewer, now);
  const vaultProblem = await hub.vaultProblem();
  const store = vaultProblem ? undefined : await hub.resultStore();
  const key = store?.keyStatus();
  const probe = await src.storeHealth?.().catch(() => undefined);
  const storeCard: StatusStore | undefined = probe
    ? {
        ...probeView(probe),
        ...(operator && src.storeWhere !== undefined ? { where: src.storeWhere } : {}),
        ...(operator && probe.problem !== undefined ? { problem: probe.problem } : {}),
      }
    : undefined;
  const totals =
    viewer.kind === "agent"
      ? sumMetrics(servers.map((s) => src.recent.server(s.name)), windowMin)
      : metrics(src.recent.total(), windowMin);
  return {
    mcphub: { version: VERSION, url: src.url, started: iso(src.startedAt), uptime_s: Math.floor((now - src.startedAt) / 1000) },
    generated: iso(now),
    viewer,
    tokens_required: (await src.tokens.authenticate(undefined)).required,
    expose: hub.config.expose,
    catalog_revision: hub.view(viewer.kind === "agent" ? viewer.agent : undefined).revision(),
    ...(operator && src.configPath ? { config_path: src.configPath } : {}),
    servers,
    agents,
    totals,
    // Where the key lives (paths, the data directory) is the operator's business.
    vault: !operator
      ? { available: !vaultProblem }
      : vaultProblem
        ? { available: false, reason: vaultProblem }
        : { available: true, ...(key ? { detail: `key from ${key.source}: ${key.detail}` } : {}), ...(key?.warning ? { warning: key.warning } : {}) },
    ...(storeCard ? { store: storeCard } : {}),
    ...(operator && hub.config.telemetry?.otlp ? { tracing: tracingView(hub.config.telemetry.otlp) } : {}),
  };
}

async function agentRows(src: StatusSources, viewer: Viewer, now: number): Promise<StatusAgent[]> {
  const { config } = src.hub;
  const sessions = src.sessions();
  const tokens = await src.tokens.list().catch(() => []);
  const lastCalls = src.recent.lastCallByAgent();
  const limits = new Map(src.hub.limits.snapshot().agents.map((a) => [a.agent, a]));
  const rows: StatusAgent[] = [];
  const add = (name: string, key: string | undefined) => {
    const mine = sessions.filter((s) => s.agent === key);
    const lastSeen = Math.max(0, ...mine.map((s) => s.lastSeen), lastCalls.get(key ?? "") ?? 0);
    const agent = key === undefined ? undefined : config.agents[key];
    let servers: string[] | "all" = "all";
    if (agent && !agent.disabled && key !== undefined) {
      const scope = new Scope(config, key);
      // As configured, disabled servers included: the Servers table says which are off.
      if (!scope.isUnscoped) servers = Object.keys(config.servers).filter((n) => scope.allowsServer(n)).sort(byteOrder);
    }
    rows.push({
      name,
      ...(agent?.type ? { type: agent.type } : {}),
      ...(agent ? { mode: agent.mode } : {}),
      disabled: agent?.disabled === true,
      servers,
      ...(agent?.tools ? { allowed_tools: agent.tools.length } : {}),
      tokens: key === undefined ? 0 : tokens.filter((t) => t.agent === key && t.revoked === undefined).length,
      sessions: mine.length,
      ...(lastSeen > 0 && lastSeen <= now ? { last_activity: iso(lastSeen) } : {}),
      limits: agentLimitsOf(limits.get(key ?? "")),
    });
  };
  if (viewer.kind === "agent") {
    add(viewer.agent, viewer.agent);
    return rows;
  }
  for (const name of Object.keys(config.agents).sort(byteOrder)) add(name, name);
  // Unscoped clients (no token yet, or a stdio gateway without --agent) are one more row.
  if (sessions.some((s) => s.agent === undefined) || lastCalls.has("")) add("(unscoped)", undefined);
  return rows;
}

function serverLimitsOf(l: ServerLimitState | undefined): StatusServer["limits"] {
  if (!l) return { in_flight: 0, queued: 0 };
  const c = l.concurrent_calls;
  return { in_flight: l.in_flight, queued: l.queued, ...(c ? { concurrent_calls: { limit: c.limit, queue: c.queue, queue_timeout_ms: c.queue_timeout_ms } } : {}) };
}

function agentLimitsOf(l: AgentLimitState | undefined): StatusAgent["limits"] {
  if (!l) return { in_flight: 0 };
  return { in_flight: l.in_flight, ...(l.calls_per_minute ? { calls_per_minute: l.calls_per_minute } : {}), ...(l.concurrent_calls ? { concurrent_calls: l.concurrent_calls } : {}) };
}

function sumMetrics(rs: RecentServerStats[], windowMin: number): Metrics {
  const calls = rs.reduce((a, r) => a + r.calls, 0);
  const errors = rs.reduce((a, r) => a + r.errors, 0);
  const refused = rs.reduce((a, r) => a + r.refused, 0);
  const len = rs[0]?.series.calls.length ?? windowMin;
  const series: Metrics["series"] = {
    calls: Array.from({ length: len }, (_, i) => rs.reduce((a, r) => a + (r.series.calls[i] ?? 0), 0)),
    errors: Array.from({ length: len }, (_, i) => rs.reduce((a, r) => a + (r.series.errors[i] ?? 0), 0)),
    // Percentiles do not add up across servers; an agent's page draws per-server latency only.
    p50: Array.from({ length: len }, () => null),
    p95: Array.from({ length: len }, () => null),
  };
  return { calls, errors, error_rate: calls ? Math.round((errors / calls) * 10_000) / 10_000 : 0, refused, calls_per_min: Math.round((calls / windowMin) * 100) / 100, series };
}
