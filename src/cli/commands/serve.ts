// `mcphub mcp serve` (stdio, or HTTP with --listen) and `mcphub up` (the shared HTTP daemon).
import type { Command } from "commander";
import { dataDir, loadConfig, parseListen, DEFAULT_LISTEN } from "../../config/index.js";
import { stderrLogger, timestamper } from "../../util/log.js";
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
    .addHelpText(
      "after",
      "\nOver stdio it speaks JSON-RPC on stdin/stdout: a harness launches it (see `mcphub sync`).\n\nExamples:\n  mcphub mcp serve --agent claude\n  mcphub mcp serve --listen 127.0.0.1:9820",
    )
    .action(async (opts: { agent?: string; listen?: string }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<{ config?: string }>();
      const loaded = await loadConfig({ ...(globals.config ? { configPath: globals.config } : {}) });
      const env = process.env;
      if (opts.listen !== undefined) {
        const stamp = timestamper(env);
        const { serveHttp } = await import("../../serve/http/index.js");
        await serveHttp({ config: loaded.config, configPath: loaded.path, dataDir: dataDir(env), env, log: stderrLogger(env, "mcphub", stamp), harnessFiles: harnessFiles(env), listen: listenOf(opts.listen), io: stamped(io, stamp), ...(opts.agent ? { agent: opts.agent } : {}) });
        exitSoon();
        return;
      }
      const log = stderrLogger(env);
      // Loaded on demand: `mcphub list` and friends should not pay for the gateway's imports.
      const { serveStdio } = await import("../../serve/stdio/index.js");
      await serveStdio({ config: loaded.config, configPath: loaded.path, dataDir: dataDir(env), env, log, harnessFiles: harnessFiles(env), ...(opts.agent ? { agent: opts.agent } : {}) });
      exitSoon();
    });

  program
    .command("up")
    .description("run the shared gateway daemon: streamable HTTP for many agents, one set of connections")
    .option("-l, --listen <host:port>", `address to listen on (default: config listen, else ${DEFAULT_LISTEN})`)
    .addHelpText("after", "\nExamples:\n  mcphub up\n  mcphub up --listen 127.0.0.1:9900\n  mcphub token create claude   # then give the harness its bearer token\n  mcphub service install       # keep it running across logins and reboots (systemd / launchd)")
    .action(async (opts: { listen?: string }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<{ config?: string }>();
      const loaded = await loadConfig({ ...(globals.config ? { configPath: globals.config } : {}) });
      const env = process.env;
      const stamp = timestamper(env);
      const listen = listenOf(opts.listen ?? loaded.config.listen ?? DEFAULT_LISTEN);
      const { serveHttp } = await import("../../serve/http/index.js");
      await serveHttp({ config: loaded.config, configPath: loaded.path, dataDir: dataDir(env), env, log: stderrLogger(env, "mcphub", stamp), harnessFiles: harnessFiles(env), listen, io: stamped(io, stamp) });
      exitSoon();
    });
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

function listenOf(text: string) {
  const addr = parseListen(text);
  if (!addr) throw new CliError(`--listen "${text}" is not HOST:PORT (e.g. 127.0.0.1:9820)`);
  return addr;
}
