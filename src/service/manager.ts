// `mcphub service install | uninstall | status`: writes the systemd user unit or launchd agent
// (units.ts) and asks the platform's service manager to load it. The manager is the platform's
// own command (`systemctl --user`, `launchctl`), run without a shell; when it cannot be reached
// (no user session bus in a container, say) the file is still written and the answer says what
// to run by hand. A unit is only ever stopped or disabled when the manager has loaded *this* file,
// so uninstalling from another HOME never touches a service installed elsewhere.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { dirname, join } from "node:path";
import { launchdLabel, launchdPlist, systemdUnit, type ServiceSpec } from "./units.js";

export type ServicePlatform = "systemd" | "launchd";

export const SERVICE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The service manager of this OS, or undefined where mcphub has none (Windows). */
export function servicePlatform(platform: NodeJS.Platform = process.platform): ServicePlatform | undefined {
  if (platform === "linux") return "systemd";
  if (platform === "darwin") return "launchd";
  return undefined;
}

/** Where the unit / agent file of `name` lives. */
export function serviceFile(platform: ServicePlatform, name: string, env: NodeJS.ProcessEnv, home: string): string {
  if (platform === "launchd") return join(home, "Library", "LaunchAgents", `${launchdLabel(name)}.plist`);
  const configHome = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith("/") ? env.XDG_CONFIG_HOME : join(home, ".config");
  return join(configHome, "systemd", "user", `${name}.service`);
}

/** Where the logs are, in words and as a command. */
export function logsHint(platform: ServicePlatform, name: string, home: string): string {
  return platform === "systemd" ? `journalctl --user -u ${name} -e` : `tail -f ${launchdLogPath(name, home)}`;
}

export function launchdLogPath(name: string, home: string): string {
  return join(home, "Library", "Logs", "mcphub", `${name}.log`);
}

export function serviceText(platform: ServicePlatform, spec: ServiceSpec): string {
  return platform === "systemd" ? systemdUnit(spec) : launchdPlist(spec);
}

interface Run {
  ok: boolean;
  stdout: string;
  /** First line of stderr (or the spawn error), for messages. */
  error?: string;
}

function run(cmd: string, args: string[], timeoutMs = 15_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, encoding: "utf8" }, (err, stdout, stderr) => {
      if (!err) return resolve({ ok: true, stdout });
      const e = err as NodeJS.ErrnoException;
      const line = (stderr || "").split("\n").find((l) => l.trim() !== "")?.trim();
      resolve({ ok: false, stdout: stdout ?? "", error: e.code === "ENOENT" ? `${cmd} is not installed` : (line ?? e.message.split("\n")[0] ?? "failed") });
    });
  });
}

const uid = () => {
  try {
    return userInfo().uid;
  } catch {
    return process.getuid?.() ?? 0;
  }
};

/** Whether systemd keeps this user's services running without a login session (loginctl enable-linger). */
export function lingerEnabled(): boolean | undefined {
  try {
    return existsSync(join("/var/lib/systemd/linger", userInfo().username));
  } catch {
    return undefined;
  }
}

export interface InstallResult {
  file: string;
  /** An older file was replaced. */
  replaced: boolean;
  /** The manager loaded and started it. */
  started: boolean;
  /** Why it could not be started, when it was asked to be. */
  error?: string;
  /** What to run by hand to start it (when not started). */
  manual: string[];
}

export async function installService(platform: ServicePlatform, spec: ServiceSpec, file: string, opts: { start: boolean }): Promise<InstallResult> {
  const text = serviceText(platform, spec);
  const replaced = existsSync(file);
  await mkdir(dirname(file), { recursive: true, mode: 0o755 });
  // Not secret (nothing secret is in it), and service managers expect ordinary permissions.
  await writeFile(file, text, { mode: 0o644 });
  const manual =
    platform === "systemd"
      ? ["systemctl --user daemon-reload", `systemctl --user enable --now ${spec.name}.service`]
      : [`launchctl bootstrap gui/${uid()} ${file}`];
  if (!opts.start) return { file, replaced, started: false, manual };
  if (platform === "systemd") {
    const reload = await run("systemctl", ["--user", "daemon-reload"]);
    if (!reload.ok) return { file, replaced, started: false, error: `systemctl --user daemon-reload: ${reload.error}`, manual };
    // restart, not just start: a replaced unit must run the new command line.
    const enable = await run("systemctl", ["--user", "enable", `${spec.name}.service`]);
    const start = enable.ok ? await run("systemctl", ["--user", "restart", `${spec.name}.service`]) : enable;
    if (!start.ok) return { file, replaced, started: false, error: `systemctl --user enable/restart ${spec.name}.service: ${start.error}`, manual };
    return { file, replaced, started: true, manual: [] };
  }
  await run("launchctl", ["bootout", `gui/${uid()}/${launchdLabel(spec.name)}`]);
  const boot = await run("launchctl", ["bootstrap", `gui/${uid()}`, file]);
  if (!boot.ok) return { file, replaced, started: false, error: `launchctl bootstrap: ${boot.error}`, manual };
  return { file, replaced, started: true, manual: [] };
}

export interface ManagerState {
  /** The manager answered about this very file. */
  known: boolean;
  /** "active", "inactive", "failed", "activating", ... (systemd), "running" / "not running" (launchd). */
  active?: string;
  enabled?: string;
  pid?: number;
  restarts?: number;
  /** Why the manager could not be asked. */
  error?: string;
}

/** What the service manager says about the unit of `name` loaded from `file`. */
export async function managerState(platform: ServicePlatform, name: string, file: string): Promise<ManagerState> {
  if (platform === "systemd") {
    const show = await run("systemctl", ["--user", "show", `${name}.service`, "-p", "FragmentPath,ActiveState,SubState,UnitFileState,MainPID,NRestarts,LoadState"]);
    if (!show.ok) return { known: false, error: `systemctl --user: ${show.error}` };
    const props = Object.fromEntries(
      show.stdout
        .split("\n")
        .filter((l) => l.includes("="))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    if (props.LoadState === "not-found" || props.FragmentPath !== file) return { known: false };
    const pid = Number(props.MainPID);
    return {
      known: true,
      active: `${props.ActiveState}${props.SubState && props.SubState !== props.ActiveState ? ` (${props.SubState})` : ""}`,
      ...(props.UnitFileState ? { enabled: props.UnitFileState } : {}),
      ...(pid > 0 ? { pid } : {}),
      ...(props.NRestarts !== undefined && props.NRestarts !== "" ? { restarts: Number(props.NRestarts) } : {}),
    };
  }
  const print = await run("launchctl", ["print", `gui/${uid()}/${launchdLabel(name)}`]);
  if (!print.ok) return { known: false, ...(/not installed/.test(print.error ?? "") ? { error: print.error } : {}) };
  if (!print.stdout.includes(file)) return { known: false };
  const pid = /\bpid = (\d+)/.exec(print.stdout)?.[1];
  return { known: true, active: pid ? "running" : "not running", ...(pid ? { pid: Number(pid) } : {}) };
}

export interface UninstallResult {
  file: string;
  removed: boolean;
  /** The manager had it loaded and was told to stop it. */
  stopped: boolean;
  error?: string;
}

export async function uninstallService(platform: ServicePlatform, name: string, file: string): Promise<UninstallResult> {
  if (!existsSync(file)) return { file, removed: false, stopped: false };
  const state = await managerState(platform, name, file);
  let stopped = false;
  let error: string | undefined;
  if (state.known) {
    const r =
      platform === "systemd"
        ? await run("systemctl", ["--user", "disable", "--now", `${name}.service`])
        : await run("launchctl", ["bootout", `gui/${uid()}/${launchdLabel(name)}`]);
    stopped = r.ok;
    if (!r.ok) error = r.error;
  }
  await rm(file, { force: true });
  if (platform === "systemd" && state.known) await run("systemctl", ["--user", "daemon-reload"]);
  return { file, removed: true, stopped, ...(error ? { error } : {}) };
}

/** The command line a unit file runs, read back (for `service status`), or undefined. */
export async function installedCommand(platform: ServicePlatform, file: string): Promise<string | undefined> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  if (platform === "systemd") return /^ExecStart=(.*)$/m.exec(text)?.[1];
  const args = /<key>ProgramArguments<\/key>\s*<array>([\s\S]*?)<\/array>/.exec(text)?.[1];
  return args
    ?.match(/<string>([\s\S]*?)<\/string>/g)
    ?.map((s) => s.replace(/<\/?string>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&"))
    .join(" ");
}
