// What a server's runtime needs to see besides the system folders, read-only: the command's own
// installation when it lives outside them (nvm, pyenv, a virtualenv, ~/.cargo), the interpreter a
// command that is a script names in its `#!` line (and that one's installation: a pipx or uv tool's
// virtualenv python, `#!/usr/bin/env node` under nvm), the script an interpreter is given and the
// package it belongs to, npm's cache for npx (so packages already installed run offline), uv's
// cache and tools for uvx. Never the home directory as a whole.
import { basename, dirname, join, posix } from "node:path";
import { isInside } from "./paths.js";
import type { FsProbe } from "./fs-probe.js";

export interface RuntimePath {
  path: string;
  why: string;
}

export interface RuntimeNeeds {
  paths: RuntimePath[];
  /** Variables the runtime gets inside the sandbox (npm's cache location, offline switches). */
  env: Record<string, string>;
}

export interface RuntimeInput {
  /** The command as resolved on the gateway's PATH (absolute), or as written when not found. */
  command: string;
  args: string[];
  /** The server's environment (after env isolation). */
  env: Record<string, string>;
  home: string;
  /** Where relative script arguments are found. */
  cwd: string;
  /** Whether the sandbox has network access beyond its own loopback. */
  online: boolean;
  fs: FsProbe;
}

const INTERPRETERS = /^(node|nodejs|bun|deno|tsx|ts-node|python[0-9.]*|ruby|perl|php)$/;
const PROJECT_MARKERS = ["package.json", "pyproject.toml", "setup.py", "Cargo.toml", "Gemfile", "composer.json"];

/** Whether `dir` may be shown as a whole: never `/`, HOME, an ancestor of HOME or ~/.local. */
function showable(dir: string, home: string): boolean {
  return dir !== "/" && !isInside(home, dir) && dir !== join(home, ".local");
}

/** For `/x/prefix/bin/tool` (or `.../shims/tool`): the installation `/x/prefix`, when showable. */
function installRoot(file: string, home: string): string | undefined {
  const dir = dirname(file);
  if (!["bin", "sbin", "shims"].includes(basename(dir))) return undefined;
  const root = dirname(dir);
  return showable(root, home) ? root : undefined;
}

/**
 * The project a script belongs to, when showable: for a script inside `node_modules`, the folder
 * that holds that node_modules (an installed package finds its dependencies there, not in its own
 * folder); else the nearest folder at or above the script's with a project file, raised to the
 * nearest one above it with a node_modules when it has none itself (a workspace package whose
 * dependencies are hoisted to the workspace root). Else the script's own folder.
 */
function projectOf(file: string, home: string, fs: FsProbe): string {
  return projectRoot(file, home, fs) ?? dirname(file);
}

/** projectOf without the fallback: undefined when the script belongs to no project. */
function projectRoot(file: string, home: string, fs: FsProbe): string | undefined {
  const installed = file.indexOf("/node_modules/");
  if (installed > 0) {
    const root = file.slice(0, installed);
    if (showable(root, home)) return root;
  }
  for (let dir = dirname(file); showable(dir, home); dir = dirname(dir)) {
    if (!PROJECT_MARKERS.some((m) => fs.kind(join(dir, m)) === "file")) {
      if (dirname(dir) === dir) break;
      continue;
    }
    if (fs.kind(join(dir, "node_modules")) === "dir") return dir;
    for (let up = dirname(dir); showable(up, home) && up !== dirname(up); up = dirname(up)) {
      if (fs.kind(join(up, "node_modules")) === "dir") return up;
    }
    return dir;
  }
  return undefined;
}

/** env's options that take a value as the next word (`env -u NAME prog`). */
const ENV_VALUE_OPTIONS = new Set(["-u", "--unset", "-C", "--chdir", "-P", "-a", "--argv0"]);

/**
 * The interpreter a script names in its `#!` line, as the kernel and env find it: an absolute
 * path, or for `#!/usr/bin/env [options] NAME`, NAME on the server's PATH. Undefined when the file
 * is no script or the interpreter cannot be found (the launch then fails and says so).
 */
function shebangInterpreter(file: string, path: string | undefined, fs: FsProbe): string | undefined {
  const line = fs.firstLine(file);
  if (!line?.startsWith("#!")) return undefined;
  const words = line.slice(2).trim().split(/\s+/).filter(Boolean);
  const first = words[0];
  if (first === undefined || !posix.isAbsolute(first)) return undefined;
  if (basename(first) !== "env") return first;
  let prog: string | undefined;
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (ENV_VALUE_OPTIONS.has(w)) i++;
    else if (!w.startsWith("-") && !w.includes("=")) {
      prog = w;
      break;
    }
  }
  if (prog === undefined) return undefined;
  if (prog.includes("/")) return posix.isAbsolute(prog) ? prog : undefined;
  for (const dir of (path ?? "").split(":")) {
    if (posix.isAbsolute(dir) && fs.kind(posix.join(dir, prog)) === "file") return posix.join(dir, prog);
  }
  return undefined;
}

/** How many `#!` hops are followed (a shim that runs a script that names an interpreter). */
const SHEBANG_HOPS = 3;

export function runtimeNeeds(input: RuntimeInput): RuntimeNeeds {
  const { home, fs } = input;
  const paths: RuntimePath[] = [];
  const env: Record<string, string> = {};
  // One entry per place: a folder takes the place of what it holds.
  const add = (path: string, why: string) => {
    if (paths.some((p) => isInside(path, p.path))) return;
    for (let i = paths.length - 1; i >= 0; i--) if (isInside((paths[i] as RuntimePath).path, path)) paths.splice(i, 1);
    paths.push({ path, why });
  };
  const name = basename(input.command);

  // The command, and the interpreter of each script on the way (its `#!` line, followed).
  let program = posix.isAbsolute(input.command) && fs.kind(input.command) === "file" ? input.command : undefined;
  for (let hop = 0; program !== undefined && hop <= SHEBANG_HOPS; hop++) {
    const label = basename(program);
    const real = fs.realpath(program);
    for (const file of new Set([program, real])) {
      const root = installRoot(file, home);
      if (root) add(root, hop === 0 ? `the installation of ${label}` : `the installation of ${label}, the interpreter of ${name}`);
      else add(file, hop === 0 ? `the command ${label}` : `${label}, the interpreter of ${name}`);
    }
    const next = shebangInterpreter(real, input.env.PATH, fs);
    if (next === undefined || fs.kind(next) !== "file") break;
    // A script run by node or python finds its modules in its project, as a script argument does.
    if (INTERPRETERS.test(basename(fs.realpath(next)))) {
      const project = projectRoot(real, home, fs);
      if (project) add(project, `the project of ${basename(real)}`);
    }
    program = next;
  }

  if (name === "npx" || name === "npm") {
    const cache = input.env.npm_config_cache || join(home, ".npm");
    if (fs.kind(cache) === "dir") add(cache, "npm's cache (read-only: packages already installed run offline)");
    env.npm_config_cache = cache;
    env.npm_config_update_notifier = "false";
    env.npm_config_fund = "false";
    env.npm_config_audit = "false";
    // Without a network, say so up front: npm then fails at once with ENOTCACHED instead of
    // trying the registry.
    if (!input.online) env.npm_config_offline = "true";
  }

  if (name === "uvx" || name === "uv") {
    const cache = input.env.UV_CACHE_DIR || join(input.env.XDG_CACHE_HOME || join(home, ".cache"), "uv");
    const data = join(input.env.XDG_DATA_HOME || join(home, ".local", "share"), "uv");
    if (fs.kind(cache) === "dir") add(cache, "uv's cache (read-only)");
    if (fs.kind(data) === "dir") add(data, "uv's tools and Python installations (read-only)");
    env.UV_CACHE_DIR = cache;
    if (!input.online) env.UV_OFFLINE = "1";
  }

  if (INTERPRETERS.test(name)) {
    for (const a of input.args) {
      if (a.startsWith("-")) continue;
      const file = posix.resolve(input.cwd, a);
      if (fs.kind(file) !== "file") continue;
      const real = fs.realpath(file);
      add(projectOf(real, home, fs), `the script ${basename(file)} and its project`);
      break;
    }
  }
  return { paths, env };
}
