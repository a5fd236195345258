// What every process-level bench starts from: where the checkout is, the launcher it runs, its
// flags, and the environment mcphub runs in — its own HOME and data dir (nothing of the
// user's config, vault, tokens or catalogue cache is read or written) and no OS keychain (a bench
// must not prompt).
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "..");
export const BIN = join(ROOT, "bin/mcphub.js");

/** `--name VALUE` from the command line, else undefined. */
export function stringFlag(name: string): string | undefined {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** `--name N` from the command line, else `dflt`. */
export function numberFlag(name: string, dflt: number): number {
  const value = stringFlag(name);
  return value !== undefined ? Number(value) : dflt;
}

export function isolatedEnv(home: string, dataDir = join(home, "data")): Record<string, string> {
  return { ...(process.env as Record<string, string>), HOME: home, MCPHUB_DATA_DIR: dataDir, MCPHUB_KEYCHAIN: "off" };
}
