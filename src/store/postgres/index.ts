// The PostgreSQL store: the shared state of several `mcphub up` replicas (docs/team.md). Opening
// connects, applies pending migrations under an advisory lock (migrations.ts), loads the spaces
// read on hot paths into memory and starts following their changes (follow.ts). Each instance
// (one per gateway process) keeps a heartbeat row, so a replica tells a detached call whose owner
// died from one that still runs elsewhere. Named locks are session advisory locks: a replica that
// dies releases them with its connection.
import { hostname } from "node:os";
import type { PoolClient } from "pg";
import { StoreUnavailableError } from "../errors.js";
import type { BlobSpace, DocSpace, LockName, LockOptions, Owner, Store, StoreHealth, StoreProbe } from "../types.js";
import { parseStoreUrl, redactStoreUrl } from "../url.js";
import { PgBlobs } from "./blobs.js";
import { Db, lockKey } from "./db.js";
import { PgDocs, type PgMirror } from "./docs.js";
import { Follower } from "./follow.js";
import { PgLog } from "./log.js";
import { migrate, newerError, schemaState, type SchemaState } from "./migrations.js";

export { MIGRATIONS } from "./migrations.js";
export type { SchemaState } from "./migrations.js";

/** The spaces read synchronously on hot paths (a token per request, a pin per call). */
const MIRRORED: readonly DocSpace[] = ["tokens", "definitions", "oauth", "catalog"];
/** An instance whose heartbeat is older than this is taken to have died (config `replica_timeout`). */
export const DEAD_AFTER_MS = 20_000;
/** The database's clock in ms since the epoch (heartbeats are stamped and aged by it). */
const DB_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
/** Heartbeats come four times per dead-after period, at most every 5 s. */
const heartbeatEvery = (deadAfterMs: number) => Math.max(50, Math.min(5000, Math.floor(deadAfterMs / 4)));

export interface PgOpenOptions {
  url: string;
  password?: string;
  log?: (level: "info" | "warn" | "error", msg: string) => void;
  migrate?: boolean;
  /** Keep mirrors and the LISTEN connection (default true; one-shot CLI commands need neither). */
  follow?: boolean;
  /** How long a replica's heartbeat may be silent before its pending work is given up (default 20 s). */
  deadAfterMs?: number;
}

export class PgStore implements Store {
  readonly kind = "postgres" as const;
  private readonly docSpaces = new Map<DocSpace, PgDocs>();
  private readonly blobSpaces = new Map<BlobSpace, PgBlobs>();
  private readonly mirrors = new Map<DocSpace, PgMirror>();
  private readonly claimed = new Set<string>();
  private follower: Follower | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  /** The schema version seen at open (or by the last probe). */
  private schemaVersion: number | undefined;

  private constructor(
    readonly db: Db,
    readonly where: string,
    readonly deadAfterMs: number,
  ) {}

  static async open(opts: PgOpenOptions): Promise<PgStore> {
    const url = parseStoreUrl(opts.url);
    const where = redactStoreUrl(opts.url);
    const password = opts.password ?? url.password;
    const config = { connectionString: url.connection, ...(password !== undefined ? { password } : {}), application_name: "mcphub" };
    const db = new Db(config, where);
    const store = new PgStore(db, where, opts.deadAfterMs ?? DEAD_AFTER_MS);
    const log = opts.log ?? (() => undefined);
    try {
      const c = await db.connect();
      try {
        if (opts.migrate ?? true) {
          const applied = await migrate(c);
          if (applied.length > 0) log("info", `store: applied migrations ${applied.map((m) => m.version).join(", ")} to ${where}`);
        } else {
          const state = await schemaState(c);
          if (state.newer !== undefined) throw newerError(state.newer);
        }
      } finally {
        c.release();
      }
      if (opts.follow ?? true) {
        for (const space of MIRRORED) store.mirrors.set(space, await store.docs(space).loadMirror());
        store.follower = new Follower(config, store.mirrors, log, where);
        await store.follower.start();
      }
    } catch (err) {
      await store.close();
      if (err instanceof StoreUnavailableError) throw err;
      throw db.wrap(err);
    }
    return store;
  }

  /** The schema's migrations: applied and pending. */
  async schema(): Promise<SchemaState> {
    const c = await this.db.connect();
    try {
      return await schemaState(c);
    } finally {
      c.release();
    }
  }

  docs(space: DocSpace): PgDocs {
    let d = this.docSpaces.get(space);
    if (!d) {
      d = new PgDocs(space, this.db);
      this.docSpaces.set(space, d);
    }
    return d;
  }

  blobs(space: BlobSpace): PgBlobs {
    let b = this.blobSpaces.get(space);
    if (!b) {
      // Stats are cached only while the notification connection hears every blob change.
      b = new PgBlobs(space, this.db, this.follower);
      this.blobSpaces.set(space, b);
    }
    return b;
  }

  log(): PgLog {
    return new PgLog(this.db);
  }

  async withLock<T>(name: LockName, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
    const key = lockKey(`${name.kind}:${name.server}`);
    const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
    const c: PoolClient = await this.db.connect();
    let broken = false;
    try {
      for (;;) {
        const got = await c.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [key]);
        if (got.rows[0]?.ok) break;
        if (Date.now() >= deadline) throw new Error(`another mcphub replica holds the ${name.kind} lock for ${name.server}; try again`);
        await new Promise((r) => setTimeout(r, 50));
      }
      try {
        return await fn();
      } finally {
        await c.query("SELECT pg_advisory_unlock($1)", [key]).catch(() => {
          broken = true;
        });
      }
    } catch (err) {
      throw this.db.wrap(err);
    } finally {
      c.release(broken);
    }
  }

  private firstBeat: Promise<void> | undefined;

  claim(instance: string): Promise<void> {
    if (this.claimed.has(instance)) return this.firstBeat ?? Promise.resolve();
    this.claimed.add(instance);
    this.firstBeat = this.beat();
    if (!this.heartbeat) {
      this.heartbeat = setInterval(() => void this.beat(), heartbeatEvery(this.deadAfterMs));
      this.heartbeat.unref();
    }
    return this.firstBeat;
  }

  // Heartbeats are stamped and aged by the database's clock, never the replicas' own: two
  // machines whose clocks differ by more than replica_timeout would otherwise take a live replica
  // for dead (or a dead one for alive).
  private async beat(): Promise<void> {
    for (const instance of this.claimed) {
      await this.db
        .query(`INSERT INTO mcphub_instances (instance, host, pid, heartbeat) VALUES ($1, $2, $3, ${DB_NOW_MS}) ON CONFLICT (instance) DO UPDATE SET heartbeat = EXCLUDED.heartbeat`, [instance, hostname(), process.pid])
        .catch(() => undefined); // the store is down: the next beat tries again
    }
  }

  async ownerAlive(owner: Owner): Promise<boolean> {
    if (this.claimed.has(owner.instance)) return true;
    const rows = await this.db.query<{ age: string }>(`SELECT (${DB_NOW_MS} - heartbeat)::text AS age FROM mcphub_instances WHERE instance = $1`, [owner.instance]);
    const age = rows[0] ? Number(rows[0].age) : undefined;
    return age !== undefined && age < this.deadAfterMs;
  }

  health(): StoreHealth {
    const problem = this.db.problem;
    return { ok: problem === undefined, ...(problem !== undefined ? { problem } : {}), following: this.follower?.following ?? false };
  }

  /**
   * One round trip: the schema version, timed. Bounded by `timeoutMs` (a host that drops packets
   * would otherwise hold /healthz for the pool's connect timeout); never throws.
   */
  async probe(timeoutMs = 1000): Promise<StoreProbe> {
    const t0 = performance.now();
    const ms = () => Math.round((performance.now() - t0) * 10) / 10;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: "PROBE_TIMEOUT" })), timeoutMs);
    });
    const look = this.db.pool.query<{ v: number | null }>("SELECT max(version) AS v FROM mcphub_schema");
    look.catch(() => undefined); // a late failure after the timeout is nobody's
    try {
      const rows = (await Promise.race([look, timeout])).rows;
      this.schemaVersion = rows[0]?.v ?? undefined;
      return { kind: "postgres", reachable: true, ...(this.schemaVersion !== undefined ? { schema_version: this.schemaVersion } : {}), latency_ms: ms() };
    } catch (err) {
      const problem = this.db.wrap(err).message;
      return { kind: "postgres", reachable: false, ...(this.schemaVersion !== undefined ? { schema_version: this.schemaVersion } : {}), latency_ms: ms(), reason: `PostgreSQL cannot be reached (${reasonOf(err)})`, problem };
    } finally {
      clearTimeout(timer);
    }
  }

  async setModified(kind: "docs" | "blobs", space: DocSpace | BlobSpace, key: string, modified: number): Promise<void> {
    const table = kind === "docs" ? "mcphub_docs" : "mcphub_blobs";
    await this.db.query(`UPDATE ${table} SET modified = $3 WHERE space = $1 AND key = $2`, [space, key, Math.floor(modified)]);
  }

  /** Waits until the mirrors have applied every change heard so far (tests, export). */
  async settled(): Promise<void> {
    await Promise.all([...this.mirrors.values()].map((m) => m.settled()));
  }

  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    if (this.claimed.size > 0) {
      await this.db.query("DELETE FROM mcphub_instances WHERE instance = ANY($1)", [[...this.claimed]]).catch(() => undefined);
    }
    await this.follower?.stop();
    await this.db.close().catch(() => undefined);
  }
}

/** A few words for why PostgreSQL did not answer: no host names, no server text (safe for /healthz). */
function reasonOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const msg = err instanceof Error ? err.message : "";
  switch (code) {
    case "PROBE_TIMEOUT":
      return msg;
    case "ECONNREFUSED":
      return "connection refused";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "host not found";
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
      return "no route or no answer";
    case "ECONNRESET":
    case "EPIPE":
      return "connection lost";
    case "57P01":
    case "57P02":
    case "57P03":
      return "the server is shutting down or starting up";
    case "28P01":
    case "28000":
      return "authentication failed";
    case "3D000":
      return "the database does not exist";
    case "42P01":
      return "the schema is not migrated";
  }
  if (/timeout/i.test(msg)) return "connection timeout";
  if (/terminated|connection error/i.test(msg)) return "connection lost";
  return typeof code === "string" ? `error ${code}` : "unreachable";
}
