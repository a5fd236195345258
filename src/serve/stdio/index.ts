// The stdio front door, `mcphub mcp serve`: one harness, one agent, one hub, and newline-delimited
// JSON-RPC on stdin/stdout (transport.ts). The process lives exactly as long as its harness: it
// shuts down (killing every downstream process tree) when stdin closes or on SIGINT/SIGTERM. It
// follows its config file (and SIGHUP) while it runs. This module is the door's entry point.
import { createSession, Hub } from "../../gateway/index.js";
import { createMetrics, currentTraceId } from "../../telemetry/index.js";
import { setLogTraceSource } from "../../util/log.js";
import { startMetricsPort } from "../metrics.js";
import type { ServeOptions } from "../options.js";
import { followConfig } from "../reload.js";
import { TokenStore } from "../tokens.js";
import { LineStdioServerTransport } from "./transport.js";

export type { ServeOptions };

export async function serveStdio(opts: ServeOptions): Promise<void> {
  if (opts.logFormat === "json") setLogTraceSource(currentTraceId);
  // prom-client is loaded only when the opt-in metrics port is asked for: start-up stays lean.
  const metrics = opts.metricsListen ? await createMetrics() : undefined;
  const hub = new Hub({ ...opts, singleSession: true, ...(metrics ? { metrics } : {}) });
  // Building the view validates --agent before anything is spawned.
  let view;
  try {
    view = hub.view(opts.agent);
  } catch (err) {
    await hub.close();
    throw err;
  }
  const session = createSession(hub, view);
  const transport = new LineStdioServerTransport({
    input: process.stdin,
    output: process.stdout,
    maxMessageBytes: opts.config.max_message_size,
    warn: (m) => opts.log.warn(m),
  });
  await session.connect(transport);
  let metricsPort: { url: string; close(): void } | undefined;
  if (opts.metricsListen && metrics) {
    metrics.gauge({ name: "mcphub_sessions", help: "Open MCP sessions (a stdio gateway has one).", labelNames: ["agent"], read: () => [{ labels: { agent: view.owner }, value: 1 }] });
    try {
      metricsPort = await startMetricsPort(hub, opts.metricsListen, TokenStore.open(opts.dataDir));
    } catch (err) {
      await hub.close();
      throw err;
    }
    opts.log.info(`metrics at ${metricsPort.url}`);
  }
  hub.start();
  const follow = opts.configPath !== undefined ? followConfig(hub, { path: opts.configPath, report: (level, msg) => opts.log[level](msg) }) : undefined;
  // Someone ran it by hand: say what this is, instead of sitting silently on a terminal.
  if (process.stdin.isTTY) {
    process.stderr.write(
      "mcphub: this is an MCP server speaking JSON-RPC on stdin/stdout, meant to be launched by an agent harness (see `mcphub sync`). Press Ctrl-C (or Ctrl-D) to stop.\n",
    );
  }

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (why: string) => {
      if (stopping) return;
      stopping = true;
      opts.log.info(`shutting down (${why})`);
      follow?.close();
      metricsPort?.close();
      session.dispose();
      void hub
        .close()
        .catch((err: unknown) => opts.log.error(`shutdown: ${String(err)}`))
        .finally(resolve);
    };
    process.stdin.once("end", () => stop("stdin closed"));
    process.stdin.once("close", () => stop("stdin closed"));
    transport.onclose = () => stop("transport closed");
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
  // Release stdin so the event loop can end; a signal may have arrived while it was still open.
  process.stdin.destroy();
}
