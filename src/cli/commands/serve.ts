// `mcphub mcp serve` (stdio, or HTTP with --listen) and `mcphub up` (the shared HTTP daemon).
import type { Command } from "commander";
import { dataDir, loadConfig, parseListen, DEFAULT_LISTEN } from "../../config/index.js";
import type { Config } from "../../config/index.js";
import type { Store } from "../../store/index.js";
import { LOG_FORMATS, stderrLogger, timestamper, type LogFormat, type Logger } from "../../util/log.js";
import { CliError, type CliIO } from "../context.js";
import { harnessFiles } from "../harness-files.js";

export function registerServe(program: Command, io: CliIO): void {
  const mcp = program
    .command("mcp")
    .description("run mcphub as an MCP server")
    .addHelpText("after", "\nExamples:\n  mcphub mcp serve --agent claude\n  mcphub mcp serve --listen 127.0.0.1:9820");
  mcp
    .command("serve")
    .description("serve the gateway over stdio (or streamable HTTP with --listen)")
    .option("-a, --agent <name>", "apply this agent's scope, pins and schema budget")
    .option("-l, --listen <host:port>", "serve streamable HTTP on this address instead of stdio")
    .option("--metrics-listen <host:port>", "also serve Prometheus /metrics on this loopback address (default: config telemetry.metrics.listen)")
    .option("--log-format <format>", "log lines on stderr as text (default) or json (one object a line)")
    .addHelpText(
      "after",
      "\nOver stdio it speaks JSON-RPC on stdin/stdout: a harness launches it (see `mcphub sync`).\n\nExamples:\n  mcphub mcp serve --agent claude\n  mcphub mcp serve --listen 127.0.0.1:9820",
    )
    .action(async (opts: { agent?: string; listen?: string; metricsListen?: string; logFormat?: string }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<{ config?: string }>();
      const logFormat = logFormatOf(opts.logFormat);
      const loaded = await loadConfig({ ...(globals.config ? { configPath: globals.config } : {}) });
      const env = process.env;
      if (opts.listen !== undefined) {
        if (opts.metricsListen !== undefined) throw new CliError("--metrics-listen is for the stdio gateway; with --listen the daemon serves /metrics on its own address");
        const stamp = stampOf(env, logFormat);
        const log = stderrLogger(env, "mcphub", logFormat, stamp);
        const store = await sharedStore(loaded.config, env, log);
        const { serveHttp } = await import("../../serve/http/index.js");
        await serveHttp({ config: loaded.config, configPath: loaded.path, dataDir: dataDir(env), env, log, logFormat, harnessFiles: harnessFiles(env), listen: listenOf(opts.listen), io: stamped(io, stamp), ...store, ...(opts.agent ? { agent: opts.agent } : {}) });
        await store.store?.close();
        exitSoon();
        return;
      }
      const log = stderrLogger(env, "mcphub", logFormat);
      const metricsAt = opts.metricsListen ?? loaded.config.telemetry?.metrics?.listen;
      const metricsListen = metricsAt !== undefined ? listenOf(metricsAt, "--metrics-listen") : undefined;
      // Loaded on demand: `mcphub list` and friends should not pay for the gateway's imports.
      const { serveStdio } = await import("../../serve/stdio/index.js");
      const store = await sharedStore(loaded.config, env, log);
      await serveStdio({ config: loaded.config, configPath: loaded.path, dataDir: dataDir(env), env, log, logFormat, harnessFiles: harnessFiles(env), ...(metricsListen ? { metricsListen } : {}), ...store, ...(opts.agent ? { agent: opts.agent } : {}) });
      await store.store?.close();
      exitSoon();
    });

  program
    .command("up")
    .description("run the shared gateway daemon: streamable HTTP for many agents, one set of connections")
    .option("-l, --listen <host:port>", `address to listen on (default: config listen, else ${DEFAULT_LISTEN})`)
    .option("--log-format <format>", "log lines on stderr as text (default) or json (one object a line)")
    .addHelpText("after", "\nExamples:\n  mcphub up\n  mcphub up --listen 127.0.0.1:9900\n  mcphub token create claude   # then give the harness its bearer token\n  mcphub service install       # keep it running across logins and reboots (systemd / launchd)")
    .action(async (opts: { listen?: string; logFormat?: string }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<{ config?: string }>();
      const logFormat = logFormatOf(opts.logFormat);
      const loaded = await loadConfig({ ...(globals.config ? { configPath: globals.config } : {}) });
      const env = process.env;
      const stamp = stampOf(env, logFormat);
      const listen = listenOf(opts.listen ?? loaded.config.listen ?? DEFAULT_LISTEN);
      const log = stderrLogger(env, "mcphub", logFormat, stamp);
      const store = await sharedStore(loaded.config, env, log);
      const { serveHttp } = await import("../../serve/http/index.js");
      await serveHttp({ config: loaded.config, configPath: loaded.path, dataDir: dataDir(env), env, log, logFormat, harnessFiles: harnessFiles(env), listen, io: stamped(io, stamp), ...store });
      await store.store?.close();
      exitSoon();
    });
}

/** The PostgreSQL store when the config names one (connected, migrated, followed); else nothing. */
async function sharedStore(config: Config, env: NodeJS.ProcessEnv, log: Logger): Promise<{ store?: Store }> {
  if (config.store === undefined) return {};
  const { openConfiguredStore } = await import("./shared-store.js");
  const store = await openConfiguredStore(config, env, { follow: true, log: (level, msg) => log[level](msg) });
  log.info(`store: shared state in ${store.where}`);
  return { store };
}

/**
 * After a server has shut down cleanly, nothing should keep the process alive; if a stray handle
 * does (a library's socket, a timer), exit anyway rather than linger as an orphan.
 */
function exitSoon(): void {
  setTimeout(() => process.exit(typeof process.exitCode === "number" ? process.exitCode : 0), 1500).unref();
}

/** The daemon's stderr lines with the time in front (each line of a multi-line message). */
function stamped(io: CliIO, stamp: (line: string) => string): CliIO {
  return { ...io, err: (t) => io.err(t.split("\n").map(stamp).join("\n")) };
}

/** Human lines get the time in front; a JSON line carries its own `ts`. */
function stampOf(env: NodeJS.ProcessEnv, format: LogFormat): (line: string) => string {
  return format === "json" ? (line) => line : timestamper(env);
}

function listenOf(text: string, flag = "--listen") {
  const addr = parseListen(text);
  if (!addr) throw new CliError(`${flag} "${text}" is not HOST:PORT (e.g. 127.0.0.1:9820)`);
  return addr;
}

function logFormatOf(text: string | undefined): LogFormat {
  if (text === undefined) return "text";
  const f = LOG_FORMATS.find((x) => x === text.toLowerCase());
  if (!f) throw new CliError(`--log-format "${text}" is not a log format; use ${LOG_FORMATS.join(" or ")}`);
  return f;
}
