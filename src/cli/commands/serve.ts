// `mcphub mcp serve` (stdio, or HTTP with --listen) and `mcphub up` (the shared HTTP daemon).
import type { Command } from "commander";
import { dataDir, loadConfig, parseListen, DEFAULT_LISTEN } from "../../config/index.js";
import { stderrLogger } from "../../util/log.js";
import { CliError, type CliIO } from "../context.js";

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
      const log = stderrLogger(env);
      if (opts.listen !== undefined) {
        const { serveHttp } = await import("../../serve/http/index.js");
        await serveHttp({ config: loaded.config, configPath: loaded.path, dataDir: dataDir(env), env, log, listen: listenOf(opts.listen), io, ...(opts.agent ? { agent: opts.agent } : {}) });
        exitSoon();
        return;
      }
      // Loaded on demand: `mcphub list` and friends should not pay for the gateway's imports.
      const { serveStdio } = await import("../../serve/stdio/index.js");
      await serveStdio({ config: loaded.config, configPath: loaded.path, dataDir: dataDir(env), env, log, ...(opts.agent ? { agent: opts.agent } : {}) });
      exitSoon();
    });

  program
    .command("up")
    .description("run the shared gateway daemon: streamable HTTP for many agents, one set of connections")
    .option("-l, --listen <host:port>", `address to listen on (default: config listen, else ${DEFAULT_LISTEN})`)
    .addHelpText("after", "\nExamples:\n  mcphub up\n  mcphub up --listen 127.0.0.1:9900\n  mcphub token create claude   # then give the harness its bearer token")
    .action(async (opts: { listen?: string }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<{ config?: string }>();
      const loaded = await loadConfig({ ...(globals.config ? { configPath: globals.config } : {}) });
      const env = process.env;
      const log = stderrLogger(env);
      const listen = listenOf(opts.listen ?? loaded.config.listen ?? DEFAULT_LISTEN);
      const { serveHttp } = await import("../../serve/http/index.js");
      await serveHttp({ config: loaded.config, configPath: loaded.path, dataDir: dataDir(env), env, log, listen, io });
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

function listenOf(text: string) {
  const addr = parseListen(text);
  if (!addr) throw new CliError(`--listen "${text}" is not HOST:PORT (e.g. 127.0.0.1:9820)`);
  return addr;
}
