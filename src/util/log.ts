// A minimal leveled logger to stderr. A stdio gateway must keep stdout for JSON-RPC, and harnesses
// show a server's stderr in their logs, so every line is short, prefixed and free of secrets:
// callers log only fixed messages and already-sanitised downstream errors. A daemon's lines
// (`mcphub up`) carry the time in UTC, except under systemd, where the journal stamps every line
// itself (JOURNAL_STREAM names our stderr's device and inode).
import { fstatSync } from "node:fs";

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

const LEVELS = { info: 0, warn: 1, error: 2, off: 3 } as const;
type Level = keyof typeof LEVELS;

/** `stamp`: a daemon's lines carry the time (timestamper below); a stdio gateway's do not. */
export function stderrLogger(env: NodeJS.ProcessEnv = process.env, prefix = "mcphub", stamp: (line: string) => string = (l) => l): Logger {
  const raw = (env.MCPHUB_LOG_LEVEL ?? "warn").toLowerCase();
  const min = LEVELS[(raw in LEVELS ? raw : "warn") as Level];
  const write = (level: Exclude<Level, "off">, msg: string) => {
    if (LEVELS[level] >= min) process.stderr.write(`${stamp(`${prefix}: ${level}: ${msg}`)}\n`);
  };
  return {
    info: (m) => write("info", m),
    warn: (m) => write("warn", m),
    error: (m) => write("error", m),
  };
}

/** A logger that collects lines in memory; used by tests and by the CLI to show startup progress. */
export function memoryLogger(lines: string[] = []): Logger & { lines: string[] } {
  return {
    lines,
    info: (m) => lines.push(`info: ${m}`),
    warn: (m) => lines.push(`warn: ${m}`),
    error: (m) => lines.push(`error: ${m}`),
  };
}

/** Whether fd 2 is the journal stream systemd gave this process. */
export function stderrIsJournal(env: NodeJS.ProcessEnv = process.env): boolean {
  const m = /^(\d+):(\d+)$/.exec(env.JOURNAL_STREAM ?? "");
  if (!m) return false;
  try {
    const st = fstatSync(2);
    return String(st.dev) === m[1] && String(st.ino) === m[2];
  } catch {
    return false;
  }
}

/** A function that prefixes a line with the current UTC time, or leaves it alone under the journal. */
export function timestamper(env: NodeJS.ProcessEnv = process.env, now: () => Date = () => new Date()): (line: string) => string {
  if (stderrIsJournal(env)) return (line) => line;
  return (line) => `${now().toISOString()} ${line}`;
}
