// What exactly is spawned for a stdio server, as a pure function of the platform, so every
// platform's plan is testable anywhere.
//  - POSIX: the command as given (PATH lookup by the OS), in a process group of its own so the
//    whole tree can be signalled.
//  - Windows: a command is found through PATH and PATHEXT; `npx`, `npm` and most tool shims are
//    `.cmd` files, which Node cannot spawn without a shell (EINVAL since the 2024 batch-file fix),
//    so a `.cmd`/`.bat` runs as `cmd.exe /d /s /c "<quoted command line>"` with every argument
//    quoted for the C runtime and cmd's metacharacters escaped (the approach cross-spawn takes).
//    Windows has no POSIX process groups: the tree is ended with `taskkill /T /F` instead.
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

export interface SpawnRequest {
  command: string;
  args: string[];
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
  cwd?: string;
}

export interface SpawnPlan {
  file: string;
  args: string[];
  /** Own process group (POSIX): the tree is signalled as one. */
  detached: boolean;
  /** Windows: the arguments are already quoted for cmd.exe. */
  windowsVerbatimArguments: boolean;
  /** How the process tree is ended. */
  kill: "process-group" | "taskkill";
}

export interface FileProbe {
  /** True when `p` is an existing regular file (and, on POSIX, executable). */
  isExecutable(p: string): boolean;
}

export const realFiles: FileProbe = {
  isExecutable(p) {
    try {
      if (!statSync(p).isFile()) return false;
      if (process.platform !== "win32") accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
};

/** An env value by name, case-insensitively on Windows (`Path`, `PATHEXT`, `ComSpec`). */
function envValue(env: Record<string, string | undefined>, name: string, windows: boolean): string | undefined {
  if (!windows) return env[name];
  const key = Object.keys(env).find((k) => k.toUpperCase() === name.toUpperCase());
  return key === undefined ? undefined : env[key];
}

/**
 * The file a command name runs: itself when it holds a path separator (relative to `cwd`), else
 * the first match on PATH (with PATHEXT on Windows). Undefined when nothing matches.
 */
export function findCommand(req: Omit<SpawnRequest, "args">, files: FileProbe = realFiles): string | undefined {
  const windows = req.platform === "win32";
  const p = windows ? path.win32 : path.posix;
  const exts = windows
    ? (envValue(req.env, "PATHEXT", true) ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean).map((e) => e.toLowerCase())
    : [""];
  const variants = (base: string): string[] => {
    if (!windows) return [base];
    const ext = p.extname(base).toLowerCase();
    return ext !== "" && exts.includes(ext) ? [base] : [...exts.map((e) => `${base}${e}`), base];
  };
  const hasSeparator = windows ? /[\\/]/.test(req.command) : req.command.includes("/");
  if (hasSeparator) {
    const base = p.isAbsolute(req.command) ? req.command : p.resolve(req.cwd ?? (windows ? "C:\\" : "/"), req.command);
    return variants(base).find((c) => files.isExecutable(c));
  }
  const dirs = (envValue(req.env, "PATH", windows) ?? "").split(windows ? ";" : ":").filter(Boolean);
  for (const dir of dirs) {
    const found = variants(p.join(dir.replace(/^"(.*)"$/, "$1"), req.command)).find((c) => files.isExecutable(c));
    if (found) return found;
  }
  return undefined;
}

// cmd.exe metacharacters, escaped with ^ (outside and inside the quoted arguments alike).
const CMD_META = /([()\][%!^"`<>&|;, *?])/g;

/** One argument quoted for the C runtime's parser, then escaped for cmd.exe. */
export function quoteForCmd(arg: string, doubleEscape: boolean): string {
  // Backslashes before a quote are doubled and the quote escaped; backslashes at the end are
  // doubled because the closing quote follows; all other backslashes are literal.
  let quoted = arg.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\*)$/, "$1$1");
  quoted = `"${quoted}"`.replace(CMD_META, "^$1");
  // A node_modules/.bin shim re-parses its arguments through cmd once more.
  return doubleEscape ? quoted.replace(CMD_META, "^$1") : quoted;
}

export function planSpawn(req: SpawnRequest, files: FileProbe = realFiles): SpawnPlan {
  if (req.platform !== "win32") {
    return { file: req.command, args: req.args, detached: true, windowsVerbatimArguments: false, kill: "process-group" };
  }
  const resolved = findCommand(req, files);
  const direct = { detached: false, windowsVerbatimArguments: false, kill: "taskkill" as const };
  if (resolved === undefined) return { file: req.command, args: req.args, ...direct }; // spawn reports ENOENT
  if (!/\.(cmd|bat)$/i.test(resolved)) return { file: resolved, args: req.args, ...direct };
  const shim = /node_modules[\\/]\.bin[\\/][^\\/]+\.cmd$/i.test(resolved);
  const line = [path.win32.normalize(resolved).replace(CMD_META, "^$1"), ...req.args.map((a) => quoteForCmd(a, shim))].join(" ");
  return {
    file: envValue(req.env, "ComSpec", true) ?? "cmd.exe",
    args: ["/d", "/s", "/c", `"${line}"`],
    detached: false,
    windowsVerbatimArguments: true,
    kill: "taskkill",
  };
}
