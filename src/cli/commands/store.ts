// `mcphub store status|migrate`, and how every command opens the configured store: the data
// directory's files when the config names no `store:`, else PostgreSQL, its password from the URL,
// from the local vault (`?password=vault://PROJECT/KEY`) or from libpq's PGPASSWORD.
import type { Command } from "commander";
import { dataDir, type Config } from "../../config/index.js";
import { openStore, parseStoreUrl, redactStoreUrl, type Store } from "../../store/index.js";
import type { PgStore } from "../../store/postgres/index.js";
import { VaultSecretResolver } from "../../vault/resolver.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import { example, globalsOf, load } from "./common.js";

export interface OpenConfiguredOptions {
  /** Keep mirrors and the notification connection (a daemon); one-shot commands need neither. */
  follow?: boolean;
  migrate?: boolean;
  log?: (level: "info" | "warn" | "error", msg: string) => void;
}

/** The store the config names; a PostgreSQL that cannot be reached is one clear CliError. */
export async function openConfiguredStore(config: Config, env: NodeJS.ProcessEnv, opts: OpenConfiguredOptions = {}): Promise<Store> {
  const data = dataDir(env);
  if (config.store === undefined) return openStore({ dataDir: data });
  const url = parseStoreUrl(config.store);
  let password: string | undefined;
  if (url.passwordRef !== undefined) {
    password = await new VaultSecretResolver({ dataDir: data, env }).header(`vault://${url.passwordRef}`).catch((err: unknown) => {
      throw new CliError(`store: the password ${url.passwordRef} could not be read from the vault: ${err instanceof Error ? err.message : String(err)}`);
    });
  }
  try {
    return await openStore({
      dataDir: data,
      url: config.store,
      ...(password !== undefined ? { password } : {}),
      follow: opts.follow ?? false,
      migrate: opts.migrate ?? true,
      ...(opts.log ? { log: opts.log } : {}),
    });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    // The store's own errors already say where; others get the (password-free) URL in front.
    throw new CliError(why.includes(redactStoreUrl(config.store)) ? why : `store ${redactStoreUrl(config.store)}: ${why}`);
  }
}

export function registerStore(program: Command, io: CliIO): void {
  const store = program
    .command("store")
    .description("the shared state's store: the data directory, or PostgreSQL in team mode (store: in the config)")
    .addHelpText("after", example(["mcphub store status", "mcphub store migrate", "mcphub store status --json"]));

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
}
