// Watching the config file of a running gateway. Editors save in different ways (write in place,
// truncate then write, write a temp file and rename it over the original, replace a symlink's
// target), so the directory is watched rather than the file's inode, events are debounced, and a
// slow stat poll backs up platforms where directory events are unreliable. Only a change of the
// file's content counts, and only once the content has stopped changing (a save in progress is
// read again until two readings agree). A valid new content is handed over, an invalid one is
// reported as one line (once per distinct content) and the running config stays. A complete file
// that would empty the config (blank, or no servers or no agents left) is what a truncated save
// looks like, so it is held until the file is saved again or SIGHUP confirms it.
import { createHash } from "node:crypto";
import { readFileSync, realpathSync, unwatchFile, watch, watchFile, type FSWatcher, type Stats } from "node:fs";
import { open } from "node:fs/promises";
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
  /**
   * A valid config whose content differs from the last one seen. May throw: reported via onError.
   * `confirmed`: a content that empties the config, saved a second time.
   */
  onConfig(config: Config, why: "changed" | "signal" | "confirmed"): void;
  /** One line: why the file on disk was not applied (the running config stays). */
  onError(message: string): void;
  /**
   * The config in force, to tell an edit that would remove every server or every agent. Without
   * it, only an empty file is held.
   */
  running?: () => Config;
  /** One line: a complete file that is held back until it is confirmed (default: onError). */
  onHold?(message: string): void;
  /** Quiet period after the last file event before the file is read (default 200 ms). */
  debounceMs?: number;
  /**
   * The file must read the same twice this far apart before it is applied (default 300 ms): an
   * editor that truncates and writes, or writes in pieces, is still saving while it changes.
   */
  settleMs?: number;
  /** Stat poll interval of the fallback watcher (default 2 s). */
  pollMs?: number;
}

export interface ConfigWatcher {
  /** Re-reads the file now (SIGHUP). Applies it even when the content looks unchanged or empties the config. */
  reload(): void;
  close(): void;
}

/** What was read: the text, its hash, and the file's identity and times (a save changes them). */
export interface Reading {
  text: string;
  hash: string;
  stamp: string;
}

/** A file still changing after this many settle periods is read as it is then. */
const MAX_SETTLE_ROUNDS = 20;

export function watchConfig(opts: ConfigWatchOptions): ConfigWatcher {
  const label = opts.label ?? opts.path;
  const format = formatFromPath(opts.path);
  const debounceMs = opts.debounceMs ?? 200;
  const settleMs = opts.settleMs ?? 300;
  const hold = opts.onHold ?? opts.onError;
  /** The last content handled: applied, reported as invalid, or held. */
  let lastHash: string | undefined;
  /** A complete file that would empty the config, waiting for a second save or SIGHUP. */
  let held: { hash: string; stamp: string } | undefined;
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
      let now: Reading;
      try {
        now = await readConfigState(opts.path);
        // A save in progress: wait until two readings a settle period apart agree. A signal is
        // the operator saying the file is ready.
        for (let round = 0; why !== "signal" && round < MAX_SETTLE_ROUNDS && !closed; round++) {
          await sleep(settleMs);
          const next = await readConfigState(opts.path);
          const settled = next.hash === now.hash;
          // The later of two agreeing readings: its stamp is the file as it now stands.
          now = next;
          if (settled) break;
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // Between an editor's unlink and its rename the file may be briefly missing: say nothing
        // unless the file stays gone until the next event or a signal asks explicitly.
        if (code === "ENOENT" && why !== "signal") return;
        report(`cannot read ${label} (${code ?? (err as Error).message})`, `read:${code}`);
        return;
      }
      if (closed) return;
      const confirms = held !== undefined && held.hash === now.hash && held.stamp !== now.stamp;
      if (now.hash === lastHash && why !== "signal" && !confirms) return;
      lastHash = now.hash;
      let config: Config;
      try {
        config = parseConfigText(now.text, format, label);
      } catch (err) {
        held = undefined;
        report(err instanceof ConfigError ? oneLine(err.message) : (err as Error).message, undefined);
        return;
      }
      const current = opts.running?.();
      const emptied = why === "signal" || confirms ? undefined : isBlank(now.text) ? "is empty" : current ? emptiesConfig(config, current) : undefined;
      if (emptied !== undefined) {
        held = { hash: now.hash, stamp: now.stamp };
        hold(
          `${label} ${emptied}; not applied, in case it is a save still in progress: save the file again (unchanged) or send SIGHUP to apply it; keeping the running config`,
        );
        return;
      }
      held = undefined;
      try {
        opts.onConfig(config, confirms ? "confirmed" : why);
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
    lastHash = hashOf(readFileSync(opts.path, "utf8"));
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

/**
 * Why a valid config should not replace the running one on its own, or undefined: it would
 * remove every server or every agent. That is what a truncated save looks like, and it would
 * interrupt every call or refuse every session.
 */
export function emptiesConfig(next: Config, running: Config): string | undefined {
  const servers = Object.keys(running.servers);
  if (servers.length > 0 && Object.keys(next.servers).length === 0) return `would remove every server (${listed(servers)})`;
  const agents = Object.keys(running.agents);
  if (agents.length > 0 && Object.keys(next.agents).length === 0) return `would remove every agent (${listed(agents)})`;
  return undefined;
}

/** Nothing but whitespace and comment lines (`#` in YAML and TOML). */
function isBlank(text: string): boolean {
  return text.split("\n").every((line) => {
    const t = line.trim();
    return t === "" || t.startsWith("#");
  });
}

function listed(names: string[]): string {
  return names.length <= 5 ? names.join(", ") : `${names.slice(0, 5).join(", ")} and ${names.length - 5} more`;
}

/** Readings of a file that keeps changing under the read before one is taken as it is. */
const MAX_READ_ATTEMPTS = 5;

/**
 * The text and the stamp of one state of the file. The read runs on libuv's thread pool, so a
 * write by another thread or process can land between the stat and the read: the text of one
 * save would then carry the stamp of the half-written file, and the next reading of the same
 * save would look like a second save (a false "confirmed"). The file is stat'ed before and after
 * the read, and read again until both stamps agree.
 */
export async function readConfigState(path: string): Promise<Reading> {
  for (let attempt = 1; ; attempt++) {
    // A fresh handle each attempt: a second readFile on one handle continues from its position.
    const handle = await open(path, "r");
    try {
      const before = stampOf(await handle.stat());
      const text = await handle.readFile("utf8");
      const after = stampOf(await handle.stat());
      if (after === before || attempt >= MAX_READ_ATTEMPTS) return { text, hash: hashOf(text), stamp: after };
    } finally {
      await handle.close();
    }
  }
}

function stampOf(st: Stats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

function hashOf(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Several issues on one line, so a bad edit is always exactly one log line. */
function oneLine(message: string): string {
  const lines = message.split("\n").filter((l) => l.trim() !== "");
  if (lines.length <= 1) return lines[0] ?? message;
  return `${lines[0]} (and ${lines.length - 1} more: ${lines.slice(1).join("; ")})`;
}
