// What `GET /healthz` says about the daemon. The gateway itself is healthy while it serves, so a
// downstream that cannot be reached makes it `degraded` (still HTTP 200: a supervisor must not
// restart the daemon because one server is down), with the failing servers named. The store is
// looked at too (kind, reachable, schema version, latency): a PostgreSQL that does not answer
// makes the daemon `degraded` with the reason (calls that store nothing still work, so the
// balancer keeps the replica). Only names, states and short fixed reasons: the endpoint is
// answered before any token check, so no error text, host name or URL goes out here.
import type { Hub } from "../../gateway/index.js";
import type { FollowedProbe, Store, StoreProbeView } from "../../store/index.js";

export interface HealthReport {
  status: "ok" | "degraded" | "stopping";
  sessions: number;
  servers: { ready: number; connecting: number; failing: number };
  failing?: { name: string; state: string }[];
  store?: StoreProbeView;
}

/** How long one look at the store answers /healthz (a balancer checks every half second). */
const STORE_LOOK_MS = 1000;

/** Looks at the store at most once a second, however often /healthz is asked. */
export class StoreWatch {
  private last: { at: number; value: FollowedProbe } | undefined;
  private pending: Promise<FollowedProbe> | undefined;

  constructor(private readonly store: Store) {}

  async look(now = Date.now()): Promise<FollowedProbe> {
    if (this.last && now - this.last.at < STORE_LOOK_MS) return this.last.value;
    this.pending ??= this.store
      .probe(STORE_LOOK_MS)
      .then((p) => {
        const value = this.store.kind === "postgres" ? { ...p, following: this.store.health().following } : p;
        this.last = { at: Date.now(), value };
        return value;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }
}

export function healthReport(hub: Hub, sessions: number, stopping: boolean, store?: StoreProbeView): HealthReport {
  const counts = { ready: 0, connecting: 0, failing: 0 };
  const failing: { name: string; state: string }[] = [];
  for (const snap of hub.supervisor.snapshots()) {
    if (snap.state === "ready") counts.ready++;
    else if (snap.state === "connecting") counts.connecting++;
    else if (snap.state === "failed" || snap.state === "locked") {
      counts.failing++;
      failing.push({ name: snap.name, state: snap.state });
    }
  }
  const storeTrouble = store !== undefined && store.reason !== undefined;
  const status = stopping ? "stopping" : failing.length || storeTrouble ? "degraded" : "ok";
  return { status, sessions, servers: counts, ...(failing.length ? { failing } : {}), ...(store ? { store } : {}) };
}
