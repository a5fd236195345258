// Is bubblewrap here, and does it work? Installed is not enough: user namespaces may be disabled
// by a sysctl, restricted by AppArmor (Ubuntu 23.10+), blocked by a container runtime's seccomp
// profile, or /proc may not be mountable in a container. So the first sandboxed start runs one
// trial sandbox with every feature a real one uses (all namespaces, the seccomp filter, /proc,
// the network namespace's loopback) and, when it fails, reads bwrap's own message and the
// kernel's switches to name the real cause and its fix. A working result is kept for the
// process's lifetime; a failure is asked again next time (the operator may just have fixed it).
import { execFile, spawn } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { OFF_HINT, SandboxError } from "./errors.js";
import { seccompProgram } from "./seccomp.js";

export interface BwrapInfo {
  path: string;
  /** "0.8.0" */
  version: string;
  /** --disable-userns (0.8.0+): no nested user namespaces inside. */
  disableUserns: boolean;
  /** --perms before --tmpfs (0.5.0+): masks can be made unreadable rather than just empty. */
  tmpfsPerms: boolean;
}

/** Environment variable naming the bwrap binary, for installs outside PATH. */
export const BWRAP_ENV = "MCPHUB_BWRAP";
const TRIAL_TIMEOUT_MS = 10_000;

const INSTALL_FIX = `install bubblewrap (Debian/Ubuntu: sudo apt install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap), ${OFF_HINT}`;

function executable(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The bwrap binary: $MCPHUB_BWRAP, else `bwrap` on the gateway's PATH. */
function findBwrap(env: NodeJS.ProcessEnv): string {
  const override = env[BWRAP_ENV];
  if (override !== undefined && override !== "") {
    if (!executable(override)) throw new SandboxError(`${BWRAP_ENV} is ${override}, which is not an executable file`, `point it at bubblewrap's bwrap or unset it, ${OFF_HINT}`);
    return override;
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const p = join(dir, "bwrap");
    if (executable(p)) return p;
  }
  throw new SandboxError("bubblewrap (bwrap) is not installed (not found on PATH)", INSTALL_FIX);
}

const cache = new Map<string, Promise<BwrapInfo>>();

/** bwrap's location and features, after one successful trial sandbox; throws SandboxError. */
export function bubblewrap(env: NodeJS.ProcessEnv = process.env): Promise<BwrapInfo> {
  const path = findBwrap(env);
  let pending = cache.get(path);
  if (!pending) {
    pending = check(path);
    cache.set(path, pending);
    // Only success is remembered.
    pending.catch(() => cache.delete(path));
  }
  return pending;
}

async function check(path: string): Promise<BwrapInfo> {
  const version = await bwrapVersion(path);
  const info: BwrapInfo = { path, version, disableUserns: atLeast(version, [0, 8, 0]), tmpfsPerms: atLeast(version, [0, 5, 0]) };
  const trueBin = ["/usr/bin/true", "/bin/true"].find(existsSync) ?? "true";
  const args = [
    "--unshare-all",
    "--unshare-user",
    ...(info.disableUserns ? ["--disable-userns"] : []),
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--tmpfs",
    "/tmp",
  ];
  const program = seccompProgram({ denyIp: true });
  if (program) args.push("--seccomp", "3");
  const { code, stderr } = await run(path, [...args, "--", trueBin], program);
  if (code !== 0) throw explainBwrapFailure(stderr, realSwitches());
  return info;
}

function bwrapVersion(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(path, ["--version"], { timeout: TRIAL_TIMEOUT_MS }, (err, stdout, stderr) => {
      const m = /(\d+\.\d+(?:\.\d+)?)/.exec(`${stdout}`);
      if (m?.[1]) return resolve(m[1]);
      reject(new SandboxError(`${path} --version failed${err ? ` (${err.message.split("\n")[0]})` : ""}${stderr ? `: ${String(stderr).trim().slice(0, 200)}` : ""}`, INSTALL_FIX));
    });
  });
}

function run(path: string, args: string[], fd3: Buffer | undefined): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(path, args, { stdio: ["ignore", "ignore", "pipe", ...(fd3 ? (["pipe"] as const) : [])] });
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString("utf8");
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), TRIAL_TIMEOUT_MS);
    timer.unref();
    if (fd3) {
      const w = child.stdio[3] as NodeJS.WritableStream | null;
      w?.on("error", () => undefined);
      w?.end(fd3);
    }
    child.once("error", (err) => {
      clearTimeout(timer);
      resolve({ code: -1, stderr: `bwrap: ${err.message}` });
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

function atLeast(version: string, min: [number, number, number]): boolean {
  const v = version.split(".").map((n) => Number(n));
  for (let i = 0; i < 3; i++) {
    const a = v[i] ?? 0;
    const b = min[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/** The kernel and container switches that decide whether unprivileged namespaces work. */
export interface NamespaceSwitches {
  /** /proc/sys/kernel/unprivileged_userns_clone (Debian's patch); undefined where absent. */
  unprivilegedUsernsClone?: number;
  /** /proc/sys/user/max_user_namespaces */
  maxUserNamespaces?: number;
  /** /proc/sys/kernel/apparmor_restrict_unprivileged_userns (Ubuntu 23.10+) */
  apparmorRestrict?: number;
  /** Running inside a container (/.dockerenv, /run/.containerenv, or $container). */
  container: boolean;
}

function readNumber(path: string): number | undefined {
  try {
    const n = Number(readFileSync(path, "utf8").trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

export function realSwitches(): NamespaceSwitches {
  const s: NamespaceSwitches = { container: existsSync("/.dockerenv") || existsSync("/run/.containerenv") || process.env.container !== undefined };
  const clone = readNumber("/proc/sys/kernel/unprivileged_userns_clone");
  const max = readNumber("/proc/sys/user/max_user_namespaces");
  const aa = readNumber("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  if (clone !== undefined) s.unprivilegedUsernsClone = clone;
  if (max !== undefined) s.maxUserNamespaces = max;
  if (aa !== undefined) s.apparmorRestrict = aa;
  return s;
}

/** Why user namespaces are unavailable, from the switches: the cause and its fix. */
function usernsCause(sw: NamespaceSwitches, said: string): SandboxError {
  if (sw.unprivilegedUsernsClone === 0) {
    return new SandboxError(
      `unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0; bwrap said: ${said})`,
      `enable them with \`sudo sysctl -w kernel.unprivileged_userns_clone=1\` (and put kernel.unprivileged_userns_clone=1 in /etc/sysctl.d/ to keep it), ${OFF_HINT}`,
    );
  }
  if (sw.maxUserNamespaces === 0) {
    return new SandboxError(
      `user namespaces are disabled (user.max_user_namespaces = 0; bwrap said: ${said})`,
      `allow them with \`sudo sysctl -w user.max_user_namespaces=15000\` (and in /etc/sysctl.d/ to keep it), ${OFF_HINT}`,
    );
  }
  if (sw.apparmorRestrict === 1) {
    return new SandboxError(
      `AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1; bwrap said: ${said})`,
      `allow bwrap with an AppArmor profile (docs/sandbox.md shows one) or run \`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\`, ${OFF_HINT}`,
    );
  }
  if (sw.container) {
    return new SandboxError(
      `this container does not allow creating namespaces (bwrap said: ${said})`,
      `run the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined (Docker/Podman), or run mcphub outside the container, ${OFF_HINT}`,
    );
  }
  return new SandboxError(`user namespaces are not available (bwrap said: ${said})`, `check that the kernel has CONFIG_USER_NS and that no security module blocks unprivileged namespaces, ${OFF_HINT}`);
}

/** bwrap's stderr (and the switches) → the cause and the fix. */
export function explainBwrapFailure(stderr: string, sw: NamespaceSwitches): SandboxError {
  const line = stderr.split("\n").map((l) => l.trim()).find((l) => l.startsWith("bwrap:")) ?? stderr.trim().split("\n")[0] ?? "";
  const said = line.replace(/^bwrap:\s*/, "").slice(0, 300) || "nothing";
  if (/No permissions to creat|setting up uid map|Creating new namespace failed|max_\*_namespaces|user namespace/i.test(said)) return usernsCause(sw, said);
  if (/Can't mount proc/i.test(said)) {
    return new SandboxError(
      `/proc cannot be mounted in a new namespace here (bwrap said: ${said})`,
      `${sw.container ? "the container masks /proc: run it with --security-opt systempaths=unconfined (Docker) or " : ""}run mcphub where /proc can be mounted, ${OFF_HINT}`,
    );
  }
  if (/loopback: Failed/i.test(said)) {
    return new SandboxError(`the network namespace's loopback could not be set up (bwrap said: ${said})`, `use network: full for this server (no network namespace), ${OFF_HINT}`);
  }
  if (/PR_SET_SECCOMP|seccomp/i.test(said)) {
    return new SandboxError(`the kernel refused the sandbox's seccomp filter (bwrap said: ${said})`, `use a kernel with CONFIG_SECCOMP_FILTER, ${OFF_HINT}`);
  }
  if (/Can't find source path (.*?): No such file/i.test(said)) {
    const m = /Can't find source path (.*?): No such file/i.exec(said);
    return new SandboxError(`${m?.[1] ?? "a listed path"} does not exist`, `create it or remove it from sandbox.read / sandbox.write, ${OFF_HINT}`);
  }
  if (/execvp ([^:\s]+)/.test(said)) {
    const m = /execvp ([^:\s]+)/.exec(said);
    return new SandboxError(
      `the command ${m?.[1] ?? ""} could not be run inside the sandbox (bwrap said: ${said})`,
      `install it in a system folder, or list the folder it lives in (for a script, also the interpreter its #! line names) under sandbox.read, ${OFF_HINT}`,
    );
  }
  if (/Unknown option|requires|cannot be combined/i.test(said)) {
    return new SandboxError(`this bubblewrap does not support an option mcphub needs (bwrap said: ${said})`, `install bubblewrap 0.4 or newer (0.8+ recommended), ${OFF_HINT}`);
  }
  return new SandboxError(`bubblewrap failed to set up the sandbox (bwrap said: ${said})`, `see docs/sandbox.md ("When the sandbox cannot start"), ${OFF_HINT}`);
}

/** For tests: forget what was learnt about bwrap binaries. */
export function forgetBwrapChecks(): void {
  cache.clear();
}
