// The pinned-definition store: one document per server in the store's `definitions` space
// (`<dataDir>/definitions/<server>.json`, 0600 in a 0700 directory, on the files store; rows in
// PostgreSQL), shared by every gateway process and replica and by `mcphub approve`. Per tool (by wire name) it
// holds the approved definition and its hash, and the definition last seen when that differs
// (`pending`: changed since approval, or never approved on a quarantined server). Writers
// read-modify-write under one lock file and replace a file atomically (temp file + rename), so no
// approval or first sight is lost when several processes write at once. Readers re-read a file
// only when its version changed (the store's mirror: a stat on the files, memory kept current by
// LISTEN/NOTIFY on PostgreSQL), and while the mirror's watch is live not even that per call: the
// watch says when a server's records changed, which makes checking the approval state on every
// call cheap.
import { join } from "node:path";
import { z } from "zod";
import { storeOf, type DocMirror, type Docs, type Store } from "../store/index.js";
import { definitionHash, type PinnedDefinition } from "./definitions.js";

export const DEFINITIONS_DIR = "definitions";
const FILE_VERSION = 1;

const definitionSchema = z.object({
  name: z.string(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
});

const versionSchema = z.object({ hash: z.string(), definition: definitionSchema });

const recordSchema = z.object({
  approved: versionSchema.extend({ at: z.iso.datetime(), by: z.enum(["first_use", "operator"]) }).optional(),
  pending: versionSchema.extend({ seen: z.iso.datetime() }).optional(),
});

// `tools` is checked record by record (below): a parsed record of records would be a plain object,
// which silently drops a tool named `__proto__`.
const fileSchema = z.object({
  version: z.literal(FILE_VERSION),
  server: z.string(),
  tools: z.custom<Record<string, unknown>>((v) => v !== null && typeof v === "object" && !Array.isArray(v), "expected a map of tool names"),
});

export type ToolRecord = z.output<typeof recordSchema>;
export interface ServerRecords {
  server: string;
  tools: Record<string, ToolRecord>;
}

/** A file that exists but cannot be trusted: its server's tools are refused until it is fixed. */
export interface UnreadableRecords {
  server: string;
  unreadable: string;
}

export interface ObservedTool {
  wire: string;
  definition: PinnedDefinition;
  hash: string;
}

export interface ObserveResult {
  /** Tools recorded at first sight (trusted on first use). */
  firstSeen: string[];
  /** Tools whose definition differs from the approved one, newly noticed. */
  changed: string[];
  /** Tools of a quarantined server seen for the first time (awaiting approval). */
  awaiting: string[];
}

interface Cached {
  key: string;
  value: ServerRecords | UnreadableRecords;
  /** When the document's version last matched `key`. */
  checked: number;
}

/**
 * While the watch is live, a cached read is trusted without a look until the watch reports a
 * change of that server, and re-checked at least this often anyway (a watch that misses an event,
 * as some file systems do, costs at most this much delay, never a stale approval forever).
 */
export const REVALIDATE_MS = 1000;

export class DefinitionStore {
  /** The directory of the files (files store), or where the rows are (PostgreSQL), for messages. */
  readonly dir: string;
  private readonly docs: Docs;
  private readonly mirrored: DocMirror;
  private readonly files: boolean;
  private readonly where: string;
  private readonly cache = new Map<string, Cached>();
  private unwatchStore: (() => void) | undefined;
  /** Servers whose cached records the live watch vouches for (no event since they were read). */
  private readonly fresh = new Set<string>();

  constructor(where: string | Store) {
    const store = storeOf(where);
    this.docs = store.docs("definitions");
    this.mirrored = this.docs.mirror();
    this.files = store.kind === "files";
    this.where = store.where;
    this.dir = this.files ? join(store.where, DEFINITIONS_DIR) : `${DEFINITIONS_DIR} in ${store.where}`;
  }

  pathOf(server: string): string {
    return this.files ? join(this.dir, `${server}.json`) : `the definitions of ${server} in ${this.where}`;
  }

  /** Servers with recorded definitions, sorted. */
  servers(): string[] {
    return this.mirrored.keys();
  }

  /**
   * The server's records, re-read only when the document's version changed (one stat per call
   * on the files, none on PostgreSQL). A missing document is an empty record set; a damaged one
   * is reported, never silently treated as empty (which would trust every tool again).
   */
  read(server: string, now = Date.now()): ServerRecords | UnreadableRecords {
    const hit = this.cache.get(server);
    if (hit && this.fresh.has(server) && now - hit.checked < REVALIDATE_MS) return hit.value;
    // Marked before the look: an event arriving after this point invalidates what is read now.
    if (this.unwatchStore) this.fresh.add(server);
    let entry;
    try {
      entry = this.mirrored.peek(server);
    } catch (err) {
      this.fresh.delete(server);
      return { server, unreadable: (err as Error).message };
    }
    if (!entry) {
      const value = { server, tools: {} };
      this.cache.set(server, { key: "missing", value, checked: now });
      return value;
    }
    if (hit?.key === entry.version) {
      hit.checked = now;
      return hit.value;
    }
    const value = parseFile(server, () => entry.bytes().toString("utf8"));
    this.cache.set(server, { key: entry.version, value, checked: now });
    return value;
  }

  /**
   * Records what a server lists now: a tool never seen is approved at first sight, or, on a
   * quarantined server, kept pending; a tool whose definition differs from the approved one gets
   * (or updates) its pending version; a tool back at its approved definition loses its pending one.
   * Writes only when something changed.
   */
  async observe(server: string, tools: readonly ObservedTool[], opts: { quarantine: boolean; now?: number }): Promise<ObserveResult> {
    // Every start observes every server's listing, and nearly always nothing changed: decided
    // from the (cached) document without the lock; only a change takes it and decides again.
    const known = this.read(server);
    if (!("unreadable" in known) && !observeInto(bare(known.tools), tools, opts).dirty) return { firstSeen: [], changed: [], awaiting: [] };
    let result: ObserveResult = { firstSeen: [], changed: [], awaiting: [] };
    await this.update(server, (records) => {
      const planned = observeInto(records, tools, opts);
      result = planned.result;
      return planned.dirty;
    });
    return result;
  }

  /**
   * Approves the pending version of these tools (all pending tools of the server when `wires` is
   * undefined). Returns the tools approved, with the version each had before (for the report).
   */
  async approve(server: string, wires?: readonly string[], now = Date.now()): Promise<{ wire: string; before?: PinnedDefinition; after: PinnedDefinition }[]> {
    const approved: { wire: string; before?: PinnedDefinition; after: PinnedDefinition }[] = [];
    await this.update(server, (records) => {
      const at = new Date(now).toISOString();
      for (const wire of wires ?? Object.keys(records).sort()) {
        const rec = Object.hasOwn(records, wire) ? records[wire] : undefined;
        if (!rec?.pending) continue;
        approved.push({ wire, ...(rec.approved ? { before: rec.approved.definition } : {}), after: rec.pending.definition });
        records[wire] = { approved: { hash: rec.pending.hash, definition: rec.pending.definition, at, by: "operator" } };
      }
      return approved.length > 0;
    });
    return approved;
  }

  /**
   * Calls `onChange(server)` when a server's records change (an approval by `mcphub approve`, a
   * record by another gateway or replica): a directory watch on the files, NOTIFY on PostgreSQL.
   * The watch is a hint on the files; `read()` checks the stat on every call anyway.
   */
  watch(onChange: (server: string) => void): () => void {
    if (this.unwatchStore) throw new Error("the definition store is already watched");
    this.unwatchStore = this.mirrored.watch((server) => {
      if (server === undefined) {
        this.fresh.clear(); // a change without a name could be any server's
        return;
      }
      this.fresh.delete(server);
      onChange(server);
    });
    return () => this.unwatch();
  }

  /** Whether reads currently rely on the watch (for tests). */
  get watched(): boolean {
    return this.unwatchStore !== undefined;
  }

  private unwatch(): void {
    this.unwatchStore?.();
    this.unwatchStore = undefined;
    this.fresh.clear();
  }

  /** Read-modify-write of one server's records under the store's lock. */
  private async update(server: string, edit: (records: Record<string, ToolRecord>) => boolean): Promise<void> {
    await this.docs.update(server, (bytes) => {
      this.cache.delete(server);
      const current: ServerRecords | UnreadableRecords = bytes === undefined ? { server, tools: {} } : parseFile(server, () => bytes.toString("utf8"));
      if ("unreadable" in current) {
        throw new Error(`${this.pathOf(server)} is unreadable (${current.unreadable}); fix it, or delete it to record the server's tools afresh`);
      }
      const records = bare(current.tools);
      if (!edit(records)) return { value: undefined };
      const body = { version: FILE_VERSION, server, tools: sortKeys(records) };
      return { write: Buffer.from(`${JSON.stringify(body, null, 1)}\n`, "utf8"), value: undefined };
    });
    this.cache.delete(server);
  }
}

/** Applies a listing to a server's records (in place): what observe() writes, and whether it must. */
function observeInto(records: Record<string, ToolRecord>, tools: readonly ObservedTool[], opts: { quarantine: boolean; now?: number }): { dirty: boolean; result: ObserveResult } {
  const result: ObserveResult = { firstSeen: [], changed: [], awaiting: [] };
  const at = new Date(opts.now ?? Date.now()).toISOString();
  let dirty = false;
  for (const t of tools) {
    const rec = Object.hasOwn(records, t.wire) ? records[t.wire] : undefined;
    const version = { hash: t.hash, definition: t.definition };
    if (!rec?.approved) {
      if (!opts.quarantine && rec?.pending === undefined) {
        records[t.wire] = { approved: { ...version, at, by: "first_use" } };
        result.firstSeen.push(t.wire);
        dirty = true;
      } else if (rec?.pending?.hash !== t.hash) {
        records[t.wire] = { pending: { ...version, seen: at } };
        result.awaiting.push(t.wire);
        dirty = true;
      }
    } else if (rec.approved.hash === t.hash) {
      if (rec.pending !== undefined) {
        records[t.wire] = { approved: rec.approved };
        dirty = true;
      }
    } else if (rec.pending?.hash !== t.hash) {
      records[t.wire] = { approved: rec.approved, pending: { ...version, seen: at } };
      result.changed.push(t.wire);
      dirty = true;
    }
  }
  return { dirty, result };
}

function parseFile(server: string, readText: () => string): ServerRecords | UnreadableRecords {
  let raw: unknown;
  try {
    raw = JSON.parse(readText());
  } catch (err) {
    return { server, unreadable: err instanceof SyntaxError ? "not JSON" : (err as Error).message };
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { server, unreadable: issue ? `${issue.path.join(".") || "file"}: ${issue.message}` : "unexpected content" };
  }
  if (parsed.data.server !== server) return { server, unreadable: `it holds the definitions of server "${parsed.data.server}"` };
  const tools = Object.create(null) as Record<string, ToolRecord>;
  for (const [wire, value] of Object.entries(parsed.data.tools)) {
    const rec = recordSchema.safeParse(value);
    if (!rec.success) {
      const issue = rec.error.issues[0];
      return { server, unreadable: `tools.${wire}${issue?.path.length ? `.${issue.path.join(".")}` : ""}: ${issue?.message ?? "unexpected content"}` };
    }
    tools[wire] = rec.data;
  }
  return { server, tools };
}

/** A copy without a prototype, so a tool named `__proto__` or `constructor` is an ordinary key. */
function bare<T>(rec: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, rec);
}

function sortKeys<T>(rec: Record<string, T>): Record<string, T> {
  const out = Object.create(null) as Record<string, T>;
  for (const k of Object.keys(rec).sort()) out[k] = rec[k] as T;
  return out;
}

/** The version a record would be approved at for `definition` (the hash the store keeps). */
export function observedTool(wire: string, definition: PinnedDefinition): ObservedTool {
  return { wire, definition, hash: definitionHash(definition) };
}
