// The status page's HTTP surface, entered from the daemon's listener after its Host and Origin
// checks (so they apply here exactly as to /mcp):
//
//   GET  /              (Accept: text/html)  the page; MCP clients keep using /mcp (and / without text/html)
//   GET  /login?t=...   redeems a one-time link from `mcphub open`, sets the session cookie
//   POST /logout        ends the page session
//   GET  /api/status    the status document (page session, bearer token, or anonymous loopback)
//   GET  /api/events    the same document as server-sent events, pushed on every change
//   POST /api/servers/NAME/{reconnect,enable,disable}   page session + CSRF header + same origin
//
// Who may look: with no token ever created, loopback clients (the daemon refuses other binds
// then); once tokens exist, a browser needs a session from a one-time link, and a script a bearer
// token, which shows that agent's scope, read-only. Actions are the operator's: never by token.
import type { FollowedProbe, Store } from "../../store/index.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { RecentCalls } from "../../telemetry/recent.js";
import { errorText } from "../../util/errors.js";
import type { Hub } from "../../gateway/index.js";
import type { MetricsViewer } from "../metrics.js";
import { bearerFrom, type TokenStore } from "../tokens.js";
import { ACTIONS, runAction, type ServerAction } from "./actions.js";
import { StatusEvents } from "./events.js";
import { redeemLoginSecret } from "./login.js";
import { buildStatus, type DaemonSession, type StatusSources, type Viewer } from "./model.js";
import { LINK_INVALID_HTML, NOTE_CSP, PAGE_CSP, PAGE_HTML, SIGN_IN_HTML, SIGNED_IN_HTML } from "./page.js";
import { PageSessions, type PageSession } from "./sessions.js";
import { ServerTimeline } from "./timeline.js";

export interface StatusRoutesOptions {
  hub: Hub;
  tokens: TokenStore;
  dataDir: string;
  /** The shared state in team mode (call records come from it). */
  store?: Store;
  /** A look at the store (kind, reachable, schema version, latency), shared with /healthz. */
  storeHealth?: () => Promise<FollowedProbe>;
  port: number;
  /** The daemon's MCP URL, shown on the page. */
  url: string;
  configPath?: string;
  /** The daemon's live MCP sessions (agent, opened, last request). */
  sessions: () => DaemonSession[];
}

export interface StatusRoutes {
  /** Answers the request when it is one of the status routes; false to let /mcp handle it. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  /** Who may read /metrics, by the same rules as /api/status. */
  metricsViewer(req: IncomingMessage): Promise<MetricsViewer>;
  close(): void;
}

type Access =
  | { kind: "page"; session: PageSession }
  | { kind: "anonymous" }
  | { kind: "agent"; agent: string }
  | { kind: "denied"; message: string; bearer: boolean };

const COMMON_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

const ACTION_RE = /^\/api\/servers\/([^/]+)\/([a-z]+)$/;

export function createStatusRoutes(opts: StatusRoutesOptions): StatusRoutes {
  const { hub, tokens } = opts;
  const pages = new PageSessions(opts.port);
  const timeline = new ServerTimeline(hub);
  const sources: StatusSources = {
    hub,
    timeline,
    recent: new RecentCalls(opts.store ?? opts.dataDir),
    tokens,
    sessions: opts.sessions,
    startedAt: Date.now(),
    url: opts.url,
    ...(opts.configPath ? { configPath: opts.configPath } : {}),
    ...(opts.storeHealth ? { storeHealth: opts.storeHealth, storeWhere: opts.store?.where ?? opts.dataDir } : {}),
  };
  const build = (viewer: Viewer) => buildStatus(sources, viewer);
  const events = new StatusEvents(hub, build, (err) => hub.log.warn(`status page: ${errorText(err)}`));

  async function access(req: IncomingMessage): Promise<Access> {
    const bearer = bearerFrom(req.headers.authorization);
    const auth = await tokens.authenticate(bearer);
    if (bearer !== undefined && auth.required) {
      return auth.who ? { kind: "agent", agent: auth.who.agent } : { kind: "denied", message: "invalid or revoked token", bearer: true };
    }
    const session = pages.fromRequest(req);
    // A session handed to a loopback browser while no token existed ends when the first token
    // is created: from then on only a sign-in link opens the page.
    if (session && (session.signedIn || !auth.required)) return { kind: "page", session };
    if (!auth.required) return { kind: "anonymous" };
    return {
      kind: "denied",
      message: "sign in first: run `mcphub open` on this machine (scripts: Authorization: Bearer <token>)",
      bearer: false,
    };
  }

  /** Whether a stream opened with `a` may still receive updates. */
  function stillAllowed(req: IncomingMessage, a: Access): () => Promise<boolean> {
    return async () => {
      const now = await access(req);
      if (a.kind === "agent") return now.kind === "agent" && now.agent === a.agent;
      if (a.kind === "page") return now.kind === "page" && now.session === a.session;
      return now.kind === "anonymous" || now.kind === "page";
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    const method = req.method ?? "GET";
    if (path === "/") {
      const wantsHtml = /\btext\/html\b/i.test(req.headers.accept ?? "") && req.headers["mcp-session-id"] === undefined;
      if (method !== "GET" || !wantsHtml) return false;
      const a = await access(req);
      if (a.kind === "page") return html(res, 200, PAGE_HTML, PAGE_CSP);
      if (a.kind === "anonymous") {
        const { setCookie } = pages.create(false);
        res.setHeader("set-cookie", setCookie);
        return html(res, 200, PAGE_HTML, PAGE_CSP);
      }
      return html(res, 401, SIGN_IN_HTML);
    }
    if (path === "/login") {
      if (method !== "GET") return json(res, 405, { error: "use GET" }, { allow: "GET" });
      const secret = new URL(req.url ?? "/", "http://x").searchParams.get("t") ?? "";
      if (!(await redeemLoginSecret(opts.dataDir, secret))) {
        hub.log.warn("status page: a sign-in link was refused (unknown, used or expired)");
        return html(res, 401, LINK_INVALID_HTML);
      }
      const { setCookie } = pages.create(true);
      res.setHeader("set-cookie", setCookie);
      hub.log.info("status page: signed in with a one-time link");
      // A page, not a redirect: its own same-origin hop to "/" carries the SameSite=Strict
      // cookie even when the link was opened from another site or a local file.
      return html(res, 200, SIGNED_IN_HTML);
    }
    if (path === "/logout") {
      if (method !== "POST") return json(res, 405, { error: "use POST" }, { allow: "POST" });
      const session = pages.fromRequest(req);
      if (!session || !sameOrigin(req) || !PageSessions.csrfMatches(session, header(req, "x-csrf-token"))) {
        return json(res, 403, { error: "sign-out needs the page's session and CSRF token" });
      }
      res.setHeader("set-cookie", pages.destroy(req));
      return json(res, 200, { ok: true, message: "signed out" });
    }
    if (!path.startsWith("/api/")) return false;

    const a = await access(req);
    if (a.kind === "denied") {
      if (a.bearer || !req.headers.cookie) res.setHeader("www-authenticate", 'Bearer realm="mcphub"');
      return json(res, 401, { error: a.message });
    }
    const viewer: Viewer = a.kind === "agent" ? { kind: "agent", agent: a.agent } : { kind: "operator" };
    if (path === "/api/status" || path === "/api/events") {
      if (method !== "GET") return json(res, 405, { error: "use GET" }, { allow: "GET" });
      if (viewer.kind === "agent") {
        try {
          hub.view(viewer.agent); // an agent missing from the config has no scope to show
        } catch (err) {
          return json(res, 403, { error: errorText(err) });
        }
      }
      if (path === "/api/events") {
        return events.open(res, viewer, stillAllowed(req, a)) || json(res, 503, { error: "too many open status pages" });
      }
      const doc = await build(viewer);
      const extra = a.kind === "page" ? { signed_in: a.session.signedIn, csrf: a.session.csrf } : {};
      return json(res, 200, { ...doc, ...extra });
    }
    const m = ACTION_RE.exec(path);
    if (m) {
      if (method !== "POST") return json(res, 405, { error: "use POST" }, { allow: "POST" });
      const action = m[2] as ServerAction;
      if (!ACTIONS.includes(action)) return json(res, 404, { error: `unknown action "${m[2]}"; use ${ACTIONS.join(", ")}` });
      // A token is an agent's, not the operator's: actions need the page's own session.
      if (a.kind !== "page") return json(res, 403, { error: "actions are for the status page's signed-in session (not bearer tokens)" });
      if (!sameOrigin(req)) return json(res, 403, { error: "cross-origin request refused" });
      if (!PageSessions.csrfMatches(a.session, header(req, "x-csrf-token"))) {
        return json(res, 403, { error: "missing or wrong CSRF token; reload the page" });
      }
      let server: string;
      try {
        server = decodeURIComponent(m[1] ?? "");
      } catch {
        return json(res, 400, { error: "malformed server name" });
      }
      const r = await runAction(sources, server, action);
      hub.log.info(`status page: ${action} ${server}: ${r.message}`);
      return json(res, r.status, { ok: r.status < 300, message: r.message });
    }
    return json(res, 404, { error: "not found; the status API is /api/status and /api/events" });
  }

  return {
    handle,
    metricsViewer: async (req) => {
      const a = await access(req);
      if (a.kind === "denied") return { kind: "denied", message: a.message };
      return a.kind === "agent" ? { kind: "agent", agent: a.agent } : { kind: "operator" };
    },
    close: () => {
      events.close();
      timeline.dispose();
    },
  };
}

/**
 * State-changing requests must come from the page itself: browsers send Origin with every POST
 * made by fetch, and it must be this very origin (the general check admits any loopback port;
 * pages on other local ports are same-site, so SameSite alone would not stop them).
 */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  const host = req.headers.host;
  if (!origin || !host) return false;
  if (origin.toLowerCase() !== `http://${host.toLowerCase()}`) return false;
  const site = header(req, "sec-fetch-site");
  return site === undefined || site === "same-origin";
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === "string" ? v : undefined;
}

/** Sends a whole HTML answer; true, for `return html(...)` in handle(). */
function html(res: ServerResponse, status: number, body: string, csp = NOTE_CSP): true {
  res.writeHead(status, { ...COMMON_HEADERS, "content-type": "text/html; charset=utf-8", "content-security-policy": csp }).end(body);
  return true;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): true {
  res
    .writeHead(status, { ...COMMON_HEADERS, ...headers, "content-type": "application/json", "content-security-policy": "default-src 'none'; frame-ancestors 'none'" })
    .end(JSON.stringify(body));
  return true;
}
