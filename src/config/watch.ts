// Watching the config file of a running gateway. Editors save in different ways (write in place,
// truncate then write, write a temp file and rename it over the original, replace a symlink's
// target), so the directory is watched rather than the file's inode, events are debounced, and a
// slow stat poll backs up platforms where directory events are unreliable. Only a change of the
// file's content counts; a valid new content is handed over, an invalid one is reported as one
// line (once per distinct content) and the running config stays.
import { createHash } from "node:crypto";
import { readFileSync, realpathSync, unwatchFile, watch, watchFile, type FSWatcher } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { ConfigError } from "./errors.js";
import { parseConfigText } from "./load.js";
import { formatFromPath } from "./paths.js";
import type { Config } from "./schema.js";

export interface ConfigWatchOptions {
  /** The config file as the gateway was started with it (a symlink is followed). */
  path: string;
  /** How the file is named in messages. */
  label?: string;
  /** A valid config whose content differs from the last one seen. May throw: reported via onError. */
  onConfig(config: Config, why: "changed" | "signal"): void;
  /** One line: why the file on disk was not applied (the running config stays). */
  onError(message: string): void;
  /** Quiet period after the last file event before the file is read (default 200 ms). */
  debounceMs?: number;
  /** Stat poll interval of the fallback watcher (default 2 s). */
  pollMs?: number;
}

export interface ConfigWatcher {
  /** Re-reads the file now (SIGHUP). Applies it even when the content looks unchanged. */
  reload(): void;
  close(): void;
}

export function watchConfig(opts: ConfigWatchOptions): ConfigWatcher {
  const label = opts.label ?? opts.path;
  const format = formatFromPath(opts.path);
  const debounceMs = opts.debounceMs ?? 200;
  let lastHash: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let again: "changed" | "signal" | undefined;
  let closed = false;
  const watchers: FSWatcher[] = [];

  const check = async (why: "changed" | "signal"): Promise<void> => {
    if (running) {
      again = again === "signal" ? "signal" : why;
      return;
    }
    running = true;
    try {
      let text: string;
      try {
        text = await readFile(opts.path, "utf8");
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // Between an editor's unlink and its rename the file may be briefly missing: say nothing
        // unless the file stays gone until the next event or a signal asks explicitly.
        if (code === "ENOENT" && why !== "signal") return;
        report(`cannot read ${label} (${code ?? (err as Error).message})`, `read:${code}`);
        return;
      }
      const hash = createHash("sha256").update(text).digest("hex");
      if (hash === lastHash && why !== "signal") return;
      lastHash = hash;
      let config: Config;
      try {
        config = parseConfigText(text, format, label);
      } catch (err) {
        report(err instanceof ConfigError ? oneLine(err.message) : (err as Error).message, undefined);
        return;
      }
      try {
        opts.onConfig(config, why);
      } catch (err) {
        report(oneLine((err as Error).message), undefined);
      }
    } finally {
      running = false;
      const next = again;
      again = undefined;
      if (next && !closed) void check(next);
    }
  };

  let lastReport: string | undefined;
  const report = (message: string, key: string | undefined): void => {
    // Content-level problems are reported once per content (lastHash gates them); a read error
    // repeats on every poll, so it is reported once until something else happens.
    if (key !== undefined && lastReport === key) return;
    lastReport = key;
    opts.onError(`${message}; keeping the running config`);
  };

  const schedule = (): void => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => void check("changed"), debounceMs);
    timer.unref();
  };

  // The hash of what is on disk now, so only later edits count.
  try {
    lastHash = createHash("sha256").update(readFileSync(opts.path, "utf8")).digest("hex");
  } catch {
    // missing now: its first appearance counts as an edit
  }

  const dirs = new Set<string>([dirname(opts.path)]);
  const names = new Set<string>([basename(opts.path)]);
  try {
    const real = realpathSync(opts.path);
    dirs.add(dirname(real));
    names.add(basename(real));
  } catch {
    // not there yet: the poll below notices when it appears
  }
  for (const dir of dirs) {
    try {
      const w = watch(dir, { persistent: false }, (_event, file) => {
        if (file === null || names.has(file.toString())) schedule();
      });
      w.on("error", () => w.close());
      watchers.push(w);
    } catch {
      // a directory we cannot watch: the poll still works
    }
  }
  const onPoll = (): void => schedule();
  watchFile(opts.path, { interval: opts.pollMs ?? 2000, persistent: false }, onPoll);

  return {
    reload: () => {
      if (closed) return;
      clearTimeout(timer);
      void check("signal");
    },
    close: () => {
      closed = true;
      clearTimeout(timer);
      for (const w of watchers) w.close();
      unwatchFile(opts.path, onPoll);
    },
  };
}

/** Several issues on one line, so a bad edit is always exactly one log line. */
function oneLine(message: string): string {
  const lines = message.split("\n").filter((l) => l.trim() !== "");
  if (lines.length <= 1) return lines[0] ?? message;
  return `${lines[0]} (and ${lines.length - 1} more: ${lines.slice(1).join("; ")})`;
}
