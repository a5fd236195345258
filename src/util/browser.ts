// Starting the user's browser on a URL or file (the status page's sign-in link, an OAuth sign-in).
// $BROWSER wins, as in Python's webbrowser: the first of a colon-separated list, its words as the
// command, "%s" standing for the target (appended when absent), and "none" meaning no browser.
// Else `open` on macOS, `rundll32 url.dll,FileProtocolHandler` on Windows (unlike `cmd /c start`
// it does not parse the `&` of a query string), and `xdg-open` when a graphical session exists.
// The browser is started detached and never waited for; callers print the target too.
import { spawn } from "node:child_process";

export type Opener = { command: string; args: (target: string) => string[] } | { why: string };

export function pickOpener(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): Opener {
  const browser = env.BROWSER?.split(":")[0]?.trim();
  if (browser) {
    if (/^(none|false|0|no)$/i.test(browser)) return { why: `BROWSER=${browser}` };
    const [command = browser, ...words] = browser.split(/\s+/);
    const templated = words.some((w) => w.includes("%s"));
    return { command, args: (t) => (templated ? words.map((w) => w.replace(/%s/g, t)) : [...words, t]) };
  }
  if (platform === "darwin") return { command: "open", args: (t) => [t] };
  if (platform === "win32") return { command: "rundll32", args: (t) => ["url.dll,FileProtocolHandler", t] };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return { why: "no graphical session here" };
  return { command: "xdg-open", args: (t) => [t] };
}

/** Starts the opener; resolves once it started (ok) or could not be started (why). */
export function launch(opener: { command: string; args: (target: string) => string[] }, target: string, env: NodeJS.ProcessEnv): Promise<{ ok: boolean; why?: string }> {
  return new Promise((resolve) => {
    const child = spawn(opener.command, opener.args(target), { detached: true, stdio: "ignore", env });
    child.once("error", (err: NodeJS.ErrnoException) =>
      resolve({ ok: false, why: err.code === "ENOENT" ? `${opener.command} is not installed` : err.message }),
    );
    child.once("spawn", () => {
      child.unref();
      resolve({ ok: true });
    });
  });
}
