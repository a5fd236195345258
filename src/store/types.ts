// What a store offers: named spaces of small documents, of large blobs and of append-only logs,
// cross-process locks, and the liveness of the processes that own pending work. Every store
// (the data-dir files, PostgreSQL) implements these same interfaces, so the parts above use one
// API and `mcphub store export | import` is a copy from one store to another. A store holds bytes
// as it is given them: what the vault seals stays sealed (the store never sees a key).

/** Small documents, each read and replaced whole. */
export type DocSpace = "tokens" | "definitions" | "catalog" | "detached" | "oauth" | "keyring";
/** Large byte strings written once as a stream and read by range. */
export type BlobSpace = "results";
/** Append-only record logs, one segment per UTC day. */
export type LogKind = "calls" | "audit";

export const DOC_SPACES: readonly DocSpace[] = ["tokens", "definitions", "catalog", "detached", "oauth", "keyring"];
export const BLOB_SPACES: readonly BlobSpace[] = ["results"];
export const LOG_KINDS: readonly LogKind[] = ["calls", "audit"];

/** One stored document. `version` changes whenever its content may have changed. */
export interface DocEntry {
  key: string;
  version: string;
  bytes: Buffer;
  /** When it was last written (ms since the epoch). */
  modified: number;
}

/** What `Docs.update`'s edit decides: the new bytes (null deletes; absent leaves it) and a value to return. */
export interface DocEdit<T> {
  write?: Buffer | null;
  value: T;
}

export interface Docs {
  readonly space: DocSpace;
  /** The document, or undefined when there is none. */
  get(key: string): Promise<DocEntry | undefined>;
  /** Every key with its modification time, sorted by key. */
  list(): Promise<{ key: string; modified: number }[]>;
  /** Creates or replaces a document atomically: readers see the old or the new bytes whole. */
  put(key: string, bytes: Buffer): Promise<void>;
  /** Creates the document only if there is none; true when this call created it. */
  create(key: string, bytes: Buffer): Promise<boolean>;
  /**
   * Read-modify-write under the space's lock: `edit` gets the current bytes (read fresh, never
   * from a cache), and no other process writes the document until its result is stored.
   */
  update<T>(key: string, edit: (current: Buffer | undefined) => DocEdit<T> | Promise<DocEdit<T>>): Promise<T>;
  /** Deletes a document; false when there was none. */
  remove(key: string): Promise<boolean>;
  /** Deletes a document only when it was last written before `cutoff` (ms); true when it went. */
  removeIfOlder(key: string, cutoff: number): Promise<boolean>;
  /** Removes what a crashed writer left behind (temp files). Best effort. */
  sweep(): Promise<void>;
  /** The synchronous, cached view of the space (see DocMirror). */
  mirror(): DocMirror;
}

/** A cached entry of a mirror: its version, and its bytes when asked for (read at most once). */
export interface MirrorEntry {
  version: string;
  bytes(): Buffer;
}

/**
 * A synchronous view of a document space for hot paths (a token check per request, a pinned
 * definition per call): no database round trip and no parse when nothing changed. The files
 * answer from a stat; PostgreSQL from memory, kept current by LISTEN/NOTIFY.
 */
export interface DocMirror {
  /** The entry as of now, undefined when there is none. Throws when it exists but cannot be read. */
  peek(key: string): MirrorEntry | undefined;
  /** The keys as of now. */
  keys(): string[];
  /**
   * Calls `listener(key)` when a document may have changed, in this process or another
   * (`undefined`: any of them). `pollMs` asks the files to poll a single-document space's file.
   */
  watch(listener: (key: string | undefined) => void, opts?: { pollMs?: number }): () => void;
}

/** Bytes read by position from something of a known size. */
export interface ByteSource {
  readonly size: number;
  /** Fills `into` with the bytes at [position, position + into.length); throws past the end. */
  read(into: Buffer, position: number): Promise<void>;
}

/** A blob being written: bytes in order, then commit (it appears whole) or abort (it never does). */
export interface BlobWriter {
  write(buffers: Buffer[]): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

export interface BlobStat {
  key: string;
  /** Changes whenever the blob is replaced. */
  version: string;
  size: number;
  modified: number;
}

/** An opened blob: the version it was opened at, and its bytes. */
export interface BlobReader extends ByteSource {
  readonly version: string;
  close(): Promise<void>;
}

export interface Blobs {
  readonly space: BlobSpace;
  create(key: string): Promise<BlobWriter>;
  stat(key: string): Promise<BlobStat | undefined>;
  /** Opens the blob as it is now; undefined when there is none. */
  open(key: string): Promise<BlobReader | undefined>;
  /**
   * Opens the blob at a version seen before (from stat or an earlier open) without asking the
   * store again; a read fails with BlobChangedError when the blob is not that version any more.
   */
  openAt(stat: BlobStat): Promise<BlobReader | undefined>;
  list(): Promise<BlobStat[]>;
  remove(key: string): Promise<boolean>;
  removeIfOlder(key: string, cutoff: number): Promise<boolean>;
  /** Removes leftovers of writers that died (older than `cutoff`). */
  sweep(cutoff: number): Promise<void>;
  /** Where the blob is a local file (the files store), for a worker thread that reads it itself. */
  localPath?(key: string): string;
}

/** One day's records of a log: `calls-YYYY-MM-DD.ndjson` or `audit-YYYY-MM-DD.ndjson`. */
export interface LogSegment {
  name: string;
  kind: LogKind;
  /** Start of its UTC day (ms). */
  dayStart: number;
  /** Where it is a local file (the files store): readers scan it directly. */
  path?: string;
  /** Bytes (files) or records (PostgreSQL) in it, to split work. */
  size(): Promise<number>;
  /**
   * Whole lines after position `from` (0: the start) in batches, each with the position after
   * it; a last line still being written is left for the next read.
   */
  read(from: number): AsyncIterable<{ text: string; end: number }>;
}

export interface AppendLog {
  /** Appends whole lines (each ending in "\n") to one segment. */
  append(segment: string, lines: string[]): Promise<void>;
  /** Segments of `kind` that may hold records at or after `cutoff`, oldest first. */
  segments(kind: LogKind, cutoff?: number): Promise<LogSegment[]>;
  /** Drops segments whose whole day ended before `cutoff`; returns their names. */
  prune(cutoff: number): Promise<string[]>;
  /** Deletes one segment whole (`mcphub store import --force` replacing a differing day); false when there was none. */
  drop(segment: string): Promise<boolean>;
  /** Forgets an open segment after a failed write, so the next append starts afresh. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/** Who runs a pending call: the process and the instance (one per gateway process). */
export interface Owner {
  pid: number;
  instance: string;
}

export interface LockOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** A file lock older than this is taken to be a crashed holder's (default 30 s). */
  staleMs?: number;
}

/** Named locks several processes share. */
export type LockName = { kind: "oauth-refresh"; server: string };

export interface StoreHealth {
  ok: boolean;
  /** Why not, when not. */
  problem?: string;
  /** Whether shared caches are kept current (PostgreSQL: the LISTEN connection is up). */
  following: boolean;
}

/** What a live look at the store found (`/healthz`, the status page, `mcphub doctor`). */
export interface StoreProbe {
  kind: "files" | "postgres";
  reachable: boolean;
  /** The schema version applied (PostgreSQL). */
  schema_version?: number;
  /** How long the look took (ms). */
  latency_ms: number;
  /** Why not reachable, in a few words without host names or SQL (safe before a token check). */
  reason?: string;
  /** The full error, for the operator (the status page behind its login, doctor). */
  problem?: string;
}

export interface Store {
  /** "files" (the data directory) or "postgres". */
  readonly kind: "files" | "postgres";
  /** Where, for messages: the data directory, or the URL without its password. */
  readonly where: string;
  docs(space: DocSpace): Docs;
  blobs(space: BlobSpace): Blobs;
  /** A handle on the logs; close it when done (on the files it holds a descriptor for appends). */
  log(): AppendLog;
  withLock<T>(name: LockName, fn: () => Promise<T>, opts?: LockOptions): Promise<T>;
  /**
   * Marks `instance` as running in this process (its pending calls are not anybody's to give up).
   * Resolves once the first heartbeat is stored, so a record written after it is never seen by
   * another replica before its owner's heartbeat is.
   */
  claim(instance: string): Promise<void>;
  /** Whether the process that owns pending work still runs. */
  ownerAlive(owner: Owner): Promise<boolean>;
  health(): StoreHealth;
  /** Looks at the store now (a round trip on PostgreSQL), answering within `timeoutMs` (default 1 s). */
  probe(timeoutMs?: number): Promise<StoreProbe>;
  /**
   * Sets when a document or blob was last written (ms), so a copy (`mcphub store import|export`)
   * keeps retention ages: a result imported today must not live a retention period longer.
   */
  setModified(kind: "docs" | "blobs", space: DocSpace | BlobSpace, key: string, modified: number): Promise<void>;
  close(): Promise<void>;
}
