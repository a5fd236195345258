// Relative paths in a stdio server's `command`, `args` and `cwd` mean "next to the config file",
// wherever mcphub is started from (a harness launches it from any directory). The rule:
//  - `command`: a relative path with a separator (`./bin/server`, `tools/run.sh`) resolves against
//    the config file's folder; a bare name (`node`, `npx`) is looked up on PATH as usual;
//  - `args`: an argument that is `.` or `..` or starts with `./` or `../` (`.\` `..\` too) is a
//    path and resolves against the config file's folder; every other argument is passed as is;
//  - `cwd`: a relative path resolves against the config file's folder (`~` is expanded later);
//  - `sandbox.read` / `sandbox.write`: the same as `cwd` (`roots` and `~/...` are kept as written).
// What a person types at a shell is another matter: `mcphub add here npx ... .` run in a project
// folder means that folder, as for any other command. `add` therefore resolves the same shapes
// against its own working directory and stores them absolute (absolutizeTyped), so the stored
// config means what was typed, and the rule above never has to guess.
import { isAbsolute, resolve } from "node:path";
import { ROOTS_ENTRY, type SandboxConfig } from "./sandbox.js";
import type { Config, ServerConfig } from "./schema.js";

const RELATIVE_ARG = /^\.\.?(?:[\\/]|$)/;

export function resolveCommandPath(command: string, base: string): string {
  if (isAbsolute(command) || command.startsWith("~") || !/[\\/]/.test(command)) return command;
  return resolve(base, command);
}

export function resolveArg(arg: string, base: string): string {
  return RELATIVE_ARG.test(arg) ? resolve(base, arg) : arg;
}

export function resolveCwd(cwd: string, base: string): string {
  if (cwd === "" || cwd.startsWith("~") || isAbsolute(cwd)) return cwd;
  return resolve(base, cwd);
}

export function resolveSandboxPaths(sandbox: SandboxConfig, base: string): SandboxConfig {
  if (sandbox === false) return sandbox;
  const list = (l: string[] | undefined) => l?.map((p) => (p === ROOTS_ENTRY ? p : resolveCwd(p, base)));
  const out = { ...sandbox };
  if (sandbox.read) out.read = list(sandbox.read);
  if (sandbox.write) out.write = list(sandbox.write);
  return out;
}

/** The config with every stdio server's relative paths made absolute against `base`. */
export function resolveServerPaths(config: Config, base: string): Config {
  const servers = config.servers;
  for (const [name, s] of Object.entries(servers)) {
    if (s.command === undefined) continue;
    const next: ServerConfig = { ...s, command: resolveCommandPath(s.command, base) };
    if (s.args) next.args = s.args.map((a) => resolveArg(a, base));
    if (s.cwd !== undefined) next.cwd = resolveCwd(s.cwd, base);
    if (s.sandbox !== undefined) next.sandbox = resolveSandboxPaths(s.sandbox, base);
    servers[name] = next;
  }
  if (config.sandbox !== undefined) config.sandbox = resolveSandboxPaths(config.sandbox, base);
  return config;
}

export interface TypedPathChange {
  /** "command" or "args[N]". */
  what: string;
  typed: string;
  stored: string;
}

/**
 * A command line typed at a shell (`mcphub add NAME COMMAND ARGS...`), with its relative paths
 * made absolute against the shell's folder `cwd`: the same shapes as in a config file (a COMMAND
 * with a separator, an argument `.`, `..`, `./x`, `../x`). Returns what changed, to say so.
 */
export function absolutizeTyped(command: string, args: string[], cwd: string): { command: string; args: string[]; changed: TypedPathChange[] } {
  const changed: TypedPathChange[] = [];
  const cmd = resolveCommandPath(command, cwd);
  if (cmd !== command) changed.push({ what: "command", typed: command, stored: cmd });
  const out = args.map((a, i) => {
    const r = resolveArg(a, cwd);
    if (r !== a) changed.push({ what: `args[${i}]`, typed: a, stored: r });
    return r;
  });
  return { command: cmd, args: out, changed };
}
