// What `GET /healthz` says about the daemon. The gateway itself is healthy while it serves, so a
// downstream that cannot be reached makes it `degraded` (still HTTP 200: a supervisor must not
// restart the daemon because one server is down), with the failing servers named. Only names and
// states: the endpoint is answered before any token check, so no error text goes out here.
import type { Hub } from "../../gateway/index.js";

export interface HealthReport {
  status: "ok" | "degraded" | "stopping";
  sessions: number;
  servers: { ready: number; connecting: number; failing: number };
  failing?: { name: string; state: string }[];
}

export function healthReport(hub: Hub, sessions: number, stopping: boolean): HealthReport {
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
  const status = stopping ? "stopping" : failing.length ? "degraded" : "ok";
  return { status, sessions, servers: counts, ...(failing.length ? { failing } : {}) };
}
