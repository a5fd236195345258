// What of a look at the store may be shown to anyone who can reach the daemon: /healthz answers
// before any token check, and the status page shows the same card to agents. Only the kind, the
// state, the schema version, the latency and a short fixed reason; the full error and where the
// store is stay for the operator (the status page adds them behind its login).
import type { StoreProbe } from "./types.js";

/** A probe with whether this replica hears the others' changes (its LISTEN connection is up). */
export type FollowedProbe = StoreProbe & { following?: boolean };

/** The store as /healthz and the status page's store card show it. */
export interface StoreProbeView {
  kind: "files" | "postgres";
  reachable: boolean;
  schema_version?: number;
  latency_ms: number;
  /** PostgreSQL: whether this replica hears other replicas' changes. */
  following?: boolean;
  reason?: string;
}

export function probeView(p: FollowedProbe): StoreProbeView {
  const reason = p.reason ?? (p.following === false ? "not hearing other replicas' changes (the LISTEN connection is down; reconnecting)" : undefined);
  return {
    kind: p.kind,
    reachable: p.reachable,
    ...(p.schema_version !== undefined ? { schema_version: p.schema_version } : {}),
    latency_ms: p.latency_ms,
    ...(p.following !== undefined ? { following: p.following } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
}
