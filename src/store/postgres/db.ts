// The connection pool and its errors. Every query goes through `query` or `transaction`, which
// turn a lost or refused connection (PostgreSQL restarting, a network fault) into a
// StoreUnavailableError that says where, and never carries the password; the pool opens a new
// connection on the next call, so the gateway recovers without a restart.
import pg from "pg";
import type { PoolClient, QueryResultRow } from "pg";
import { StoreUnavailableError } from "../errors.js";

/** SQLSTATE classes and node errors that mean "the server is not there now". */
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT", "EPIPE", "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004"]);

export function isUnavailable(err: unknown): boolean {
  if (err instanceof StoreUnavailableError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return true;
  const msg = err instanceof Error ? err.message : "";
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(msg);
}

export class Db {
  readonly pool: pg.Pool;
  private lastProblem: string | undefined;

  constructor(
    config: pg.PoolConfig,
    readonly where: string,
  ) {
    this.pool = new pg.Pool({ ...config, max: config.max ?? 8, connectionTimeoutMillis: config.connectionTimeoutMillis ?? 5000, idleTimeoutMillis: 30_000 });
    // An idle client losing its connection (a restart) must not crash the process.
    this.pool.on("error", (err) => {
      this.lastProblem = err.message;
    });
  }

  get problem(): string | undefined {
    return this.lastProblem;
  }

  wrap(err: unknown): Error {
    if (isUnavailable(err)) {
      const why = err instanceof Error ? err.message : String(err);
      this.lastProblem = why;
      return new StoreUnavailableError(`the shared store ${this.where} cannot be reached (${why}); the gateway retries on the next call`);
    }
    return err instanceof Error ? err : new Error(String(err));
  }

  async query<R extends QueryResultRow = QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    try {
      const res = await this.pool.query<R>(sql, params);
      this.lastProblem = undefined;
      return res.rows;
    } catch (err) {
      throw this.wrap(err);
    }
  }

  async connect(): Promise<PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw this.wrap(err);
    }
  }

  /** Runs `fn` in a transaction on one connection; rolls back when it throws. */
  async transaction<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await this.connect();
    let broken = false;
    try {
      await c.query("BEGIN");
      const out = await fn(c);
      await c.query("COMMIT");
      return out;
    } catch (err) {
      broken = isUnavailable(err);
      if (!broken) await c.query("ROLLBACK").catch(() => undefined);
      throw this.wrap(err);
    } finally {
      c.release(broken);
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** A stable 64-bit advisory lock key for a name (as text, for a bigint parameter). */
export function lockKey(name: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(name, "utf8")) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return BigInt.asIntN(64, h).toString();
}
