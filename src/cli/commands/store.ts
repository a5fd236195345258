// `mcphub store status|migrate|import|export`: where the shared state is kept, its schema, and
// moving a single-machine data directory into PostgreSQL and back (store/copy.ts does the copy;
// the vault's keyring codec re-wraps a key that only this machine could open).
import { mkdir, stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { Command } from "commander";
import { dataDir } from "../../config/index.js";
import { BLOB_SPACES, DOC_SPACES, LOG_KINDS, copyStore, fileStore, KeyMismatchError, TargetNotEmptyError, type CopyMode, type CopyReport, type CopyRow, type Store } from "../../store/index.js";
import type { PgStore } from "../../store/postgres/index.js";
import { formatBytes } from "../../util/units.js";
import { keyringCopyCodec } from "../../vault/keys.js";
import { openConfiguredStore } from "./shared-store.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import { example, globalsOf, load } from "./common.js";

interface CopyFlags {
  merge?: boolean;
  force?: boolean;
  dryRun?: boolean;
}

/** What each row of the summary moved, in the operator's words. */
const LABELS: Record<CopyRow["space"], string> = {
  keyring: "vault data key (wrapped)",
  tokens: "agent tokens (hashes)",
  definitions: "pinned definitions and approvals",
  catalog: "catalogue cache",
  detached: "detached calls (sealed)",
  oauth: "OAuth sign-ins (sealed)",
  results: "stored results (sealed chunks)",
  calls: "call records",
  audit: "guardrail audit",
};

function modeOf(flags: CopyFlags): CopyMode {
  if (flags.merge && flags.force) throw new CliError("--merge and --force exclude each other: --merge keeps what the target holds, --force replaces it");
  return flags.force ? "replace" : flags.merge ? "merge" : "refuse";
}

/** Whether a store holds any shared state at all (an import from an empty directory is a mistake). */
async function holdsState(s: Store): Promise<boolean> {
  for (const space of DOC_SPACES) if ((await s.docs(space).list()).length > 0) return true;
  for (const space of BLOB_SPACES) if ((await s.blobs(space).list()).length > 0) return true;
  const log = s.log();
  try {
    for (const kind of LOG_KINDS) if ((await log.segments(kind)).length > 0) return true;
  } finally {
    await log.close();
  }
  return false;
}

/** The directory, resolved: it must exist (import), is created (export), or may be missing (a dry run). */
async function directory(path: string, missing: "refuse" | "create" | "allow"): Promise<string> {
  const dir = resolve(path);
  try {
    if (!(await stat(dir)).isDirectory()) throw new CliError(`${dir} is not a directory`);
  } catch (err) {
    if (err instanceof CliError) throw err;
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new CliError(`${dir} cannot be read: ${(err as Error).message}`);
    if (missing === "refuse") throw new CliError(`${dir} does not exist; give the data directory to import (default: $MCPHUB_DATA_DIR, else ~/.local/share/mcphub)`);
    if (missing === "allow") return dir;
    await mkdir(dir, { recursive: true, mode: 0o700 });
  }
  return dir;
}

async function runCopy(from: Store, to: Store, mode: CopyMode, dryRun: boolean, codec: ReturnType<typeof keyringCopyCodec>): Promise<CopyReport> {
  try {
    return await copyStore(from, to, { mode, dryRun, codec });
  } catch (err) {
    if (err instanceof TargetNotEmptyError || err instanceof KeyMismatchError) throw new CliError(err.message);
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
}

function renderCopy(io: CliIO, r: CopyReport, verb: string, from: string, to: string): string {
  const c = colors(io);
  const rows = r.rows.map((x) => [
    LABELS[x.space],
    x.kind === "log" ? "records" : x.kind === "blobs" ? "results" : "documents",
    String(x.source),
    String(x.copied),
    String(x.same),
    String(x.kept),
    String(x.removed),
    formatBytes(x.bytes),
  ]);
  // Counts right-aligned, so the columns compare at a glance.
  const header = ["WHAT", "UNIT", "SOURCE", "COPIED", "SAME", "KEPT", "REMOVED", "BYTES"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((x) => (x[i] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ");
  const [head, ...lines] = [line(header), ...rows.map(line)];
  const copied = r.rows.reduce((n, x) => n + x.copied, 0);
  const same = r.rows.reduce((n, x) => n + x.same, 0);
  const kept = r.rows.reduce((n, x) => n + x.kept, 0);
  const removed = r.rows.reduce((n, x) => n + x.removed, 0);
  const summary = r.dryRun
    ? `Dry run: ${verb} ${from} into ${to} would copy ${copied}, skip ${same} already there${kept ? `, keep ${kept} that differ` : ""}${removed ? `, remove ${removed}` : ""}. Nothing was written.`
    : copied === 0 && removed === 0
      ? `${to} already holds everything in ${from} (${same} identical); nothing to do.`
      : `${verb === "import" ? "Imported" : "Exported"} ${from} into ${to}: ${copied} copied, ${same} already there${kept ? `, ${kept} kept as they were (they differ: ${r.differing.slice(0, 5).join(", ")}${r.differing.length > 5 ? ", ..." : ""})` : ""}${removed ? `, ${removed} removed` : ""}.`;
  return [c.bold(head ?? ""), ...lines, "", kept ? c.yellow(summary) : summary].join("\n");
}

export function registerStore(program: Command, io: CliIO): void {
  const store = program
    .command("store")
    .description("the shared state's store: the data directory, or PostgreSQL in team mode (store: in the config)")
    .addHelpText("after", example(["mcphub store status", "mcphub store migrate", "mcphub store import   # this machine's data directory into PostgreSQL", "mcphub store export /var/backups/mcphub"]));

  store
    .command("status")
    .description("where the shared state is kept and, on PostgreSQL, which schema migrations are applied or pending")
    .addHelpText("after", example(["mcphub store status", "mcphub store status --json   # kind, where, applied and pending migrations"]))
    .action(async (_flags: unknown, cmd: Command) => {
      const { config } = await load(cmd);
      const s = await openConfiguredStore(config, process.env, { migrate: false });
      try {
        const schema = s.kind === "postgres" ? await (s as PgStore).schema() : undefined;
        const out = {
          kind: s.kind,
          where: s.where,
          ...(schema ? { applied: schema.applied, pending: schema.pending.map((m) => ({ version: m.version, name: m.name })) } : {}),
        };
        if (globalsOf(cmd).json) return printJson(io, out);
        const c = colors(io);
        io.out(`${c.bold("store")}  ${s.kind === "files" ? "the data directory's files" : "PostgreSQL"}: ${s.where}`);
        if (!schema) return;
        for (const m of schema.applied) io.out(`  ${c.green("applied")}  ${m.version}  ${m.name}  (${m.applied})`);
        for (const m of schema.pending) io.out(`  ${c.yellow("pending")}  ${m.version}  ${m.name}`);
        if (schema.pending.length > 0) io.out(c.dim("Run `mcphub store migrate` (or start a replica: it applies them under a lock)."));
      } finally {
        await s.close();
      }
    });

  store
    .command("migrate")
    .description("apply pending schema migrations to the PostgreSQL store (replicas also do this at start, under a lock)")
    .addHelpText("after", example(["mcphub store migrate", "mcphub --config team.yaml store migrate   # before rolling out a new version"]))
    .action(async (_flags: unknown, cmd: Command) => {
      const { config } = await load(cmd);
      if (config.store === undefined) throw new CliError("the config names no store: (the data directory's files need no migration); add store: postgres://USER@HOST:PORT/DB");
      const before = await openConfiguredStore(config, process.env, { migrate: false });
      const pending = before.kind === "postgres" ? (await (before as PgStore).schema()).pending : [];
      await before.close();
      const s = await openConfiguredStore(config, process.env, { migrate: true });
      await s.close();
      if (globalsOf(cmd).json) return printJson(io, { where: s.where, applied: pending.map((m) => ({ version: m.version, name: m.name })) });
      io.out(pending.length === 0 ? `${s.where}: the schema is up to date` : `${s.where}: applied ${pending.map((m) => `${m.version} (${m.name})`).join(", ")}`);
    });

  store
    .command("import [dir]")
    .description("copy a single-machine data directory (default: this machine's) into the PostgreSQL store: tokens, results, detached calls, sign-ins, pins and approvals, audit, call records, catalogue cache")
    .option("--merge", "the store is not empty: add what it lacks, keep what it holds")
    .option("--force", "the store is not empty: replace its shared state with an exact copy of the directory's")
    .option("--dry-run", "compare and print the summary; write nothing")
    .addHelpText(
      "after",
      [
        "",
        "Bytes move as they are: results, detached calls and sign-ins stay sealed, tokens stay hashes. A vault",
        "key kept in a key file or the OS keychain is re-wrapped with MCPHUB_VAULT_PASSPHRASE (every replica",
        "needs that passphrase). An empty store, or one holding exactly this copy, needs no flag: re-running",
        "an import skips what is there and completes what an interrupted one left out. Stop the gateways on",
        "the directory first for a point-in-time copy.",
        example(["mcphub store import", "mcphub store import /srv/old-laptop/mcphub --dry-run", "mcphub store import --merge --json"]),
      ].join("\n"),
    )
    .action(async (dir: string | undefined, flags: CopyFlags, cmd: Command) => {
      const mode = modeOf(flags);
      const { config } = await load(cmd);
      if (config.store === undefined) throw new CliError("the config names no store: to import into; add store: postgres://USER@HOST:PORT/DB (docs/team.md), then run `mcphub store import`");
      const source = await directory(dir ?? dataDir(process.env), "refuse");
      const from = fileStore(source);
      if (!(await holdsState(from))) throw new CliError(`${source} holds no mcphub state (no tokens.json, vault/, definitions/, catalog/ or telemetry/): is it a data directory?`);
      const to = await openConfiguredStore(config, process.env, { migrate: true });
      try {
        const report = await runCopy(from, to, mode, flags.dryRun === true, keyringCopyCodec({ sourceDir: source, targetDir: dataDir(process.env), shared: true, env: process.env }));
        if (globalsOf(cmd).json) return printJson(io, { from: source, to: to.where, mode, ...report });
        io.out(renderCopy(io, report, "import", source, to.where));
        if (!report.dryRun && report.rows.some((r) => r.copied > 0)) io.err(colors(io).dim("Start the replicas with the same MCPHUB_VAULT_PASSPHRASE to open what was imported."));
      } finally {
        await to.close();
      }
    });

  store
    .command("export [dir]")
    .description("copy the PostgreSQL store's shared state into a data directory (default: this machine's), the layout a single mcphub uses")
    .option("--merge", "the directory is not empty: add what it lacks, keep what it holds")
    .option("--force", "the directory is not empty: replace its shared state with an exact copy of the store's")
    .option("--dry-run", "compare and print the summary; write nothing")
    .addHelpText(
      "after",
      [
        "",
        "The directory gets the files a single mcphub keeps (tokens.json, vault/, definitions/, catalog/,",
        "telemetry/), byte for byte as the store holds them; its local secrets vault and daemon record are",
        "left alone. The vault key stays wrapped by the team's passphrase: set MCPHUB_VAULT_PASSPHRASE to use it.",
        example(["mcphub store export /var/backups/mcphub-$(date +%F)", "mcphub store export --dry-run", "mcphub store export ~/mcphub-data --force"]),
      ].join("\n"),
    )
    .action(async (dir: string | undefined, flags: CopyFlags, cmd: Command) => {
      const mode = modeOf(flags);
      const { config } = await load(cmd);
      if (config.store === undefined) throw new CliError("the config names no store: to export from (the shared state is already the data directory's files); add store: postgres://USER@HOST:PORT/DB");
      const target = await directory(dir ?? dataDir(process.env), flags.dryRun === true ? "allow" : "create");
      const from = await openConfiguredStore(config, process.env, { migrate: false });
      try {
        const report = await runCopy(from, fileStore(target), mode, flags.dryRun === true, keyringCopyCodec({ sourceDir: dataDir(process.env), targetDir: target, shared: false, env: process.env }));
        if (globalsOf(cmd).json) return printJson(io, { from: from.where, to: target, mode, ...report });
        io.out(renderCopy(io, report, "export", from.where, target));
      } finally {
        await from.close();
      }
    });
}
