// The call limits of one gateway process and the ledger they are counted on. Every call that
// reaches the pipeline's limit stage takes a lease here and gives it back when it ends, so the
// ledger always knows the calls in flight per agent and per server (the metrics read it too);
// the limits themselves are read from the config in force at each decision, so a reload applies
// at the next call (and `reconfigure` lets waiting calls re-check at once).
//
//   limits.calls_per_minute / agents.A.limits.calls_per_minute   starts in any 60 s, per agent
//   limits.concurrent_calls / agents.A.limits.concurrent_calls   this agent's calls in flight
//   servers.S.limits.concurrent_calls (+ queue, queue_timeout)   calls sent to S, all agents
//
// A call refused by a limit answers at once with the limit's config key and when to retry. A
// call over a server's concurrent_calls waits in that server's queue (first come, first served)
// when the server has one with room, for at most queue_timeout; else it is refused too.
import type { Config } from "../../config/schema.js";
import { CONCURRENCY_RETRY_MS } from "../../config/ops.js";
import { formatDuration } from "../../util/units.js";
import { SlidingWindow } from "./window.js";

/** Which limit refused a call (the metrics' `limit` label). */
export type LimitKind = "calls_per_minute" | "concurrent_calls" | "server_concurrent_calls" | "server_queue_timeout";

export interface LimitRefusal {
  kind: LimitKind;
  /** The config key of the limit, e.g. `agents.claude.limits.calls_per_minute`. */
  key: string;
  /** Its value. */
  value: number;
  /** When a retry can succeed (calls_per_minute: exactly; concurrency: a hint). */
  retryAfterMs: number;
  message: string;
  agent: string;
  server: string;
}

/** A call's place in the ledger, given back once when the call ends. */
export interface Lease {
  readonly agent: string;
  readonly server: string;
  release(): void;
}

export type Admission = Lease | LimitRefusal | Promise<Lease | LimitRefusal>;

export function isRefusal(a: Lease | LimitRefusal): a is LimitRefusal {
  return (a as LimitRefusal).kind !== undefined;
}

interface Waiter {
  lease: LeaseImpl;
  resolve(v: Lease | LimitRefusal): void;
  timer: NodeJS.Timeout;
  cleanup(): void;
}

/** What the status page and the metrics show of the limits. */
export interface LimitsSnapshot {
  agents: AgentLimitState[];
  servers: ServerLimitState[];
}

export interface AgentLimitState {
  /** The agent's name, "" for the unscoped daemon's clients. */
  agent: string;
  in_flight: number;
  calls_per_minute?: { limit: number; key: string; last_minute: number };
  concurrent_calls?: { limit: number; key: string };
}

export interface ServerLimitState {
  server: string;
  in_flight: number;
  queued: number;
  concurrent_calls?: { limit: number; key: string; queue: number; queue_timeout_ms: number };
}

export interface LimiterOptions {
  config: () => Config;
  /** The clock (tests drive it); Date.now by default. */
  now?: () => number;
}

class LeaseImpl implements Lease {
  granted = false;
  released = false;
  constructor(
    private readonly owner: Limiter,
    readonly agent: string,
    readonly server: string,
  ) {}
  release(): void {
    if (this.released) return;
    this.released = true;
    this.owner.returned(this);
  }
}

function who(agent: string): string {
  return agent === "" ? "the unscoped clients" : `agent "${agent}"`;
}

export class Limiter {
  private readonly now: () => number;
  private readonly windows = new Map<string, SlidingWindow>();
  private readonly agentCalls = new Map<string, number>();
  private readonly serverCalls = new Map<string, number>();
  /** In flight per agent and server (the metrics' gauge), keyed `agent\0server`. */
  private readonly pairCalls = new Map<string, number>();
  private readonly queues = new Map<string, Waiter[]>();

  constructor(private readonly opts: LimiterOptions) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * A place for one call of `agent` (the view's owner: "" when unscoped) to `server`: a lease,
   * a refusal, or (the server's queue has room) a promise of either. An aborted signal takes a
   * waiting call out of the queue (the promise rejects with the signal's reason).
   */
  acquire(agent: string, server: string, signal?: AbortSignal): Admission {
    const config = this.opts.config();
    const limits = agentLimits(config, agent);
    const now = this.now();
    let window: SlidingWindow | undefined;
    if (limits.calls_per_minute) {
      window = this.windowOf(agent, limits.calls_per_minute.limit);
      const wait = window.count(now) >= window.limit ? window.take(now) : 0;
      if (wait > 0) {
        const { limit, key } = limits.calls_per_minute;
        return this.refusal("calls_per_minute", key, limit, wait, agent, server, `${who(agent)} started ${limit} calls in the last minute, its limit (${key}: ${limit}); retry in ${retryText(wait)}`);
      }
    }
    const mine = this.agentCalls.get(agent) ?? 0;
    if (limits.concurrent_calls && mine >= limits.concurrent_calls.limit) {
      const { limit, key } = limits.concurrent_calls;
      return this.refusal("concurrent_calls", key, limit, CONCURRENCY_RETRY_MS, agent, server, `${who(agent)} has ${mine} calls in flight, its limit (${key}: ${limit}); retry when one of them has finished (in about ${retryText(CONCURRENCY_RETRY_MS)})`);
    }
    const s = config.servers[server]?.limits;
    const busy = this.serverCalls.get(server) ?? 0;
    const queue = this.queues.get(server);
    const full = s !== undefined && (busy >= s.concurrent_calls || (queue !== undefined && queue.length > 0));
    if (s !== undefined && full && (queue?.length ?? 0) >= s.queue) {
      const key = `servers.${server}.limits.concurrent_calls`;
      const why = s.queue === 0 ? `and no queue (servers.${server}.limits.queue: 0)` : `and ${s.queue} calls already waiting, the queue's size (servers.${server}.limits.queue: ${s.queue})`;
      return this.refusal("server_concurrent_calls", key, s.concurrent_calls, CONCURRENCY_RETRY_MS, agent, server, `server "${server}" has ${busy} calls in flight, its limit (${key}: ${s.concurrent_calls}), ${why}; retry in about ${retryText(CONCURRENCY_RETRY_MS)}`);
    }
    // Admitted: the call counts against the minute and the agent's calls in flight from here.
    window?.take(now);
    const lease = new LeaseImpl(this, agent, server);
    this.agentCalls.set(agent, mine + 1);
    if (s === undefined || !full) {
      this.grant(lease);
      return lease;
    }
    return this.enqueue(lease, s.queue_timeout, signal);
  }

  /** Waiting calls look again at the limits in force (after a config reload). */
  reconfigure(): void {
    for (const server of [...this.queues.keys()]) this.pump(server);
  }

  snapshot(): LimitsSnapshot {
    const config = this.opts.config();
    const now = this.now();
    const agentNames = new Set<string>([...this.agentCalls.keys(), ...Object.keys(config.agents)]);
    if (config.limits) agentNames.add("");
    const agents: AgentLimitState[] = [];
    for (const agent of [...agentNames].sort()) {
      const limits = agentLimits(config, agent);
      const state: AgentLimitState = { agent, in_flight: this.agentCalls.get(agent) ?? 0 };
      if (limits.calls_per_minute) {
        const w = this.windows.get(agent);
        state.calls_per_minute = { ...limits.calls_per_minute, last_minute: w ? w.count(now) : 0 };
      }
      if (limits.concurrent_calls) state.concurrent_calls = limits.concurrent_calls;
      agents.push(state);
    }
    const servers: ServerLimitState[] = [];
    for (const server of Object.keys(config.servers).sort()) {
      const s = config.servers[server]?.limits;
      servers.push({
        server,
        in_flight: this.serverCalls.get(server) ?? 0,
        queued: this.queues.get(server)?.length ?? 0,
        ...(s ? { concurrent_calls: { limit: s.concurrent_calls, key: `servers.${server}.limits.concurrent_calls`, queue: s.queue, queue_timeout_ms: s.queue_timeout } } : {}),
      });
    }
    return { agents, servers };
  }

  /** Calls in flight per agent and server, for the metrics' gauge. */
  inFlight(): { agent: string; server: string; calls: number }[] {
    const out: { agent: string; server: string; calls: number }[] = [];
    for (const [key, calls] of this.pairCalls) {
      const cut = key.indexOf("\0");
      out.push({ agent: key.slice(0, cut), server: key.slice(cut + 1), calls });
    }
    return out;
  }

  /** @internal A lease came back (LeaseImpl.release). */
  returned(lease: LeaseImpl): void {
    decrement(this.agentCalls, lease.agent);
    if (!lease.granted) return;
    decrement(this.serverCalls, lease.server);
    decrement(this.pairCalls, `${lease.agent}\0${lease.server}`);
    this.pump(lease.server);
  }

  private grant(lease: LeaseImpl): void {
    lease.granted = true;
    this.serverCalls.set(lease.server, (this.serverCalls.get(lease.server) ?? 0) + 1);
    const pair = `${lease.agent}\0${lease.server}`;
    this.pairCalls.set(pair, (this.pairCalls.get(pair) ?? 0) + 1);
  }

  private enqueue(lease: LeaseImpl, timeoutMs: number, signal?: AbortSignal): Promise<Lease | LimitRefusal> {
    const server = lease.server;
    let queue = this.queues.get(server);
    if (!queue) {
      queue = [];
      this.queues.set(server, queue);
    }
    const q = queue;
    return new Promise<Lease | LimitRefusal>((resolve, reject) => {
      const leave = () => {
        const i = q.indexOf(waiter);
        if (i >= 0) q.splice(i, 1);
        if (q.length === 0 && this.queues.get(server) === q) this.queues.delete(server);
        waiter.cleanup();
        lease.release();
      };
      const onAbort = () => {
        leave();
        reject(signal?.reason ?? new Error("the call was cancelled while it waited for a free slot"));
      };
      const waiter: Waiter = {
        lease,
        resolve,
        timer: setTimeout(() => {
          leave();
          const key = `servers.${server}.limits.queue_timeout`;
          resolve(this.refusal("server_queue_timeout", key, timeoutMs, CONCURRENCY_RETRY_MS, lease.agent, server, `the call waited ${formatDuration(timeoutMs)} for a free slot on server "${server}" (${key}) and was not sent; retry in about ${retryText(CONCURRENCY_RETRY_MS)}`));
        }, timeoutMs),
        cleanup: () => {
          clearTimeout(waiter.timer);
          signal?.removeEventListener("abort", onAbort);
        },
      };
      waiter.timer.unref();
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      q.push(waiter);
    });
  }

  /** Grants waiting calls while the server has room under the limit in force. */
  private pump(server: string): void {
    const q = this.queues.get(server);
    if (!q) return;
    const s = this.opts.config().servers[server]?.limits;
    while (q.length > 0 && (s === undefined || (this.serverCalls.get(server) ?? 0) < s.concurrent_calls)) {
      const w = q.shift() as Waiter;
      w.cleanup();
      this.grant(w.lease);
      w.resolve(w.lease);
    }
    if (q.length === 0) this.queues.delete(server);
  }

  private windowOf(agent: string, limit: number): SlidingWindow {
    let w = this.windows.get(agent);
    if (!w) {
      w = new SlidingWindow(limit);
      this.windows.set(agent, w);
    } else w.resize(limit);
    return w;
  }

  private refusal(kind: LimitKind, key: string, value: number, retryAfterMs: number, agent: string, server: string, message: string): LimitRefusal {
    return { kind, key, value, retryAfterMs, agent, server, message };
  }
}

interface Resolved {
  calls_per_minute?: { limit: number; key: string };
  concurrent_calls?: { limit: number; key: string };
}

/** An agent's limits in force: its own keys, else the top-level defaults (the unscoped: those only). */
export function agentLimits(config: Config, agent: string): Resolved {
  const own = agent !== "" && Object.hasOwn(config.agents, agent) ? config.agents[agent]?.limits : undefined;
  const out: Resolved = {};
  for (const k of ["calls_per_minute", "concurrent_calls"] as const) {
    const mine = own?.[k];
    if (mine !== undefined) out[k] = { limit: mine, key: `agents.${agent}.limits.${k}` };
    else if (config.limits?.[k] !== undefined) out[k] = { limit: config.limits[k], key: `limits.${k}` };
  }
  return out;
}

/** A wait as a person reads it: whole seconds, rounded up (the exact figure is retry_after_ms). */
function retryText(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Math.ceil(ms / 1000)}s`;
}

function decrement(map: Map<string, number>, key: string): void {
  const n = (map.get(key) ?? 0) - 1;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}
