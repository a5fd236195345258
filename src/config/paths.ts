// Where the config file and the data directory live. Everything takes env/cwd/home explicitly
// (defaulting to the process's) so tests never touch the real home directory.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { extname, isAbsolute, join, resolve } from "node:path";
import { ConfigError } from "./errors.js";

export type ConfigFormat = "yaml" | "toml" | "json";
export type ConfigSource = "flag" | "env" | "cwd" | "home" | "default";

export interface ResolvedConfigPath {
  path: string;
  format: ConfigFormat;
  exists: boolean;
  source: ConfigSource;
}

export interface PathOptions {
  /** `--config PATH`. */
  explicit?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  home?: string;
}

/** File names looked for in the working directory and in ~/.config/mcphub, in this order. */
export const CONFIG_FILE_NAMES = ["mcphub.yaml", "mcphub.yml", "mcphub.toml", "mcphub.json"] as const;

const EXTENSIONS: Record<string, ConfigFormat> = { ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json" };

/** The format a config file is read and written in, from its extension. */
export function formatFromPath(path: string): ConfigFormat {
  const format = EXTENSIONS[extname(path).toLowerCase()];
  if (format === undefined) {
    throw ConfigError.message(
      `config file "${path}" has an unsupported extension; use .yaml, .yml, .toml or .json`,
    );
  }
  return format;
}

/** The home directory: `home`, else $HOME, else the OS's idea of it. */
export function homeDir(env: NodeJS.ProcessEnv = process.env, home?: string): string {
  return home ?? (env.HOME || homedir());
}

/** Expands a leading `~` or `~/` to the home directory; other paths are returned unchanged. */
export function expandHome(path: string, home: string = homeDir()): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return join(home, path.slice(2));
  return path;
}

/**
 * Finds the config file: `--config`, then $MCPHUB_CONFIG, then ./mcphub.{yaml,yml,toml,json},
 * then ~/.config/mcphub/mcphub.{...}; else the default ~/.config/mcphub/mcphub.yaml (which
 * need not exist: `mcphub init` creates it).
 */
export function resolveConfigPath(opts: PathOptions = {}): ResolvedConfigPath {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const home = homeDir(env, opts.home);
  const at = (p: string, source: ConfigSource): ResolvedConfigPath => {
    const path = resolve(cwd, expandHome(p, home));
    return { path, format: formatFromPath(path), exists: existsSync(path), source };
  };

  if (opts.explicit !== undefined && opts.explicit !== "") return at(opts.explicit, "flag");
  const fromEnv = env.MCPHUB_CONFIG;
  if (fromEnv !== undefined && fromEnv !== "") return at(fromEnv, "env");
  for (const name of CONFIG_FILE_NAMES) {
    const p = join(cwd, name);
    if (existsSync(p)) return at(p, "cwd");
  }
  const configDir = defaultConfigDir(home);
  for (const name of CONFIG_FILE_NAMES) {
    const p = join(configDir, name);
    if (existsSync(p)) return at(p, "home");
  }
  return at(join(configDir, "mcphub.yaml"), "default");
}

/** ~/.config/mcphub */
export function defaultConfigDir(home: string): string {
  return join(home, ".config", "mcphub");
}

/** The data directory (vault, telemetry, state): $MCPHUB_DATA_DIR or ~/.local/share/mcphub. */
export function dataDir(env: NodeJS.ProcessEnv = process.env, home?: string): string {
  const h = homeDir(env, home);
  const fromEnv = env.MCPHUB_DATA_DIR;
  if (fromEnv !== undefined && fromEnv !== "") {
    const expanded = expandHome(fromEnv, h);
    return isAbsolute(expanded) ? expanded : resolve(expanded);
  }
  return join(h, ".local", "share", "mcphub");
}

/** A short name for messages: relative inside `cwd`, `~/...` inside home, else absolute. */
export function displayPath(path: string, cwd: string = process.cwd(), home: string = homeDir()): string {
  const within = (dir: string) => path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
  if (within(cwd)) return path.slice(cwd.replace(/\/$/, "").length + 1);
  if (within(home)) return `~/${path.slice(home.replace(/\/$/, "").length + 1)}`;
  return path;
}
