// A minimal leveled logger to stderr. A stdio gateway must keep stdout for JSON-RPC, and harnesses
// show a server's stderr in their logs, so every line is short, prefixed and free of secrets:
// callers log only fixed messages and already-sanitised downstream errors. A daemon's lines
// (`mcphub up`) carry the time in UTC, except under systemd, where the journal stamps every line
// itself (JOURNAL_STREAM names our stderr's device and inode).
//
// Two formats: the human lines (`mcphub: warn: ...`, the default) and `--log-format json`, one
// JSON object a line with the time, the level, the message and, for a line written while a tool
// call is handled, that request's id and its trace id (when tracing is on), so a log pipeline can
// join lines to requests and traces.
import { AsyncLocalStorage } from "node:async_hooks";
import { fstatSync } from "node:fs";

export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export type LogFormat = "text" | "json";
export const LOG_FORMATS: readonly LogFormat[] = ["text", "json"];

const LEVELS = { info: 0, warn: 1, error: 2, off: 3 } as const;
type Level = keyof typeof LEVELS;
export type LogLevel = Exclude<Level, "off">;

/** The request a log line belongs to, and its trace; set only while JSON lines are written. */
const requests = new AsyncLocalStorage<{ id: string; traceId: string | undefined }>();
let jsonLines = false;
let traceIdSource: (() => string | undefined) | undefined;

/** Whether lines carry request ids (JSON format): callers skip the request scope otherwise. */
export function logsCarryRequests(): boolean {
  return jsonLines;
}

/**
 * Runs `fn` with `requestId` (and the request's trace, when traced) as the request of every line
 * it logs (only in JSON format). The trace id rides here because a traced call carries its trace
 * explicitly, not as OpenTelemetry's current context (src/telemetry/tracing/otel.ts).
 */
export function withLogRequest<T>(requestId: string, fn: () => T, traceId?: string): T {
  return jsonLines ? requests.run({ id: requestId, traceId }, fn) : fn();
}

/**
 * Runs `fn` outside any request: for work a request starts but does not own (a shared downstream
 * connection opened on a call's behalf), whose later lines must not name that request.
 */
export function outsideLogRequest<T>(fn: () => T): T {
  return jsonLines ? requests.exit(fn) : fn();
}

/** Where JSON lines find the current trace id (the tracing part registers itself). */
export function setLogTraceSource(source: (() => string | undefined) | undefined): void {
  traceIdSource = source;
}

/** One log line in the format, with its newline. */
export function formatLogLine(format: LogFormat, level: LogLevel, msg: string, prefix = "mcphub"): string {
  if (format === "text") return `${prefix}: ${level}: ${msg}\n`;
  const request = requests.getStore();
  const requestId = request?.id;
  const traceId = request?.traceId ?? traceIdSource?.();
  return `${JSON.stringify({
    ts: new Date().toISOString(),
    level,
    msg,
    ...(requestId !== undefined ? { request_id: requestId } : {}),
    ...(traceId !== undefined ? { trace_id: traceId } : {}),
  })}\n`;
}

/**
 * `format`: human lines or JSON objects. `stamp` (human lines only): a daemon's lines carry the
 * time (timestamper below); a stdio gateway's do not. A JSON line has its own `ts`.
 */
export function stderrLogger(env: NodeJS.ProcessEnv = process.env, prefix = "mcphub", format: LogFormat = "text", stamp: (line: string) => string = (l) => l): Logger {
  const raw = (env.MCPHUB_LOG_LEVEL ?? "warn").toLowerCase();
  const min = LEVELS[(raw in LEVELS ? raw : "warn") as Level];
  if (format === "json") jsonLines = true;
  const write = (level: LogLevel, msg: string) => {
    if (LEVELS[level] < min) return;
    process.stderr.write(format === "json" ? formatLogLine(format, level, msg, prefix) : `${stamp(`${prefix}: ${level}: ${msg}`)}\n`);
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
