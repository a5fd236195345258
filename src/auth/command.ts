// The exact command a person runs to sign a server in, shown wherever a server needs sign-in
// (list_servers, doctor, the daemon log, call errors). It names the config file unless the file is
// the one mcphub finds by default, so copying the command always acts on the same config.
import { CONFIG_FILE_NAMES, defaultConfigDir, homeDir } from "../config/paths.js";
import { join } from "node:path";

export function loginCommand(server: string, configPath?: string, env: NodeJS.ProcessEnv = process.env): string {
  return mcphubCommand(["auth", "login", server], configPath, env);
}

/** `mcphub ARGS`, with `--config PATH` when the config is not one of the default files. */
export function mcphubCommand(args: readonly string[], configPath?: string, env: NodeJS.ProcessEnv = process.env): string {
  const defaults = new Set(CONFIG_FILE_NAMES.map((n) => join(defaultConfigDir(homeDir(env)), n)));
  const config = configPath !== undefined && !defaults.has(configPath) ? ` --config ${shellWord(configPath)}` : "";
  return `mcphub${config} ${args.map(shellWord).join(" ")}`;
}

/** A word safe to paste into a POSIX shell. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
