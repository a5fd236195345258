// How every command opens the configured store: the data directory's files when the config names
// no `store:`, else PostgreSQL, its password from the URL, from the local vault
// (`?password=vault://PROJECT/KEY`) or from libpq's PGPASSWORD. One-shot commands that read or
// change shared state (token, stats, approve, auth, pin --top, doctor, status, sync's tokens) go
// through withConfiguredStore, so on a team they see and change what the replicas share.
import type { Command } from "commander";
import { ConfigError, dataDir, loadConfig, type Config } from "../../config/index.js";
import { openStore, parseStoreUrl, redactStoreUrl, type Store } from "../../store/index.js";
import { VaultSecretResolver } from "../../vault/resolver.js";
import { CliError } from "../context.js";

export interface OpenConfiguredOptions {
  /**
   * Keep the in-memory copies of the hot spaces (tokens, definitions, OAuth, catalogue) and the
   * notification connection: a daemon, or a command that reads through those copies.
   */
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
      deadAfterMs: config.replica_timeout,
      ...(opts.log ? { log: opts.log } : {}),
    });
  } catch (err) {
    throw storeOpenError(config.store, err);
  }
}

function storeOpenError(url: string, err: unknown): CliError {
  const why = err instanceof Error ? err.message : String(err);
  // The store's own errors already say where; others get the (password-free) URL in front.
  return new CliError(why.includes(redactStoreUrl(url)) ? why : `store ${redactStoreUrl(url)}: ${why}`);
}

/**
 * The config, or undefined when there is no config file at all: a command over the data
 * directory (stats) still works then. A config that exists but is broken is an error (falling
 * back to the local files would show a team member the wrong state without saying so).
 */
export async function configIfAny(cmd: Command): Promise<Config | undefined> {
  const g = cmd.optsWithGlobals<{ config?: string }>();
  try {
    return (await loadConfig({ ...(g.config ? { configPath: g.config } : {}), env: process.env })).config;
  } catch (err) {
    if (err instanceof ConfigError && /^no config at /.test(err.message)) return undefined;
    if (err instanceof ConfigError) {
      const lines = err.message.split("\n").filter((l) => l.trim() !== "");
      throw new CliError(lines.length > 1 ? `${lines[0]} (and ${lines.length - 1} more)` : (lines[0] ?? err.message));
    }
    throw err;
  }
}

/**
 * Runs `fn` on the configured store and closes it. Without a config (or one that names no
 * store) that is the data directory's files, as before team mode: a command that only reads the
 * data directory keeps working where no config exists. Errors become one CliError line.
 */
export async function withConfiguredStore<T>(config: Config | undefined, fn: (store: Store) => Promise<T>, opts: OpenConfiguredOptions = {}): Promise<T> {
  const store = config ? await openConfiguredStore(config, process.env, { follow: true, ...opts }) : await openStore({ dataDir: dataDir(process.env) });
  try {
    return await fn(store);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(err instanceof Error ? err.message : String(err));
  } finally {
    await store.close();
  }
}
