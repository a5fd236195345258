// What the hub shows the metrics and traces of its own state: gauges read at scrape time (each
// downstream's state and tool count, calls in flight, the limits and how full they are, the
// spans exported), and
// the vault's stores wrapped so each operation is counted and timed. (Traced apart: a result
// the finalize stage stores is a span `mcphub.store.results.put` of the call, finalize.ts.)
import type { DownstreamSnapshot, ServerState } from "../downstream/types.js";
import { traceExportCounts, type Metrics } from "../telemetry/index.js";
import type { Limiter } from "./limits/index.js";

const STATES: readonly ServerState[] = ["idle", "connecting", "ready", "failed", "locked", "needs_auth", "disabled"];

export interface HubState {
  snapshots(): DownstreamSnapshot[];
  limits: Pick<Limiter, "snapshot" | "inFlight">;
}

export function registerHubGauges(metrics: Metrics, state: HubState): void {
  if (!metrics.enabled) return;
  metrics.gauge({
    name: "mcphub_downstream_state",
    help: "Each downstream server's state: 1 for the state it is in, 0 for the others (idle, connecting, ready, failed, locked, needs_auth, disabled).",
    labelNames: ["server", "state"],
    *read() {
      for (const snap of state.snapshots()) for (const s of STATES) yield { labels: { server: snap.name, state: s }, value: snap.state === s ? 1 : 0 };
    },
  });
  metrics.gauge({
    name: "mcphub_downstream_up",
    help: "1 while the gateway holds a live connection to the server.",
    labelNames: ["server"],
    *read() {
      for (const snap of state.snapshots()) yield { labels: { server: snap.name }, value: snap.connected ? 1 : 0 };
    },
  });
  metrics.gauge({
    name: "mcphub_downstream_tools",
    help: "Tools the server lists on its live connection.",
    labelNames: ["server"],
    *read() {
      for (const snap of state.snapshots()) if (snap.connected) yield { labels: { server: snap.name }, value: snap.tools.length };
    },
  });
  metrics.gauge({
    name: "mcphub_tool_calls_in_flight",
    help: "Tool calls sent downstream and not answered yet, by agent and server (waiting in a server's queue is mcphub_server_queued_calls).",
    labelNames: ["agent", "server"],
    *read() {
      for (const f of state.limits.inFlight()) yield { labels: { agent: f.agent, server: f.server }, value: f.calls };
    },
  });
  metrics.gauge({
    name: "mcphub_server_queued_calls",
    help: "Calls waiting for a free slot under servers.NAME.limits.concurrent_calls.",
    labelNames: ["server"],
    *read() {
      for (const s of state.limits.snapshot().servers) if (s.concurrent_calls) yield { labels: { server: s.server }, value: s.queued };
    },
  });
  metrics.gauge({
    name: "mcphub_limit",
    help: "Each call limit in force: limit is calls_per_minute or concurrent_calls (agent, server empty) or server_concurrent_calls (server, agent empty).",
    labelNames: ["limit", "agent", "server"],
    *read() {
      const snap = state.limits.snapshot();
      for (const a of snap.agents) {
        if (a.calls_per_minute) yield { labels: { limit: "calls_per_minute", agent: a.agent, server: "" }, value: a.calls_per_minute.limit };
        if (a.concurrent_calls) yield { labels: { limit: "concurrent_calls", agent: a.agent, server: "" }, value: a.concurrent_calls.limit };
      }
      for (const s of snap.servers) if (s.concurrent_calls) yield { labels: { limit: "server_concurrent_calls", agent: "", server: s.server }, value: s.concurrent_calls.limit };
    },
  });
  metrics.gauge({
    name: "mcphub_trace_spans_exported_total",
    help: "Spans sent to the OTLP collector (outcome sent), and lost in sends that failed after retries (failed), since the process started; 0 while tracing is off.",
    labelNames: ["outcome"],
    counter: true,
    *read() {
      const counts = traceExportCounts();
      yield { labels: { outcome: "sent" }, value: counts.sent };
      yield { labels: { outcome: "failed" }, value: counts.failed };
    },
  });
  metrics.gauge({
    name: "mcphub_agent_calls_last_minute",
    help: "Calls an agent with calls_per_minute started in the last 60 seconds.",
    labelNames: ["agent"],
    *read() {
      for (const a of state.limits.snapshot().agents) if (a.calls_per_minute) yield { labels: { agent: a.agent }, value: a.calls_per_minute.last_minute };
    },
  });
}

/**
 * The store with every method counted and timed under `store` (results, detached). A Proxy, so
 * a store that gains a method is observed without a change here.
 */
export function observeStore<T extends object>(target: T, store: string, metrics: Metrics): T {
  return new Proxy(target, {
    get(obj, prop) {
      // The store itself is `this` for its getters and methods (its private fields live on it).
      const value: unknown = Reflect.get(obj, prop);
      if (typeof value !== "function" || typeof prop !== "string") return value;
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        const started = performance.now();
        const done = (ok: boolean) => metrics.storeOp(store, prop, ok, (performance.now() - started) / 1000);
        let out: unknown;
        try {
          out = method.apply(obj, args);
        } catch (err) {
          done(false);
          throw err;
        }
        if (out instanceof Promise) {
          return out.then(
            (v: unknown) => {
              done(true);
              return v;
            },
            (err: unknown) => {
              done(false);
              throw err;
            },
          );
        }
        done(true);
        return out;
      };
    },
  });
}
