// The pinned-definition store: `<dataDir>/definitions/<server>.json` (0600 in a 0700 directory),
// shared by every gateway process of the user and by `mcphub approve`. Per tool (by wire name) it
// holds the approved definition and its hash, and the definition last seen when that differs
// (`pending`: changed since approval, or never approved on a quarantined server). Writers
// read-modify-write under one lock file and replace a file atomically (temp file + rename), so no
// approval or first sight is lost when several processes write at once. Readers re-read a file
// only when its stat changed, and while a watch on the directory is live not even stat it per
// call: the watch says when a file changed, which makes checking the approval state on every call
// cheap.
import { chmodSync, mkdirSync, readFileSync, statSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { atomicWriteFile, ensurePrivateDir, withLockFile } from "../vault/fsutil.js";
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
  /** When the file's stat last matched `key`. */
  checked: number;
}

/**
 * While the directory watch is live, a cached read is trusted without a stat until the watch
 * reports a change of that file, and re-checked at least this often anyway (a watch that misses an
 * event, as some file systems do, costs at most this much delay, never a stale approval forever).
 */
export const REVALIDATE_MS = 1000;

export class DefinitionStore {
  readonly dir: string;
  private readonly cache = new Map<string, Cached>();
  private watcher: FSWatcher | undefined;
  /** Servers whose cached records the live watch vouches for (no event since they were read). */
  private readonly fresh = new Set<string>();

  constructor(dataDir: string) {
    this.dir = join(dataDir, DEFINITIONS_DIR);
  }

  pathOf(server: string): string {
    return join(this.dir, `${server}.json`);
  }

  /**
   * The server's records. This runs on every call, so it is incremental: while the directory
   * watch is live, the cached records are returned as they are until the watch reports a change
   * of the file (an approval by `mcphub approve` in another process arrives that way, before the
   * next call), re-checked at least every REVALIDATE_MS; without a watch, one stat per call
   * decides. The file is re-read only when its stat changed. A missing file is an empty record
   * set; a damaged one is reported, never silently treated as empty (which would trust every tool
   * again).
   */
  read(server: string, now = Date.now()): ServerRecords | UnreadableRecords {
    const hit = this.cache.get(server);
    if (hit && this.fresh.has(server) && now - hit.checked < REVALIDATE_MS) return hit.value;
    const path = this.pathOf(server);
    // Marked before the stat: an event arriving after this point invalidates what is read now.
    if (this.watcher) this.fresh.add(server);
    let key: string;
    try {
      const st = statSync(path, { bigint: true });
      key = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        const value = { server, tools: {} };
        this.cache.set(server, { key: "missing", value, checked: now });
        return value;
      }
      this.fresh.delete(server);
      return { server, unreadable: (err as Error).message };
    }
    if (hit?.key === key) {
      hit.checked = now;
      return hit.value;
    }
    const value = parseFile(server, () => readFileSync(path, "utf8"));
    this.cache.set(server, { key, value, checked: now });
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
    // from the (stat-cached) file without the lock; only a change takes it and decides again.
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
   * Calls `onChange(server)` when a server's file changes (an approval by `mcphub approve`, a
   * record by another gateway). While it is live, `read()` trusts its cache until such an event;
   * when the watch fails or is closed, `read()` goes back to one stat per call.
   */
  watch(onChange: (server: string) => void): () => void {
    if (this.watcher) throw new Error("the definition store is already watched");
    try {
      ensurePrivateDirSync(this.dir);
      this.watcher = watch(this.dir, { persistent: false }, (_event, file) => {
        const name = typeof file === "string" && file.endsWith(".json") && !file.startsWith(".") ? file.slice(0, -5) : undefined;
        if (typeof file !== "string") {
          this.fresh.clear(); // an event without a name could be any file
          return;
        }
        if (name === undefined) return;
        this.fresh.delete(name);
        onChange(name);
      });
      this.watcher.on("error", () => this.unwatch());
    } catch {
      // No watcher (odd file systems): the per-call stat check still sees every approval.
      this.watcher = undefined;
    }
    return () => this.unwatch();
  }

  /** Whether reads currently rely on the watch (for tests). */
  get watched(): boolean {
    return this.watcher !== undefined;
  }

  private unwatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.fresh.clear();
  }

  /** Read-modify-write of one server's file under the store's lock. */
  private async update(server: string, edit: (records: Record<string, ToolRecord>) => boolean): Promise<void> {
    await ensurePrivateDir(this.dir);
    await withLockFile(join(this.dir, ".lock"), async () => {
      this.cache.delete(server);
      const current = this.read(server);
      if ("unreadable" in current) {
        throw new Error(`${this.pathOf(server)} is unreadable (${current.unreadable}); fix it, or delete it to record the server's tools afresh`);
      }
      const records = bare(current.tools);
      if (!edit(records)) return;
      const body = { version: FILE_VERSION, server, tools: sortKeys(records) };
      await atomicWriteFile(this.pathOf(server), `${JSON.stringify(body, null, 1)}\n`);
      this.cache.delete(server);
    });
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

function ensurePrivateDirSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // the directory may predate this process
}

/** The version a record would be approved at for `definition` (the hash the store keeps). */
export function observedTool(wire: string, definition: PinnedDefinition): ObservedTool {
  return { wire, definition, hash: definitionHash(definition) };
}
