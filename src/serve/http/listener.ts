// The shared daemon: streamable HTTP for many agents from one process and one set of downstream
// connections. Each request is checked in this order: Host and Origin (DNS-rebinding protection),
// then the bearer token, which selects the agent and so the scope of the session. A session can
// only be used with the token's agent that opened it.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { ListenAddress } from "../../config/schema.js";
import { CliError, type CliIO } from "../../util/user-error.js";
import { errorText } from "../../util/errors.js";
import { createSession, Hub, type Session } from "../../gateway/index.js";
import { followConfig, type Report } from "../reload.js";
import { healthReport, StoreWatch } from "./health.js";
import { fileStore, probeView } from "../../store/index.js";
import { bodyTooLarge, createSessionTransport, type HttpSessionTransport } from "./transport/index.js";
import { capConnections, checkingInterval } from "./connections.js";
import { SessionTable } from "./sessions.js";
import { guardTransport } from "../rpc-guard.js";
import { createStatusRoutes, type StatusRoutes } from "../status/index.js";
import type { ServeOptions } from "../options.js";
import { bearerFrom, TokenStore } from "../tokens.js";
import { answerMetrics } from "../metrics.js";
import { createMetrics, currentTraceId, type Metrics } from "../../telemetry/index.js";
import { formatLogLine, setLogTraceSource, type LogLevel } from "../../util/log.js";
import { recordDaemon } from "../../service/address.js";
import { VERSION } from "../../version.js";

export interface HttpOptions extends ServeOptions {
  listen: ListenAddress;
  io?: CliIO;
  /** How long SIGTERM waits for in-flight calls before closing anyway. */
  drainMs?: number;
  /** Where reload lines go (the daemon prints them to the operator whatever the log level). */
  report?: Report;
  /** The daemon's metrics (made here when not given; /metrics serves them). */
  metrics?: Metrics;
}

interface LiveSession {
  session: Session;
  transport: HttpSessionTransport;
  close(): Promise<void>;
}

export interface HttpGateway {
  url: string;
  port: number;
  hub: Hub;
  /** Stops accepting, waits for in-flight calls (bounded), then closes everything. */
  close(): Promise<void>;
}

const NO_PROXIES: readonly string[] = [];

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

export async function startHttpGateway(opts: HttpOptions): Promise<HttpGateway> {
  const tokens = TokenStore.open(opts.store ?? opts.dataDir);
  const loopback = isLoopbackHost(opts.listen.host);
  if (!loopback && !(await tokens.hasAny())) {
    throw new CliError(
      `refusing to listen on ${opts.listen.host}:${opts.listen.port} without agent tokens: a non-loopback address needs them (create one with \`mcphub token create AGENT\`)`,
    );
  }
  // The daemon always serves /metrics, so it counts from its first call.
  const metrics = opts.metrics ?? (await createMetrics());
  const hub = new Hub({ ...opts, metrics });
  try {
    if (opts.agent !== undefined) hub.view(opts.agent);
  } catch (err) {
    await hub.close();
    throw err;
  }
  const sessions = new SessionTable<LiveSession>({ idleMs: opts.config.session_idle_timeout, perAgent: opts.config.max_sessions_per_agent });
  metrics.gauge({
    name: "mcphub_sessions",
    help: "Open MCP sessions on the daemon, by agent.",
    labelNames: ["agent"],
    read: () => {
      const by = new Map<string, number>();
      for (const s of sessions.list()) by.set(s.agent ?? "", (by.get(s.agent ?? "") ?? 0) + 1);
      return [...by].map(([agent, value]) => ({ labels: { agent }, value }));
    },
  });
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | undefined;
  let status: StatusRoutes | undefined;

  const limits = () => hub.config.http_limits;
  const initial = limits();
  const server = createServer(
    {
      headersTimeout: initial.header_timeout,
      requestTimeout: initial.request_timeout,
      keepAliveTimeout: initial.keep_alive_timeout,
      // How often Node looks for connections past those timeouts (its default is 30 s).
      connectionsCheckingInterval: checkingInterval(initial),
    },
    (req, res) => {
    const tracked = req.method === "POST";
    if (tracked) inFlight++;
    res.once("close", () => {
      if (!tracked) return;
      inFlight--;
      if (inFlight === 0) idle?.();
    });
    handle(req, res).catch((err: unknown) => {
      opts.log.error(`http: ${errorText(err)}`);
      if (!res.headersSent) reply(res, 500, "internal error");
    });
    },
  );
  // A reload applies new timeouts to the server (keep-alive to connections opened from then on)
  // and new caps to the next connection.
  const stopFollowingLimits = hub.onReload(() => {
    const l = limits();
    server.headersTimeout = l.header_timeout;
    server.requestTimeout = l.request_timeout;
    server.keepAliveTimeout = l.keep_alive_timeout;
  });
  // /healthz and the status page look at the store through this (at most once a second).
  const storeWatch = new StoreWatch(opts.store ?? fileStore(opts.dataDir));
  const caps = capConnections(server, limits, (m) => opts.log.warn(m), () => hub.config.trusted_proxies ?? NO_PROXIES);

  /** Host headers accepted, fixed once the port is known (requests only arrive after listen). */
  let hosts: Set<string> | undefined;
  const allowedHosts = (port: number): Set<string> => {
    const hosts = new Set([`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]);
    const bind = opts.listen.host.includes(":") ? `[${opts.listen.host}]` : opts.listen.host;
    if (!["0.0.0.0", "[::]"].includes(bind)) hosts.add(`${bind}:${port}`.toLowerCase());
    for (const h of opts.config.allowed_hosts ?? []) hosts.add(h.toLowerCase());
    return hosts;
  };

  /** The bound port, known once listening (requests only arrive after that). */
  let boundPort: number | undefined;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!caps.admit(req, res)) return;
    const port = (boundPort ??= (server.address() as AddressInfo).port);
    hosts ??= allowedHosts(port);
    const host = (req.headers.host ?? "").toLowerCase();
    if (!hosts.has(host)) return reply(res, 403, `Host "${host}" is not allowed (DNS-rebinding protection)`);
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, port, opts.listen.host)) {
      return reply(res, 403, `Origin "${origin}" is not allowed (DNS-rebinding protection)`);
    }
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path === "/healthz") {
      const health = healthReport(hub, sessions.size, draining, probeView(await storeWatch.look()));
      res.writeHead(draining ? 503 : 200, { "content-type": "application/json" }).end(JSON.stringify(health));
      return;
    }
    if (draining) return reply(res, 503, "gateway is shutting down");
    // Access as for /api/status: the page's session, an agent's token (its own series), or loopback before any token.
    if (path === "/metrics" && status) return answerMetrics(req, res, hub, await status.metricsViewer(req));
    if (status && path !== "/mcp" && (await status.handle(req, res, path))) return;
    if (path !== "/mcp" && path !== "/") return reply(res, 404, "not found; the MCP endpoint is /mcp (the status page is /)");

    let agent: string | undefined = opts.agent;
    const bearer = bearerFrom(req.headers.authorization);
    const auth = await tokens.authenticate(bearer);
    if (auth.required) {
      if (!auth.who) {
        res.setHeader("WWW-Authenticate", 'Bearer realm="mcphub"');
        return reply(res, 401, bearer ? "invalid or revoked token" : "missing bearer token (Authorization: Bearer <token>)");
      }
      agent = auth.who.agent;
    }

    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const live = sessions.get(sessionId);
      if (!live) return reply(res, 404, "unknown or expired session; initialize a new one");
      if (live.agent !== agent) return reply(res, 403, "this session belongs to another agent");
      // The agent may have been removed or disabled by a config reload since the session began.
      if (agent !== undefined && !hub.hasAgent(agent)) return reply(res, 403, `agent "${agent}" is no longer enabled in the config`);
      // A request (or the GET stream) keeps the session from expiring until its response ends.
      res.once("close", sessions.activity(sessionId));
      // A client's W3C traceparent (when tracing is on) is read from the request's headers, which
      // the transport hands to the call with its message (src/gateway/session.ts).
      return live.value.transport.handleRequest(req, res);
    }
    if (req.method !== "POST") return reply(res, 400, "no session: start with an initialize POST");
    const max = hub.config.max_message_size;
    const body = await readJson(req, max);
    if (body === TOO_LARGE) return reply(res, 413, bodyTooLarge(max));
    if (body === undefined || !isInitializeRequest(body)) {
      return reply(res, 400, "no session: the first request must be initialize");
    }
    let view;
    try {
      view = hub.view(agent);
    } catch (err) {
      return reply(res, 403, errorText(err));
    }
    if (!(await sessions.admit(agent))) {
      const cap = opts.config.max_sessions_per_agent;
      return reply(res, 429, `too many open sessions for ${agent === undefined ? "this gateway" : `agent "${agent}"`} (${cap}, all busy); close one (DELETE) or retry later`);
    }
    const session = createSession(hub, view);
    const transport: HttpSessionTransport = createSessionTransport(hub.config.http_transport, {
      maxBodyBytes: hub.config.max_message_size,
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.add(id, agent, {
          session,
          transport,
          close: async () => {
            session.dispose();
            await transport.close();
          },
        });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      session.dispose();
    };
    await session.connect(transport);
    guardTransport(transport);
    await transport.handleRequest(req, res, body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(new CliError(err.code === "EADDRINUSE" ? `${opts.listen.host}:${opts.listen.port} is already in use` : errorText(err))),
    );
    server.listen(opts.listen.port, opts.listen.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = opts.listen.host.includes(":") ? `[${opts.listen.host}]` : opts.listen.host;
  // Before hub.start(), so the page's timeline sees every server's first state.
  status = createStatusRoutes({
    hub,
    tokens,
    dataDir: opts.dataDir,
    ...(opts.store ? { store: opts.store } : {}),
    storeHealth: () => storeWatch.look(),
    port,
    url: `http://${shownHost}:${port}/mcp`,
    ...(opts.configPath ? { configPath: opts.configPath } : {}),
    sessions: () => sessions.list(),
  });
  hub.start();
  sessions.start();
  const follow =
    opts.configPath !== undefined
      ? followConfig(hub, { path: opts.configPath, report: opts.report ?? ((level, msg) => opts.log[level](msg)) })
      : undefined;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      draining = true;
      follow?.close();
      server.close();
      // In-flight calls fail at once ("the gateway is shutting down"; nothing is retried) and
      // their answers still reach the waiting clients: the drain below waits for those answers.
      const hubClosed = hub.close();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          idle = resolve;
          setTimeout(resolve, opts.drainMs ?? 10_000).unref();
        });
      }
      status?.close();
      stopFollowingLimits();
      caps.close();
      await sessions.closeAll();
      server.closeAllConnections();
      await hubClosed;
    })();
    return closing;
  };
  return { url: `http://${shownHost}:${port}/mcp`, port, hub, close };
}

/** Runs the daemon until SIGINT/SIGTERM, printing readiness and server states to stderr. */
export async function serveHttp(opts: HttpOptions): Promise<void> {
  const json = opts.logFormat === "json";
  if (json) setLogTraceSource(currentTraceId);
  // The operator's lines (readiness, server states, reloads): as they are, or one JSON object each.
  const say = (t: string, level: LogLevel = "info") => {
    const line = json ? formatLogLine("json", level, t.replace(/^(mcphub: )?(warn: |error: )?/, "").trim()).trimEnd() : t;
    return opts.io ? opts.io.err(line) : process.stderr.write(`${line}\n`);
  };
  const gw = await startHttpGateway({ ...opts, report: (level, msg) => say(level === "info" ? `mcphub: ${msg}` : `mcphub: ${level}: ${msg}`, level) });
  // `mcphub open`, `doctor` and `status` find this daemon here, whatever address it was given:
  // recorded before the "listening" line, so whoever reads that line finds the record.
  const unrecord = recordDaemon(opts.dataDir, {
    url: gw.url,
    host: opts.listen.host,
    port: gw.port,
    ...(opts.configPath ? { config: opts.configPath } : {}),
    version: VERSION,
  });
  // Signals are handled from the moment the port is open (a supervisor may stop us at once).
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      say("mcphub: stopping: in-flight calls are answered with an error, then drained");
      unrecord();
      void gw.close().finally(resolve);
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  const anonymous = !(await TokenStore.open(opts.store ?? opts.dataDir).authenticate(undefined)).required;
  say(`mcphub listening on ${gw.url}${anonymous ? " (no agent tokens yet: loopback clients are served unscoped)" : " (bearer tokens required)"}`);
  say(`  status page: ${gw.url.replace(/\/mcp$/, "/")}${anonymous ? "" : " (sign in with \`mcphub open\`)"}`);
  if (!Object.values(opts.config.servers).some((s) => s.enabled)) {
    say(`mcphub: warning: no server is enabled${opts.configPath ? ` in ${opts.configPath}` : ""}: agents see only mcphub's management tools; add one with \`mcphub add NAME COMMAND [ARGS...]\``);
  }
  for (const snap of gw.hub.supervisor.snapshots()) {
    const listing = gw.hub.catalog.listingOf(snap.name);
    if (snap.state === "idle" && listing) {
      say(`  ${snap.name}: idle (${listing.tools.length} tools cached ${new Date(listing.fetchedAt).toISOString()}; starts on first use)`);
    }
  }
  // One line per real change: a server retrying after a failure goes failed → connecting →
  // failed on every attempt, which is not news until it succeeds or fails differently.
  const seen = new Map<string, string>();
  gw.hub.supervisor.onChange((name) => {
    const snap = gw.hub.supervisor.snapshot(name);
    if (!snap) return;
    const last = seen.get(name) ?? "";
    const failing = last.startsWith("failed|") || last.startsWith("locked|");
    const key = `${snap.state}|${snap.state === "ready" ? "" : (snap.error ?? "")}`;
    if (key === last || (snap.state === "connecting" && failing)) return;
    seen.set(name, key);
    say(`  ${name}: ${snap.state}${snap.connected ? ` (${snap.tools.length} tools)` : ""}${snap.error ? ` — ${snap.error}` : ""}`);
  });
  await stopped;
}

function originAllowed(origin: string, port: number, bindHost: string): boolean {
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return false;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return false;
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (isLoopbackHost(host)) return true;
  return host === bindHost && Number(u.port || (u.protocol === "https:" ? 443 : 80)) === port;
}

function reply(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: status === 401 ? -32001 : -32000, message }, id: null });
  res.writeHead(status, { "content-type": "application/json" }).end(body);
}

const TOO_LARGE = Symbol("too large");

async function readJson(req: IncomingMessage, max: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > max) {
      req.resume();
      return TOO_LARGE;
    }
    chunks.push(b);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}
