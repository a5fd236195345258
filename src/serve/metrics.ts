// GET /metrics, the Prometheus text exposition (docs/operations.md#metrics), for both doors: the
// daemon routes it on its own listener (after its Host and Origin checks), and `mcp serve` can
// open a loopback port of its own for it (telemetry.metrics.listen, --metrics-listen). Access is
// that of /api/status: while no token was ever created, loopback callers see everything; once
// tokens exist, a bearer token is needed, and an agent's token shows that agent's series only
// (its calls, its servers) unless the agent is listed in telemetry.metrics.scrape_agents.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ListenAddress } from "../config/schema.js";
import type { Hub } from "../gateway/index.js";
import type { ScrapeView } from "../telemetry/index.js";
import { errorText } from "../util/errors.js";
import { CliError } from "../util/user-error.js";
import { bearerFrom, type TokenStore } from "./tokens.js";

/** Who asks: the operator (everything), an agent's token, or someone refused with a reason. */
export type MetricsViewer = { kind: "operator" } | { kind: "agent"; agent: string } | { kind: "denied"; message: string };

const HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff" };

/** The viewer of a request by its bearer token alone (the metrics port; the daemon adds its page sessions). */
export async function tokenViewer(req: IncomingMessage, tokens: TokenStore): Promise<MetricsViewer> {
  const bearer = bearerFrom(req.headers.authorization);
  const auth = await tokens.authenticate(bearer);
  if (!auth.required) return { kind: "operator" };
  if (auth.who) return { kind: "agent", agent: auth.who.agent };
  return { kind: "denied", message: bearer ? "invalid or revoked token" : "missing bearer token (Authorization: Bearer <token>)" };
}

/** Answers GET /metrics for this viewer. */
export async function answerMetrics(req: IncomingMessage, res: ServerResponse, hub: Hub, viewer: MetricsViewer): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { ...HEADERS, allow: "GET, HEAD", "content-type": "text/plain" }).end("use GET\n");
    return;
  }
  if (viewer.kind === "denied") {
    res.writeHead(401, { ...HEADERS, "www-authenticate": 'Bearer realm="mcphub"', "content-type": "text/plain" }).end(`${viewer.message}\n`);
    return;
  }
  let view: ScrapeView = { kind: "all" };
  if (viewer.kind === "agent" && !(hub.config.telemetry?.metrics?.scrape_agents ?? []).includes(viewer.agent)) {
    let scope;
    try {
      scope = hub.view(viewer.agent).scope;
    } catch (err) {
      res.writeHead(403, { ...HEADERS, "content-type": "text/plain" }).end(`${errorText(err)}\n`);
      return;
    }
    view = { kind: "agent", agent: viewer.agent, allowsServer: (s) => scope.allowsServer(s) };
  }
  const body = await hub.metrics.scrape(view);
  res.writeHead(200, { ...HEADERS, "content-type": hub.metrics.contentType });
  res.end(req.method === "HEAD" ? undefined : body);
}

/**
 * `mcp serve`'s own metrics port: GET /metrics on a loopback address, nothing else. Refuses any
 * other address (the config check says so too): a stdio gateway has no other protection.
 */
export async function startMetricsPort(hub: Hub, listen: ListenAddress, tokens: TokenStore): Promise<{ url: string; close(): void }> {
  const host = listen.host.replace(/^\[|\]$/g, "");
  if (!/^(localhost|::1|127\.\d+\.\d+\.\d+)$/i.test(host)) throw new CliError(`the metrics port listens on loopback only (127.0.0.1, ::1 or localhost), not ${listen.host}`);
  let hosts: Set<string> | undefined;
  const server = createServer((req, res) => {
    const port = (server.address() as AddressInfo).port;
    hosts ??= new Set([`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `${host.includes(":") ? `[${host}]` : host}:${port}`.toLowerCase()]);
    // DNS rebinding: a web page must not read the port through a name that resolves to loopback.
    const origin = req.headers.origin;
    if (!hosts.has((req.headers.host ?? "").toLowerCase()) || (origin !== undefined && !/^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/i.test(origin))) {
      res.writeHead(403, { ...HEADERS, "content-type": "text/plain" }).end("Host or Origin not allowed (DNS-rebinding protection)\n");
      return;
    }
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(404, { ...HEADERS, "content-type": "text/plain" }).end("not found; the metrics are at /metrics\n");
      return;
    }
    tokenViewer(req, tokens)
      .then((viewer) => answerMetrics(req, res, hub, viewer))
      .catch((err: unknown) => {
        hub.log.error(`metrics: ${errorText(err)}`);
        if (!res.headersSent) res.writeHead(500, HEADERS).end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(new CliError(err.code === "EADDRINUSE" ? `metrics port ${listen.host}:${listen.port} is already in use` : `metrics port: ${errorText(err)}`)),
    );
    server.listen(listen.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/metrics`,
    close: () => {
      server.close();
      server.closeAllConnections();
    },
  };
}
