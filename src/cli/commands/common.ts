// Helpers the operator commands share: global options, loading the config as one readable
// error line, the sync context, list rendering and small argument parsers. No business logic.
import { stripVTControlCharacters } from "node:util";
import type { Command } from "commander";
import { ConfigError, dataDir, emptiesConfig, homeDir, loadConfig, type Config, type LoadedConfig } from "../../config/index.js";
import { planSync, selfCommand, type SyncContext } from "../../harness/index.js";
import { harnessHome } from "../../harness/scan.js";
import { lookBackProblem, parseDuration } from "../../util/units.js";
import { CliError } from "../context.js";
import type { Store } from "../../store/index.js";
import { withConfiguredStore } from "./shared-store.js";
import { agentTokenValid, createAgentToken, liveTokenIds } from "./tokens-bridge.js";

export interface Globals {
  config?: string;
  json?: boolean;
}

export function globalsOf(cmd: Command): Globals {
  return cmd.optsWithGlobals<Globals>();
}

/** A ConfigError as one line (several issues are joined), so every failure prints once. */
export function oneLine(err: unknown): CliError {
  const msg = err instanceof Error ? err.message : String(err);
  const lines = msg.split("\n").filter((l) => l.trim() !== "");
  return new CliError(lines.length > 1 ? `${lines[0]} (and ${lines.length - 1} more problem${lines.length > 2 ? "s" : ""}: ${lines.slice(1).join("; ")})` : (lines[0] ?? msg));
}

export async function load(cmd: Command, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  const g = globalsOf(cmd);
  try {
    return await loadConfig({ ...(g.config ? { configPath: g.config } : {}), env });
  } catch (err) {
    if (err instanceof ConfigError) throw oneLine(err);
    throw err;
  }
}

/** Runs a config edit, turning validation failures into one line (nothing is written then). */
export async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ConfigError) throw oneLine(err);
    throw err;
  }
}

export function dataDirOf(env: NodeJS.ProcessEnv = process.env): string {
  return dataDir(env);
}

/** Home used for `~` in agent paths and default harness files ($MCPHUB_HOME_DIR, else $HOME). */
export function harnessHomeOf(env: NodeJS.ProcessEnv = process.env): string {
  return harnessHome(env, homeDir(env));
}

export function syncContext(loaded: LoadedConfig, env: NodeJS.ProcessEnv = process.env): SyncContext {
  const data = dataDirOf(env);
  // The tokens of the configured store: PostgreSQL in team mode, so every replica accepts them.
  const tokens = <T>(fn: (where: string | Store) => Promise<T>): Promise<T> => (loaded.config.store === undefined ? fn(data) : withConfiguredStore(loaded.config, fn));
  return {
    configPath: loaded.path,
    dataDir: data,
    home: harnessHomeOf(env),
    self: selfCommand(env),
    createToken: (agent) => tokens((w) => createAgentToken(w, agent)),
    tokenValid: (token, agent) => tokens((w) => agentTokenValid(w, token, agent)),
    liveTokenIds: (agent) => tokens((w) => liveTokenIds(w, agent)),
  };
}

/**
 * What happens after a config edit, in one sentence: running gateways reload the file on their
 * own; a harness file needs `sync` only when that agent's entry in it would change (a direct-mode
 * agent's server list, a new agent, an agent not synced yet).
 */
export async function nextSteps(loaded: LoadedConfig, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const live = "Running gateways (mcp serve, up) pick this up on their own.";
  let config: Config;
  try {
    config = (await loadConfig({ configPath: loaded.path, env })).config;
  } catch {
    return live;
  }
  // A running gateway holds an edit that empties its config until it is confirmed (a truncated
  // save looks the same): say how to confirm it instead of promising it is picked up.
  const emptied = emptiesConfig(config, loaded.config);
  if (emptied !== undefined) {
    return `This edit ${emptied}, so running gateways (mcp serve, up) hold it until it is confirmed: send them SIGHUP (or save the file again).`;
  }
  const ctx = syncContext({ ...loaded, config }, env);
  const stale: string[] = [];
  for (const name of Object.keys(config.agents).sort()) {
    if (config.agents[name]?.disabled) continue;
    try {
      const plan = await planSync(config, name, ctx);
      if (plan.actions.some((a) => a.action !== "unchanged")) stale.push(name);
    } catch {
      return `${live} Run \`mcphub sync\` to check the harness files.`;
    }
  }
  if (stale.length === 0) return `${live} Harness files need no change.`;
  return `${live} Harness files of ${stale.join(", ")} need an update: run \`mcphub sync --write\`.`;
}

export function requireServer(config: Config, name: string): void {
  if (config.servers[name] !== undefined) return;
  const known = Object.keys(config.servers).sort();
  throw new CliError(`unknown server "${name}"${known.length ? `; configured servers: ${known.join(", ")}` : " (no servers are configured; add one with `mcphub add`)"}`);
}

/** commander collector for repeatable options. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** "K=V" pairs from --env, checked before anything is written. */
export function parseEnvPairs(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const i = p.indexOf("=");
    const key = i > 0 ? p.slice(0, i) : "";
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new CliError(`--env "${p}" must be KEY=VALUE with a variable name such as API_URL`);
    out[key] = p.slice(i + 1);
  }
  return out;
}

export function parseSince(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) throw new CliError(`--since "${text}" is not a duration; use e.g. 90m, 24h or 7d`);
  const problem = lookBackProblem(ms);
  if (problem) throw new CliError(`--since "${text}" ${problem}`);
  return ms;
}

export function parsePositiveInt(flag: string, text: string): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) <= 0) throw new CliError(`${flag} "${text}" must be a positive whole number`);
  return Number(text);
}

/** How many columns a cell takes on a terminal: colour codes take none. */
export function visibleWidth(text: string): number {
  return stripVTControlCharacters(text).length;
}

/** `text` padded with spaces to `width` visible columns (colour codes do not count). */
export function padVisible(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - visibleWidth(text)));
}

/** A plain text table: columns padded to their widest cell, measured without colour codes. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(visibleWidth(h), ...rows.map((r) => visibleWidth(r[i] ?? ""))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : padVisible(c, widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** "~/..." for paths under home, for display. */
export function tildify(path: string, home: string): string {
  return path === home ? "~" : path.startsWith(`${home}/`) ? `~/${path.slice(home.length + 1)}` : path;
}

export function example(lines: string[]): string {
  return `\nExamples:\n${lines.map((l) => `  ${l}`).join("\n")}`;
}
