// The store: one interface for the state several mcphub processes share (agent tokens, stored
// results and detached-call records, OAuth sign-ins, pinned definitions and approvals, the audit
// trail, call records, the catalogue cache, the vault's wrapped data key) with two
// implementations: the data directory's files (the default, files/) and PostgreSQL for several
// replicas (`store: postgres://...`, postgres/). It sits below every part that keeps shared state
// and above util alone; it stores bytes as given, so what the vault seals reaches it sealed.
// The spaces and their semantics: types.ts; docs/team.md for the PostgreSQL side.
import { FileStore } from "./files/index.js";
import type { Store } from "./types.js";

export * from "./types.js";
export { BlobChangedError, ShortReadError, StoreUnavailableError } from "./errors.js";
export { DAY_MS, auditFileName, dayFileName, dayStartOfFile, parseSegmentName } from "./segments.js";
export { FileStore, dayFiles, ensureTelemetryDir, telemetryDir, type DayFile } from "./files/index.js";
export { FileDocs } from "./files/docs.js";
export { FileBlobs } from "./files/blobs.js";
export { parseStoreUrl, redactStoreUrl, type StoreUrl } from "./url.js";
export { probeView, type FollowedProbe, type StoreProbeView } from "./probe-view.js";
export { copyStore, KeyMismatchError, TargetNotEmptyError, type CopyCodec, type CopyMode, type CopyOptions, type CopyReport, type CopyRow } from "./copy.js";

/** The files store of a data directory. */
export function fileStore(dataDir: string): FileStore {
  return new FileStore(dataDir);
}

/** A store, or the files store of a data directory given by its path. */
export function storeOf(where: string | Store): Store {
  return typeof where === "string" ? new FileStore(where) : where;
}

export interface OpenStoreOptions {
  /** The data directory: the files store, and what stays per process in team mode. */
  dataDir: string;
  /** `postgres://USER@HOST:PORT/DB`; undefined for the files store. */
  url?: string;
  /** The password when it is not in the URL (already resolved from the vault). */
  password?: string;
  /** Where background trouble is reported (a lost LISTEN connection, a failed heartbeat). */
  log?: (level: "info" | "warn" | "error", msg: string) => void;
  /** Apply pending schema migrations (default true; `mcphub store status` only looks). */
  migrate?: boolean;
  /** Keep in-memory copies current over LISTEN (default true; one-shot commands need none). */
  follow?: boolean;
  /** How long a replica's heartbeat may be silent before its pending work is given up (config `replica_timeout`). */
  deadAfterMs?: number;
}

/** Opens the configured store: the files store, or PostgreSQL (connected, migrated, caches loaded). */
export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  if (opts.url === undefined) return new FileStore(opts.dataDir);
  // Loaded on demand: a gateway on the files store never pays for the PostgreSQL client.
  const { PgStore } = await import("./postgres/index.js");
  return PgStore.open({
    url: opts.url,
    ...(opts.password !== undefined ? { password: opts.password } : {}),
    ...(opts.log ? { log: opts.log } : {}),
    migrate: opts.migrate ?? true,
    follow: opts.follow ?? true,
    ...(opts.deadAfterMs !== undefined ? { deadAfterMs: opts.deadAfterMs } : {}),
  });
}
