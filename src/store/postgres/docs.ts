// Document spaces in PostgreSQL: one row per document (mcphub_docs), a global sequence as the
// version, read-modify-write under a transaction advisory lock on (space, key). Every write
// notifies `mcphub_docs` with "space/key" in the same transaction, so the mirrors of every replica
// re-read that row once the write commits (see follow.ts).
import type { DocEdit, DocEntry, DocMirror, Docs, DocSpace, MirrorEntry } from "../types.js";
import { lockKey, type Db } from "./db.js";

export const DOC_CHANNEL = "mcphub_docs";

interface Row {
  key: string;
  version: string;
  modified: string;
  bytes: Buffer;
}

export class PgDocs implements Docs {
  private mirrored: PgMirror | undefined;

  constructor(
    readonly space: DocSpace,
    private readonly db: Db,
  ) {}

  async get(key: string): Promise<DocEntry | undefined> {
    const rows = await this.db.query<Row>("SELECT key, version::text, modified::text, bytes FROM mcphub_docs WHERE space = $1 AND key = $2", [this.space, key]);
    const r = rows[0];
    return r ? { key: r.key, version: r.version, bytes: r.bytes, modified: Number(r.modified) } : undefined;
  }

  async list(): Promise<{ key: string; modified: number }[]> {
    const rows = await this.db.query<{ key: string; modified: string }>("SELECT key, modified::text FROM mcphub_docs WHERE space = $1 ORDER BY key COLLATE \"C\"", [this.space]);
    return rows.map((r) => ({ key: r.key, modified: Number(r.modified) }));
  }

  /** Every document, for a mirror's load. */
  async all(): Promise<Row[]> {
    return this.db.query<Row>("SELECT key, version::text, modified::text, bytes FROM mcphub_docs WHERE space = $1", [this.space]);
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const version = await this.db.transaction(async (c) => {
      const res = await c.query<{ version: string }>(UPSERT, [this.space, key, Date.now(), bytes]);
      await c.query("SELECT pg_notify($1, $2)", [DOC_CHANNEL, `${this.space}/${key}`]);
      return res.rows[0]?.version;
    });
    this.mirrored?.setHere(key, version, bytes);
  }

  async create(key: string, bytes: Buffer): Promise<boolean> {
    const created = await this.db.transaction(async (c) => {
      const res = await c.query<{ version: string }>(
        "INSERT INTO mcphub_docs (space, key, modified, bytes) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING version::text",
        [this.space, key, Date.now(), bytes],
      );
      if (res.rowCount === 1) await c.query("SELECT pg_notify($1, $2)", [DOC_CHANNEL, `${this.space}/${key}`]);
      return res.rows[0]?.version;
    });
    if (created !== undefined) this.mirrored?.setHere(key, created, bytes);
    return created !== undefined;
  }

  async update<T>(key: string, edit: (current: Buffer | undefined) => DocEdit<T> | Promise<DocEdit<T>>): Promise<T> {
    let wrote: { version: string | undefined; bytes: Buffer | null } | undefined;
    const value = await this.db.transaction(async (c) => {
      // Serializes writers of this document across replicas, even while it does not exist yet.
      await c.query("SELECT pg_advisory_xact_lock($1)", [lockKey(`doc:${this.space}/${key}`)]);
      const cur = await c.query<{ bytes: Buffer }>("SELECT bytes FROM mcphub_docs WHERE space = $1 AND key = $2", [this.space, key]);
      const decided = await edit(cur.rows[0]?.bytes);
      if (decided.write === null) {
        await c.query("DELETE FROM mcphub_docs WHERE space = $1 AND key = $2", [this.space, key]);
        wrote = { version: undefined, bytes: null };
      } else if (decided.write !== undefined) {
        const res = await c.query<{ version: string }>(UPSERT, [this.space, key, Date.now(), decided.write]);
        wrote = { version: res.rows[0]?.version, bytes: decided.write };
      }
      if (wrote) await c.query("SELECT pg_notify($1, $2)", [DOC_CHANNEL, `${this.space}/${key}`]);
      return decided.value;
    });
    if (wrote) this.mirrored?.setHere(key, wrote.version, wrote.bytes);
    return value;
  }

  async remove(key: string): Promise<boolean> {
    return this.removeWhere(key, undefined);
  }

  async removeIfOlder(key: string, cutoff: number): Promise<boolean> {
    return this.removeWhere(key, cutoff);
  }

  private async removeWhere(key: string, cutoff: number | undefined): Promise<boolean> {
    const gone = await this.db.transaction(async (c) => {
      const res =
        cutoff === undefined
          ? await c.query("DELETE FROM mcphub_docs WHERE space = $1 AND key = $2", [this.space, key])
          : await c.query("DELETE FROM mcphub_docs WHERE space = $1 AND key = $2 AND modified <= $3", [this.space, key, cutoff]);
      if (res.rowCount === 1) await c.query("SELECT pg_notify($1, $2)", [DOC_CHANNEL, `${this.space}/${key}`]);
      return res.rowCount === 1;
    });
    if (gone) this.mirrored?.setHere(key, undefined, null);
    return gone;
  }

  async sweep(): Promise<void> {
    // Nothing half-written can be left: a write is one transaction.
  }

  mirror(): DocMirror {
    if (!this.mirrored) throw new Error(`the ${this.space} space is not kept in memory; read it with get()`);
    return this.mirrored;
  }

  /** Loads the space into memory for its mirror (PgStore does this at open for mirrored spaces). */
  async loadMirror(): Promise<PgMirror> {
    this.mirrored ??= new PgMirror(this);
    await this.mirrored.reload();
    return this.mirrored;
  }
}

const UPSERT =
  "INSERT INTO mcphub_docs (space, key, modified, bytes) VALUES ($1, $2, $3, $4) " +
  "ON CONFLICT (space, key) DO UPDATE SET bytes = EXCLUDED.bytes, modified = EXCLUDED.modified, version = nextval('mcphub_doc_version') " +
  "RETURNING version::text";

/**
 * A space held in memory: peek() answers without a round trip. A write in this process updates
 * it when it commits; a write elsewhere arrives as a notification, and the row is re-read. While
 * the notification connection is down the copy may be stale; on reconnect every space is reloaded.
 */
export class PgMirror implements DocMirror {
  private entries = new Map<string, { version: string; bytes: Buffer }>();
  private readonly listeners = new Set<(key: string | undefined) => void>();
  /** A per-key chain of refreshes, so a slow older read never overwrites a newer one. */
  private readonly refreshing = new Map<string, Promise<void>>();

  constructor(private readonly docs: PgDocs) {}

  peek(key: string): MirrorEntry | undefined {
    const e = this.entries.get(key);
    return e ? { version: e.version, bytes: () => e.bytes } : undefined;
  }

  keys(): string[] {
    return [...this.entries.keys()].sort();
  }

  watch(listener: (key: string | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async reload(): Promise<void> {
    const next = new Map<string, { version: string; bytes: Buffer }>();
    for (const r of await this.docs.all()) next.set(r.key, { version: r.version, bytes: r.bytes });
    this.entries = next;
    this.emit(undefined);
  }

  /** A write here committed: peek answers it at once (its own notification re-reads it anyway). */
  setHere(key: string, version: string | undefined, bytes: Buffer | null): void {
    if (bytes === null) this.entries.delete(key);
    else if (version !== undefined) this.entries.set(key, { version, bytes });
    else return void this.refresh(key);
    this.emit(key);
  }

  refresh(key: string): Promise<void> {
    const prev = this.refreshing.get(key) ?? Promise.resolve();
    const next = prev.then(async () => {
      try {
        const e = await this.docs.get(key);
        if (e) this.entries.set(key, { version: e.version, bytes: e.bytes });
        else this.entries.delete(key);
        this.emit(key);
      } catch {
        // The store is unreachable: the reconnect reloads everything.
      }
    });
    this.refreshing.set(key, next);
    void next.finally(() => {
      if (this.refreshing.get(key) === next) this.refreshing.delete(key);
    });
    return next;
  }

  /** Waits until every refresh started so far has settled. */
  async settled(): Promise<void> {
    await Promise.all([...this.refreshing.values()]);
  }

  private emit(key: string | undefined): void {
    for (const l of this.listeners) {
      try {
        l(key);
      } catch {
        // a listener's trouble is its own
      }
    }
  }
}
