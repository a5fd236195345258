// The environment and working directory of a stdio child. A child gets the gateway's own env
// minus what belongs to someone else (the vault passphrase, values configured for other
// servers), plus its configured `env`, plus its vault secrets. Secrets only ever travel in env.
import { homedir } from "node:os";
import { resolve } from "node:path";
import type { ServerConfig } from "../../config/schema.js";

/** Never handed to a downstream: they unlock mcphub's own vault. */
export const GATEWAY_ONLY_VARS = ["MCPHUB_VAULT_PASSPHRASE", "MCPHUB_VAULT_PASSPHRASE_FILE"] as const;

export interface ChildEnvInput {
  server: string;
  cfg: ServerConfig;
  /** Every configured server, so vars meant for the others can be withheld. */
  allServers: Record<string, ServerConfig>;
  parentEnv: NodeJS.ProcessEnv;
  /** Resolved vault secrets for this server (already filtered by vault_only/vault_prefix). */
  vaultEnv?: Record<string, string>;
}

export function buildChildEnv(input: ChildEnvInput): Record<string, string> {
  const { server, cfg, allServers, parentEnv } = input;
  const own = new Set(Object.keys(cfg.env ?? {}));
  const withheld = new Set<string>(GATEWAY_ONLY_VARS.map((v) => v.toUpperCase()));
  for (const [other, ocfg] of Object.entries(allServers)) {
    if (other === server) continue;
    for (const k of Object.keys(ocfg.env ?? {})) if (!own.has(k)) withheld.add(k.toUpperCase());
  }
  const vaultOnly = new Set(cfg.vault !== undefined ? (cfg.vault_only ?? []) : []);
  const vaultPrefix = cfg.vault !== undefined ? cfg.vault_prefix : undefined;

  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(parentEnv)) {
    if (v === undefined) continue;
    if (withheld.has(k.toUpperCase())) continue;
    // A stale ambient value must not shadow what the vault is meant to provide.
    if (vaultOnly.has(k) || (vaultPrefix !== undefined && vaultPrefix !== "" && k.startsWith(vaultPrefix))) continue;
    // Exported shell functions are code, not configuration.
    if (v.startsWith("() {")) continue;
    env[k] = v;
  }
  for (const k of Object.keys(cfg.env ?? {}).sort()) env[k] = cfg.env?.[k] ?? "";
  for (const [k, v] of Object.entries(input.vaultEnv ?? {})) env[k] = v;
  return env;
}

/**
 * `cwd` with `~` expanded. A config loaded from a file already has relative paths resolved
 * against its folder (config/relative-paths.ts); anything still relative resolves against the
 * gateway's cwd.
 */
export function resolveChildCwd(cwd: string | undefined, home: string = homedir()): string | undefined {
  if (cwd === undefined || cwd === "") return undefined;
  if (cwd === "~") return home;
  if (cwd.startsWith("~/")) return resolve(home, cwd.slice(2));
  return resolve(cwd);
}
