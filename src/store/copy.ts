// Copying every kind of shared state from one store to another: what `mcphub store import`
// (a data directory into PostgreSQL) and `mcphub store export` (back) run. The bytes go across
// as they are (sealed results, detached records and sign-ins stay sealed; tokens stay hashes),
// with their modification times, so retention ages carry over. A copy first compares the whole
// target with the source and decides everything before it writes: by default it refuses a target
// that holds anything the source does not (re-running a finished or interrupted copy is fine:
// identical entries are skipped, a day of records cut short is completed); `merge` adds what is
// missing and keeps what differs; `replace` makes the target an exact copy.
import type { BlobSpace, DocSpace, LogKind, Store } from "./types.js";
import { BLOB_SPACES, DOC_SPACES, LOG_KINDS } from "./types.js";

export type CopyMode = "refuse" | "merge" | "replace";

/** What the vault adds to a byte copy: the keyring is the one document whose bytes may change. */
export interface CopyCodec {
  /** The bytes to write for a source document (the keyring re-wrapped for a shared store). */
  prepare?(space: DocSpace, key: string, bytes: Buffer): Promise<Buffer>;
  /** Whether a target document already holds what the source's does when the bytes differ. */
  same?(space: DocSpace, key: string, source: Buffer, target: Buffer): Promise<boolean>;
}

export interface CopyOptions {
  mode?: CopyMode;
  /** Compare and report, write nothing. */
  dryRun?: boolean;
  codec?: CopyCodec;
}

export interface CopyRow {
  kind: "docs" | "blobs" | "log";
  space: DocSpace | BlobSpace | LogKind;
  /** Documents or blobs in the source (records, for a log). */
  source: number;
  /** Written to the target: new, replaced (replace) or appended records. */
  copied: number;
  /** Already in the target, identical. */
  same: number;
  /** In the target and different, kept as they are (merge). */
  kept: number;
  /** Only in the target, removed (replace). */
  removed: number;
  /** Bytes written. */
  bytes: number;
}

export interface CopyReport {
  rows: CopyRow[];
  /** Entries in both that differ (`space/key`). */
  differing: string[];
  /** Entries only in the target (`space/key`). */
  extra: string[];
  dryRun: boolean;
}

/** The target holds state the source does not: nothing was written. */
export class TargetNotEmptyError extends Error {
  override name = "TargetNotEmptyError";

  constructor(
    readonly differing: string[],
    readonly extra: string[],
    where: string,
  ) {
    const sample = (xs: string[]) => `${xs.slice(0, 5).join(", ")}${xs.length > 5 ? `, and ${xs.length - 5} more` : ""}`;
    const parts = [
      ...(differing.length ? [`${differing.length} entr${differing.length === 1 ? "y differs" : "ies differ"} from the source (${sample(differing)})`] : []),
      ...(extra.length ? [`${extra.length} entr${extra.length === 1 ? "y is" : "ies are"} not in the source (${sample(extra)})`] : []),
    ];
    super(`${where} is not empty: ${parts.join("; ")}. Nothing was written. Use --merge to add what is missing and keep what is there, or --force to replace it with an exact copy`);
  }
}

/** The source and target keyrings wrap different data keys: what the source sealed would not open. */
export class KeyMismatchError extends Error {
  override name = "KeyMismatchError";
}

const CHUNK = 1 << 20;
/** Records appended per write (one row in PostgreSQL). */
const LOG_BATCH = 1000;

type Step = () => Promise<void>;

interface Plan {
  rows: CopyRow[];
  differing: string[];
  extra: string[];
  steps: Step[];
}

function row(kind: CopyRow["kind"], space: CopyRow["space"]): CopyRow {
  return { kind, space, source: 0, copied: 0, same: 0, kept: 0, removed: 0, bytes: 0 };
}

/** Copies the shared state of `from` into `to` (see the top of this file for the modes). */
export async function copyStore(from: Store, to: Store, opts: CopyOptions = {}): Promise<CopyReport> {
  const mode = opts.mode ?? "refuse";
  const plan: Plan = { rows: [], differing: [], extra: [], steps: [] };
  // The keyring first: a replica that starts on a half-imported store finds the data key and
  // does not make one of its own.
  const spaces: DocSpace[] = ["keyring", ...DOC_SPACES.filter((s) => s !== "keyring")];
  for (const space of spaces) await planDocs(from, to, space, mode, opts.codec ?? {}, plan);
  for (const space of BLOB_SPACES) await planBlobs(from, to, space, mode, plan);
  for (const kind of LOG_KINDS) await planLog(from, to, kind, mode, plan);
  if (mode === "refuse" && (plan.differing.length > 0 || plan.extra.length > 0)) throw new TargetNotEmptyError(plan.differing, plan.extra, to.where);
  if (!opts.dryRun) for (const step of plan.steps) await step();
  return { rows: plan.rows, differing: plan.differing, extra: plan.extra, dryRun: opts.dryRun === true };
}

async function planDocs(from: Store, to: Store, space: DocSpace, mode: CopyMode, codec: CopyCodec, plan: Plan): Promise<void> {
  const r = row("docs", space);
  plan.rows.push(r);
  const src = from.docs(space);
  const dst = to.docs(space);
  const targetKeys = new Set((await dst.list()).map((e) => e.key));
  for (const { key } of await src.list()) {
    const entry = await src.get(key);
    if (!entry) continue; // removed meanwhile
    r.source++;
    targetKeys.delete(key);
    const bytes = codec.prepare ? await codec.prepare(space, key, entry.bytes) : entry.bytes;
    const there = await dst.get(key);
    if (there) {
      if (there.bytes.equals(bytes) || (codec.same !== undefined && (await codec.same(space, key, entry.bytes, there.bytes)))) {
        r.same++;
        continue;
      }
      plan.differing.push(`${space}/${key}`);
      if (space === "keyring" && mode !== "replace") {
        throw new KeyMismatchError(
          `${to.where} already has a vault data key, and it is not the source's: the results, detached calls and sign-ins copied would not open there. Nothing was written. Copy into an empty store, or use --force to replace the target whole (its own sealed entries become unreadable)`,
        );
      }
      if (mode !== "replace") {
        r.kept++;
        continue;
      }
    }
    r.copied++;
    r.bytes += bytes.length;
    plan.steps.push(async () => {
      await dst.put(key, bytes);
      await to.setModified("docs", space, key, entry.modified);
    });
  }
  for (const key of targetKeys) {
    plan.extra.push(`${space}/${key}`);
    if (mode !== "replace") continue;
    r.removed++;
    plan.steps.push(async () => void (await dst.remove(key)));
  }
}

async function planBlobs(from: Store, to: Store, space: BlobSpace, mode: CopyMode, plan: Plan): Promise<void> {
  const r = row("blobs", space);
  plan.rows.push(r);
  const src = from.blobs(space);
  const dst = to.blobs(space);
  const target = new Map((await dst.list()).map((s) => [s.key, s]));
  for (const stat of (await src.list()).sort((a, b) => (a.key < b.key ? -1 : 1))) {
    r.source++;
    const there = target.get(stat.key);
    target.delete(stat.key);
    if (there) {
      if (await sameBlob(from, to, space, stat.key)) {
        r.same++;
        continue;
      }
      plan.differing.push(`${space}/${stat.key}`);
      if (mode !== "replace") {
        r.kept++;
        continue;
      }
    }
    r.copied++;
    r.bytes += stat.size;
    plan.steps.push(() => copyBlob(from, to, space, stat.key));
  }
  for (const key of [...target.keys()].sort()) {
    plan.extra.push(`${space}/${key}`);
    if (mode !== "replace") continue;
    r.removed++;
    plan.steps.push(async () => void (await dst.remove(key)));
  }
}

async function sameBlob(from: Store, to: Store, space: BlobSpace, key: string): Promise<boolean> {
  const a = await from.blobs(space).open(key);
  const b = await to.blobs(space).open(key);
  try {
    if (!a || !b || a.size !== b.size) return false;
    const x = Buffer.allocUnsafe(CHUNK);
    const y = Buffer.allocUnsafe(CHUNK);
    for (let pos = 0; pos < a.size; pos += CHUNK) {
      const n = Math.min(CHUNK, a.size - pos);
      await a.read(x.subarray(0, n), pos);
      await b.read(y.subarray(0, n), pos);
      if (!x.subarray(0, n).equals(y.subarray(0, n))) return false;
    }
    return true;
  } finally {
    await a?.close();
    await b?.close();
  }
}

async function copyBlob(from: Store, to: Store, space: BlobSpace, key: string): Promise<void> {
  const src = await from.blobs(space).open(key);
  if (!src) return; // removed meanwhile (a retention sweep): nothing to copy
  const stat = await from.blobs(space).stat(key);
  const w = await to.blobs(space).create(key);
  try {
    for (let pos = 0; pos < src.size; pos += CHUNK) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, src.size - pos));
      await src.read(buf, pos);
      await w.write([buf]);
    }
    await w.commit();
  } catch (err) {
    await w.abort().catch(() => undefined);
    throw err;
  } finally {
    await src.close();
  }
  if (stat) await to.setModified("blobs", space, key, stat.modified);
}

/** Every record of a segment, each with its newline. */
async function linesOf(store: Store, kind: LogKind, name: string): Promise<string[]> {
  const log = store.log();
  try {
    const seg = (await log.segments(kind)).find((s) => s.name === name);
    if (!seg) return [];
    const out: string[] = [];
    for await (const { text } of seg.read(0)) {
      for (const line of text.split(/(?<=\n)/)) if (line !== "") out.push(line);
    }
    return out;
  } finally {
    await log.close();
  }
}

async function planLog(from: Store, to: Store, kind: LogKind, mode: CopyMode, plan: Plan): Promise<void> {
  const r = row("log", kind);
  plan.rows.push(r);
  const names = async (s: Store) => {
    const log = s.log();
    try {
      return (await log.segments(kind)).map((x) => x.name);
    } finally {
      await log.close();
    }
  };
  const target = new Set(await names(to));
  for (const name of await names(from)) {
    const src = await linesOf(from, kind, name);
    r.source += src.length;
    const dst = target.delete(name) ? await linesOf(to, kind, name) : [];
    // The target's records are the first of the source's: a copy cut short (or none): complete it.
    const prefix = dst.length <= src.length && dst.every((l, i) => l === src[i]);
    let write: string[];
    if (prefix) {
      r.same += dst.length;
      write = src.slice(dst.length);
    } else {
      plan.differing.push(`${kind}/${name}`);
      if (mode === "replace") {
        write = src;
        plan.steps.push(async () => void (await withLog(to, (log) => log.drop(name))));
      } else {
        // merge: the records the target lacks (a multiset difference), the target's own kept.
        const have = new Map<string, number>();
        for (const l of dst) have.set(l, (have.get(l) ?? 0) + 1);
        write = [];
        for (const l of src) {
          const n = have.get(l) ?? 0;
          if (n > 0) {
            have.set(l, n - 1);
            r.same++;
          } else write.push(l);
        }
        r.kept += [...have.values()].reduce((a, b) => a + b, 0);
      }
    }
    if (write.length === 0) continue;
    r.copied += write.length;
    r.bytes += write.reduce((n, l) => n + Buffer.byteLength(l), 0);
    plan.steps.push(() =>
      withLog(to, async (log) => {
        for (let i = 0; i < write.length; i += LOG_BATCH) await log.append(name, write.slice(i, i + LOG_BATCH));
      }),
    );
  }
  for (const name of [...target].sort()) {
    plan.extra.push(`${kind}/${name}`);
    if (mode !== "replace") continue;
    const n = (await linesOf(to, kind, name)).length;
    r.removed += n;
    plan.steps.push(async () => void (await withLog(to, (log) => log.drop(name))));
  }
}

async function withLog<T>(store: Store, fn: (log: ReturnType<Store["log"]>) => Promise<T>): Promise<T> {
  const log = store.log();
  try {
    return await fn(log);
  } finally {
    await log.close();
  }
}
