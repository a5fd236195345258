// The schema of the shared store as numbered migrations. A replica applies the pending ones at
// start, under a session advisory lock, so replicas starting together apply each exactly once;
// `mcphub store status` lists them without applying. A migration is never edited once released:
// a change is a new number. A store at a number this build does not know is refused, not guessed.
import type { PoolClient } from "pg";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "documents, blobs, logs, instances",
    sql: `
CREATE SEQUENCE mcphub_doc_version;
CREATE TABLE mcphub_docs (
  space    text   NOT NULL,
  key      text   NOT NULL,
  version  bigint NOT NULL DEFAULT nextval('mcphub_doc_version'),
  modified bigint NOT NULL,
  bytes    bytea  NOT NULL,
  PRIMARY KEY (space, key)
);
CREATE TABLE mcphub_blobs (
  space    text   NOT NULL,
  key      text   NOT NULL,
  version  text   NOT NULL,
  size     bigint NOT NULL,
  modified bigint NOT NULL,
  PRIMARY KEY (space, key)
);
-- Chunks are written under a fresh version before the blob row points at it: a reader sees the
-- old blob or the new one whole, and a writer that dies leaves chunks no row names (swept).
CREATE TABLE mcphub_blob_chunks (
  space    text   NOT NULL,
  key      text   NOT NULL,
  version  text   NOT NULL,
  off      bigint NOT NULL,
  len      integer NOT NULL,
  written  bigint NOT NULL,
  bytes    bytea  NOT NULL,
  PRIMARY KEY (space, key, version, off)
);
CREATE TABLE mcphub_log (
  segment  text   NOT NULL,
  id       bigserial,
  lines    text   NOT NULL,
  PRIMARY KEY (segment, id)
);
CREATE TABLE mcphub_instances (
  instance  text   PRIMARY KEY,
  host      text   NOT NULL,
  pid       integer NOT NULL,
  heartbeat bigint NOT NULL
);
`,
  },
  {
    version: 2,
    name: "blob chunks stored uncompressed",
    // Chunks are sealed (random to a compressor): compressing them only costs CPU on every write,
    // and a compressed value must be decompressed from its start to read a slice of it. Stored
    // EXTERNAL (out of line, uncompressed), substring() reads only the TOAST pages a range needs.
    sql: "ALTER TABLE mcphub_blob_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL;",
  },
];

/** A session advisory lock key for migrations (any fixed 64-bit number; "mcphub" in ASCII). */
const MIGRATION_LOCK = 0x6d63706875622d31n;

export interface SchemaState {
  applied: { version: number; name: string; applied: string }[];
  pending: Migration[];
  /** The highest version in the database, when it is newer than this build knows. */
  newer?: number;
}

async function ensureTable(c: PoolClient): Promise<void> {
  await c.query("CREATE TABLE IF NOT EXISTS mcphub_schema (version integer PRIMARY KEY, name text NOT NULL, applied timestamptz NOT NULL DEFAULT now())");
}

export async function schemaState(c: PoolClient): Promise<SchemaState> {
  const exists = await c.query<{ t: string | null }>("SELECT to_regclass('mcphub_schema')::text AS t");
  const rows =
    exists.rows[0]?.t === null || exists.rows[0] === undefined
      ? []
      : (await c.query<{ version: number; name: string; applied: Date }>("SELECT version, name, applied FROM mcphub_schema ORDER BY version")).rows;
  const done = new Set(rows.map((r) => r.version));
  const known = MIGRATIONS.at(-1)?.version ?? 0;
  const top = rows.at(-1)?.version ?? 0;
  return {
    applied: rows.map((r) => ({ version: r.version, name: r.name, applied: r.applied.toISOString() })),
    pending: MIGRATIONS.filter((m) => !done.has(m.version)),
    ...(top > known ? { newer: top } : {}),
  };
}

/** Applies every pending migration, each in its own transaction, holding the migration lock. */
export async function migrate(c: PoolClient): Promise<Migration[]> {
  await c.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK.toString()]);
  try {
    await ensureTable(c);
    const state = await schemaState(c);
    if (state.newer !== undefined) throw newerError(state.newer);
    for (const m of state.pending) {
      await c.query("BEGIN");
      try {
        await c.query(m.sql);
        await c.query("INSERT INTO mcphub_schema (version, name) VALUES ($1, $2)", [m.version, m.name]);
        await c.query("COMMIT");
      } catch (err) {
        await c.query("ROLLBACK").catch(() => undefined);
        throw new Error(`store migration ${m.version} (${m.name}) failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return state.pending;
  } finally {
    await c.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK.toString()]).catch(() => undefined);
  }
}

export function newerError(version: number): Error {
  const known = MIGRATIONS.at(-1)?.version ?? 0;
  return new Error(`the store's schema is at version ${version}, newer than this mcphub knows (${known}); upgrade mcphub on this machine`);
}
