// Opening the sign-in page: $BROWSER when set (a command, "%s" standing for the URL; "none" opens
// nothing), else the desktop's opener (open, xdg-open when a display is there, rundll32). The URL
// is always printed too, so a terminal without a browser (SSH, a container) can still sign in from
// another machine. The browser is started detached and never waited for.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

/** The command (argv) that would open `url`, or undefined when there is no browser to open. */
export function browserCommand(url: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] | undefined {
  const chosen = (env.BROWSER ?? "").split(":")[0]?.trim() ?? "";
  if (chosen !== "") {
    if (/^(none|false|0|no)$/i.test(chosen)) return undefined;
    const words = chosen.split(/\s+/);
    return words.some((w) => w.includes("%s")) ? words.map((w) => w.replace(/%s/g, url)) : [...words, url];
  }
  if (platform === "darwin") return ["open", url];
  if (platform === "win32") return ["rundll32", "url.dll,FileProtocolHandler", url];
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return undefined;
  return onPath("xdg-open", env) ? ["xdg-open", url] : undefined;
}

/** Starts the browser; true when a command was started (it may still fail on its own). */
export function openBrowser(url: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const argv = browserCommand(url, env);
  if (!argv || argv[0] === undefined) return false;
  try {
    const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: "ignore", env });
    child.on("error", () => undefined); // the printed URL is the fallback
    child.unref();
    return true;
  } catch {
    return false;
  }
}

function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && existsSync(join(dir, command)));
}
