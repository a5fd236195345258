// The sandbox's public surface (docs/sandbox.md). `downstream/` asks `prepareSandbox` how to
// launch a sandboxed stdio server and spawns exactly that; it never builds an argv itself. The
// parts: what is visible (layout.ts, with protected.ts and runtime.ts), the environment (env.ts),
// Linux's bubblewrap (bwrap.ts, bwrap-support.ts, seccomp.ts) and macOS's sandbox-exec
// (seatbelt.ts). A sandbox that cannot be set up throws SandboxError (cause and fix); there is
// no fallback to running the server unconfined.
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { dataDir, homeDir } from "../config/paths.js";
import { ROOTS_ENTRY, type SandboxNetwork, type SandboxSettings } from "../config/sandbox.js";
import { bwrapArgs } from "./bwrap.js";
import { bubblewrap, explainBwrapFailure, realSwitches, type BwrapInfo } from "./bwrap-support.js";
import { passedNames, sandboxEnv } from "./env.js";
import { OFF_HINT, SandboxError } from "./errors.js";
import { realFs, type FsProbe } from "./fs-probe.js";
import { planLayout, type Layout } from "./layout.js";
import { protectedPaths } from "./protected.js";
import { SANDBOX_EXEC, seatbeltArgs, seatbeltProfile } from "./seatbelt.js";
import { seccompProgram, seccompSupported } from "./seccomp.js";

export { SandboxError } from "./errors.js";
export { bubblewrap, BWRAP_ENV, explainBwrapFailure, type BwrapInfo } from "./bwrap-support.js";
export { planLayout, type Layout, type Mount } from "./layout.js";
export { protectedPaths, type ProtectedPath } from "./protected.js";

export type SandboxBackend = "bubblewrap" | "sandbox-exec";

export interface SandboxRequest {
  server: string;
  settings: SandboxSettings;
  /** The command as configured, and as found on PATH by the caller (when it was). */
  command: string;
  resolvedCommand?: string | undefined;
  args: string[];
  /** The server's environment after env isolation. */
  env: Record<string, string>;
  /** Variable names configured for this server (its `env:` and vault secrets): always passed. */
  ownEnv: readonly string[];
  /** The configured working directory (absolute). */
  cwd?: string | undefined;
  /**
   * The client's roots as local paths, for servers that list `roots`. Throws (with a reason) when
   * there is no client whose roots apply. Omitted: no client at all (a probe), roots count as none.
   */
  roots?: (signal?: AbortSignal) => Promise<string[]>;
  /** The gateway's environment: HOME, the data dir, PATH and MCPHUB_BWRAP. */
  gatewayEnv?: NodeJS.ProcessEnv;
  gatewayCwd?: string;
  /** More paths never to show (the configured agents' harness files). */
  protect?: readonly string[];
  platform?: NodeJS.Platform;
  fs?: FsProbe;
  signal?: AbortSignal;
}

/** What one sandboxed start looks like, for status surfaces (paths `~`-abbreviated). */
export interface SandboxSummary {
  backend: SandboxBackend;
  version?: string;
  network: SandboxNetwork;
  read: string[];
  write: string[];
  /** Shown read-only for the runtime (its installation, npm's cache, the cwd). */
  runtime: string[];
  /** Protected paths that were covered where something shown would have revealed them. */
  hidden: string[];
  /** Variables passed beyond the fixed base (the server's own and sandbox.env). */
  env: string[];
  /** The client's roots applied, when the settings list `roots`. */
  roots?: string[];
  notes: string[];
}

export interface LaunchPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Where the launcher itself starts (the sandbox changes directory inside). */
  cwd: string;
  /** Written to the child's fds 3, 4, ... and closed (the seccomp filter). */
  fds: Buffer[];
  summary: SandboxSummary;
  /** Called once the process has ended (removes a private TMPDIR on macOS). */
  cleanup?: () => void;
}

/** Whether the settings list `roots` in read or write. */
function usesRoots(s: SandboxSettings): boolean {
  return (s.read ?? []).includes(ROOTS_ENTRY) || (s.write ?? []).includes(ROOTS_ENTRY);
}

let maskFile: string | undefined;
/** An empty file with mode 0, bound over protected files (made once per process). */
function unreadableFile(): string {
  if (maskFile) return maskFile;
  const dir = mkdtempSync(join(tmpdir(), "mcphub-sandbox-"));
  const file = join(dir, "unreadable");
  writeFileSync(file, "");
  chmodSync(file, 0o000);
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  maskFile = file;
  return file;
}

async function resolveRoots(req: SandboxRequest, notes: string[]): Promise<string[] | undefined> {
  if (!usesRoots(req.settings)) return undefined;
  if (!req.roots) {
    notes.push("roots: none here (no client); a client's roots are shown when it connects");
    return [];
  }
  try {
    return await req.roots(req.signal);
  } catch (err) {
    const key = (req.settings.write ?? []).includes(ROOTS_ENTRY) ? "write" : "read";
    throw new SandboxError(
      `sandbox.${key} lists roots, but ${(err as Error).message}`,
      `in the daemon give the server connection: per-session (each session's process gets that session's roots), or pin its roots with roots: [...], or list paths instead of roots, ${OFF_HINT}`,
    );
  }
}

/** The layout for a request (no launcher involved): what `doctor` shows and the backends use. */
async function layoutFor(req: SandboxRequest): Promise<{ layout: Layout; roots: string[] | undefined }> {
  const env = req.gatewayEnv ?? process.env;
  const home = homeDir(env);
  const notes: string[] = [];
  const roots = await resolveRoots(req, notes);
  const layout = planLayout({
    settings: req.settings,
    roots,
    home,
    cwd: req.cwd,
    gatewayCwd: req.gatewayCwd ?? process.cwd(),
    command: req.resolvedCommand ?? req.command,
    args: req.args,
    env: req.env,
    protect: protectedPaths({ home, dataDir: dataDir(env), env, extra: req.protect ?? [] }),
    fs: req.fs ?? realFs,
  });
  layout.notes.unshift(...notes);
  return { layout, roots };
}

function backendOf(platform: NodeJS.Platform): SandboxBackend {
  if (platform === "linux") return "bubblewrap";
  if (platform === "darwin") {
    if (!existsSync(SANDBOX_EXEC)) throw new SandboxError(`${SANDBOX_EXEC} is missing`, "it ships with macOS; restore it, or set sandbox: off for this server (it then runs with your full rights)");
    return "sandbox-exec";
  }
  throw new SandboxError(`sandboxes are not available on ${platform === "win32" ? "Windows" : platform}`, "set sandbox: off for this server (it then runs with your full rights)");
}

function summarize(req: SandboxRequest, layout: Layout, roots: string[] | undefined, backend: SandboxBackend, info: BwrapInfo | undefined): SandboxSummary {
  return {
    backend,
    ...(info ? { version: info.version } : {}),
    network: req.settings.network ?? "none",
    read: layout.read,
    write: layout.write,
    runtime: layout.runtime,
    hidden: layout.hidden,
    env: passedNames({ own: req.ownEnv, allow: req.settings.env ?? [] }),
    ...(roots !== undefined ? { roots } : {}),
    notes: layout.notes,
  };
}

/**
 * What a start would look like, without starting anything (for `doctor`): the backend is checked
 * for real (bubblewrap's trial sandbox) and the layout planned. Throws SandboxError.
 */
export async function describeSandbox(req: SandboxRequest): Promise<SandboxSummary> {
  const platform = req.platform ?? process.platform;
  const backend = backendOf(platform);
  const info = backend === "bubblewrap" ? await bubblewrap(req.gatewayEnv ?? process.env) : undefined;
  const { layout, roots } = await layoutFor(req);
  return summarize(req, layout, roots, backend, info);
}

/** How to launch this server sandboxed; throws SandboxError when the sandbox cannot be set up. */
export async function prepareSandbox(req: SandboxRequest): Promise<LaunchPlan> {
  const platform = req.platform ?? process.platform;
  const backend = backendOf(platform);
  const network = req.settings.network ?? "none";
  const info = backend === "bubblewrap" ? await bubblewrap(req.gatewayEnv ?? process.env) : undefined;
  const { layout, roots } = await layoutFor(req);
  const summary = summarize(req, layout, roots, backend, info);
  const command = req.resolvedCommand ?? req.command;
  if (info) {
    const program = seccompProgram({ denyIp: network === "none" });
    if (!seccompSupported()) summary.notes.push(`no seccomp filter on ${process.arch}: the kernel keyring stays reachable${network === "none" ? ", and none behaves as loopback" : ""}`);
    const env = sandboxEnv({ env: req.env, own: req.ownEnv, allow: req.settings.env ?? [], network, set: { ...layout.env, TMPDIR: "/tmp" } });
    const args = bwrapArgs({ layout, network, bwrap: info, maskFile: unreadableFile(), ...(program ? { seccompFd: 3 } : {}), command, args: req.args });
    return { command: info.path, args, env, cwd: "/", fds: program ? [program] : [], summary };
  }
  // macOS: a private TMPDIR per start, removed when the process has ended.
  // Seatbelt matches resolved paths, and macOS's tmpdir() is under the /var -> /private/var link.
  const tmp = realpathSync(mkdtempSync(join(tmpdir(), `mcphub-${req.server.replace(/[^A-Za-z0-9_.-]/g, "_")}-`)));
  const profile = seatbeltProfile({ layout, network, tmpdir: tmp });
  const launch = seatbeltArgs(profile, command, req.args);
  const env = sandboxEnv({ env: req.env, own: req.ownEnv, allow: req.settings.env ?? [], network, set: { ...layout.env, TMPDIR: tmp } });
  return {
    command: launch.file,
    args: launch.args,
    env,
    cwd: layout.chdir === "/tmp" ? tmp : layout.chdir,
    fds: [],
    summary,
    cleanup: () => rmSync(tmp, { recursive: true, force: true }),
  };
}

/**
 * A sandboxed process that exited at once: when its stderr is bubblewrap's own complaint, or npx
 * unable to install a package inside, the cause and fix in words ("sandbox: ..."); undefined when
 * the server itself failed.
 */
export function explainLaunchFailure(stderr: string, launch?: { command: string; args: readonly string[]; network?: SandboxNetwork }): string | undefined {
  if (stderr.split("\n").some((l) => l.startsWith("bwrap:"))) return explainBwrapFailure(stderr, realSwitches()).message;
  const tool = launch ? basename(launch.command) : "";
  if ((tool === "npx" || tool === "npm") && /\b(ENOTCACHED|EROFS|EAI_AGAIN|ENOTFOUND|EACCES)\b/.test(stderr) && /npm (error|ERR!)/.test(stderr)) {
    const code = /\b(ENOTCACHED|EROFS|EAI_AGAIN|ENOTFOUND|EACCES)\b/.exec(stderr)?.[1] ?? "an error";
    const pkg = npxPackage(launch?.args ?? []) ?? "the package";
    const why = launch?.network === "full" ? "npm's cache is read-only there" : "npm's cache is read-only there and the network is off";
    return new SandboxError(
      `npx could not find ${pkg} installed (npm said: ${code}), and it cannot download it inside the sandbox (${why})`,
      `install it in the server's cwd (npm install ${pkg}) or globally, ${OFF_HINT}`,
    ).message;
  }
  return undefined;
}

/** The package an `npx` command line runs: the first argument that is not an option. */
function npxPackage(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "-p" || a === "--package") return args[i + 1];
    if (a.startsWith("--package=")) return a.slice("--package=".length);
    if (!a.startsWith("-")) return a;
  }
  return undefined;
}

/** A summary as one line, for doctor and logs. */
export function summaryLine(s: SandboxSummary): string {
  const parts = [`network ${s.network}`, `write ${s.write.length ? s.write.join(", ") : "nothing"}`];
  if (s.read.length) parts.push(`read ${s.read.join(", ")}`);
  if (s.roots !== undefined) parts.push(`roots ${s.roots.length ? s.roots.join(", ") : "none yet"}`);
  if (s.runtime.length) parts.push(`runtime ${s.runtime.join(", ")}`);
  if (s.env.length) parts.push(`env ${s.env.join(", ")}`);
  if (s.hidden.length) parts.push(`covered ${s.hidden.length} protected path${s.hidden.length === 1 ? "" : "s"}`);
  return parts.join("; ");
}
