// The status page's HTTP surface against a real daemon with real downstreams (server-everything,
// server-memory, and a fixture that fails with a stderr reason): who may see the page and its API
// with and without tokens, the one-time sign-in link from `mcphub open`, CSRF and origin checks on
// actions, enable/disable saved to the config file (comments kept) and applied to the running
// daemon, and no secret in any page, API answer or log line.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cookieOf, createTokens, http, startDaemon, type Daemon } from "../helpers/daemon.js";
import { doc, runMcphub, tempHome, type TempHome } from "../helpers/gateway.js";
import { NOTES_KEY, statusConfig } from "../helpers/status.js";

type Doc = {
  servers: { name: string; state: string; enabled: boolean; error?: string; stderr_line?: string; tools: number }[];
  agents: { name: string; servers: string[] | "all"; tokens: number }[];
  viewer: { kind: string; agent?: string };
  csrf?: string;
  signed_in?: boolean;
  tokens_required: boolean;
};

async function statusWhere(base: string, headers: Record<string, string>, ok: (d: Doc) => boolean): Promise<Doc> {
  let last: Doc | undefined;
  for (let i = 0; i < 600; i++) {
    const a = await http(`${base}/api/status`, { headers });
    if (a.status === 200) {
      last = a.json<Doc>();
      if (ok(last)) return last;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`status never matched: ${JSON.stringify(last?.servers)}`);
}

const stateOf = (d: Doc, name: string) => d.servers.find((s) => s.name === name)?.state;

describe("status page without tokens (loopback)", () => {
  let home: TempHome;
  let cfg: string;
  let daemon: Daemon;
  beforeAll(async () => {
    home = tempHome();
    cfg = home.writeConfig(statusConfig(home));
    daemon = await startDaemon(home, cfg);
  });
  afterAll(async () => {
    await daemon?.stop();
    home?.cleanup();
  });

  it("serves the page to a browser on /, and MCP clients on / still reach the MCP endpoint", async () => {
    const page = await http(`${daemon.base}/`, { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
    expect(page.headers["content-security-policy"]).toMatch(/script-src 'sha256-/);
    expect(page.headers["x-frame-options"]).toBe("DENY");
    expect(page.headers["cache-control"]).toBe("no-store");
    expect(String(page.headers["set-cookie"])).toMatch(new RegExp(`^mcphub_session_${daemon.port}=[^;]+; HttpOnly; SameSite=Strict; Path=/`));
    expect(page.body).toContain("<title>mcphub status</title>");
    const mcp = await http(`${daemon.base}/`, { headers: { accept: "application/json, text/event-stream" } });
    expect(mcp.status).toBe(400);
    expect(mcp.body).toContain("no session");
  });

  it("shows every server's state, the failing one with its redacted stderr reason, and no secret", async () => {
    const d = await statusWhere(daemon.base, {}, (x) => stateOf(x, "everything") === "ready" && stateOf(x, "memory") === "ready" && Boolean(x.servers.find((s) => s.name === "notes")?.stderr_line));
    expect(d.viewer).toEqual({ kind: "operator" });
    expect(d.csrf).toBeUndefined(); // no cookie, no CSRF token: reading only
    const notes = d.servers.find((s) => s.name === "notes");
    expect(notes?.error).toContain("exited with code 1");
    expect(notes?.stderr_line).toBe("error: cannot open /srv/notes.db: permission denied");
    expect(d.servers.find((s) => s.name === "everything")?.tools).toBeGreaterThan(5);
    const raw = (await http(`${daemon.base}/api/status`)).body;
    expect(raw).not.toContain(NOTES_KEY);
  });

  it("applies the Host and Origin checks to the page and its API as to /mcp", async () => {
    for (const path of ["/", "/api/status", "/api/events", "/login?t=x"]) {
      const evilHost = await http(`${daemon.base}${path}`, { headers: { host: "evil.example:80", accept: "text/html" } });
      expect(evilHost.status).toBe(403);
      const evilOrigin = await http(`${daemon.base}${path}`, { headers: { origin: "https://evil.example", accept: "text/html" } });
      expect(evilOrigin.status).toBe(403);
    }
  });

  it("needs the page's cookie, its CSRF token and the page's own origin for an action", async () => {
    const url = `${daemon.base}/api/servers/memory/reconnect`;
    const origin = daemon.base;
    expect((await http(url, { method: "POST", headers: { origin } })).status).toBe(403); // no session
    const cookie = cookieOf(await http(`${daemon.base}/`, { headers: { accept: "text/html" } }));
    const d = (await http(`${daemon.base}/api/status`, { headers: { cookie } })).json<Doc>();
    expect(d.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(d.signed_in).toBe(false);
    const csrf = d.csrf as string;
    const post = (headers: Record<string, string>) => http(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" });
    expect((await post({ cookie, origin })).status).toBe(403); // no CSRF header
    expect((await post({ cookie, origin, "x-csrf-token": `${csrf.slice(1)}x` })).status).toBe(403);
    expect((await post({ cookie, "x-csrf-token": csrf })).status).toBe(403); // no Origin
    // Another local port is same-site for cookies, but not the same origin.
    expect((await post({ cookie, origin: "http://127.0.0.1:1", "x-csrf-token": csrf })).status).toBe(403);
    expect((await post({ cookie, origin, "x-csrf-token": csrf, "sec-fetch-site": "same-site" })).status).toBe(403);
    const ok = await post({ cookie, origin, "x-csrf-token": csrf });
    expect(ok.status).toBe(202);
    expect(ok.json()).toEqual({ ok: true, message: "reconnecting memory" });
    await statusWhere(daemon.base, {}, (x) => stateOf(x, "memory") === "ready");
    const unknown = await post({ cookie, origin, "x-csrf-token": csrf }).then(() => http(`${daemon.base}/api/servers/nope/reconnect`, { method: "POST", headers: { cookie, origin, "x-csrf-token": csrf } }));
    expect(unknown.status).toBe(404);
    const badAction = await http(`${daemon.base}/api/servers/memory/explode`, { method: "POST", headers: { cookie, origin, "x-csrf-token": csrf } });
    expect(badAction.status).toBe(404);
    expect((await http(url, { headers: { cookie } })).status).toBe(405);
  });

  it("ends a loopback browser session once the first token exists", async () => {
    const cookie = cookieOf(await http(`${daemon.base}/`, { headers: { accept: "text/html" } }));
    expect((await http(`${daemon.base}/api/status`, { headers: { cookie } })).status).toBe(200);
    expect((await runMcphub(home, ["--config", cfg, "token", "create", "claude"])).code).toBe(0);
    expect((await http(`${daemon.base}/api/status`, { headers: { cookie } })).status).toBe(401);
    expect((await http(`${daemon.base}/`, { headers: { cookie, accept: "text/html" } })).status).toBe(401);
  });
});

describe("status page with tokens", () => {
  let home: TempHome;
  let cfg: string;
  let daemon: Daemon;
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    home = tempHome();
    cfg = home.writeConfig(statusConfig(home));
    home.env.MCPHUB_LOG_LEVEL = "info"; // the log check below reads every line the daemon writes
    Object.assign(tokens, await createTokens(home, cfg, ["claude", "codex"]));
    daemon = await startDaemon(home, cfg);
  });
  afterAll(async () => {
    await daemon?.stop();
    home?.cleanup();
  });

  async function signIn(): Promise<{ cookie: string; csrf: string; secret: string }> {
    const r = await runMcphub(home, ["--config", cfg, "open", "--listen", `127.0.0.1:${daemon.port}`, "--no-browser", "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { url: string; sign_in: boolean; opened: boolean };
    expect(out.sign_in).toBe(true);
    expect(out.opened).toBe(false);
    const secret = new URL(out.url).searchParams.get("t") as string;
    const landed = await http(out.url, { headers: { accept: "text/html" } });
    expect(landed.status).toBe(200);
    expect(landed.body).toContain('content="0;url=/"'); // on to the clean URL
    expect(landed.body).not.toContain(secret);
    expect(String(landed.headers["set-cookie"])).toContain("HttpOnly; SameSite=Strict");
    const cookie = cookieOf(landed);
    const d = (await http(`${daemon.base}/api/status`, { headers: { cookie } })).json<Doc>();
    expect(d.signed_in).toBe(true);
    return { cookie, csrf: d.csrf as string, secret };
  }

  it("asks a browser to sign in, and a script for its token", async () => {
    const page = await http(`${daemon.base}/`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(401);
    expect(page.body).toContain("mcphub open");
    expect(page.headers["set-cookie"]).toBeUndefined();
    const api = await http(`${daemon.base}/api/status`);
    expect(api.status).toBe(401);
    expect(api.headers["www-authenticate"]).toBe('Bearer realm="mcphub"');
    expect((await http(`${daemon.base}/api/status`, { headers: { authorization: "Bearer mcphub_nope" } })).status).toBe(401);
  });

  it("serves /api/status to a bearer token: that agent's scope, read-only, no stderr", async () => {
    const claude = await statusWhere(daemon.base, { authorization: `Bearer ${tokens.claude}` }, (x) => stateOf(x, "notes") === "failed" || Boolean(x.servers.find((s) => s.name === "notes")?.error));
    expect(claude.viewer).toEqual({ kind: "agent", agent: "claude" });
    expect(claude.servers.map((s) => s.name)).toEqual(["everything", "memory", "notes"]);
    expect(claude.agents.map((a) => a.name)).toEqual(["claude"]);
    expect(claude.csrf).toBeUndefined();
    const raw = (await http(`${daemon.base}/api/status`, { headers: { authorization: `Bearer ${tokens.codex}` } })).body;
    const codex = JSON.parse(raw) as Doc;
    expect(codex.servers.map((s) => s.name)).toEqual(["memory"]);
    for (const text of [raw, JSON.stringify(claude)]) {
      expect(text).not.toContain("stderr_line");
      expect(text).not.toContain("config_path");
      expect(text).not.toContain(home.dir); // no paths of the operator's machine
      expect(text).not.toContain(NOTES_KEY);
    }
    const act = await http(`${daemon.base}/api/servers/memory/disable`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.claude}`, origin: daemon.base, "x-csrf-token": "x" },
    });
    expect(act.status).toBe(403);
    expect(act.body).toContain("not bearer tokens");
  });

  it("signs a browser in once per `mcphub open` link, then serves the page", async () => {
    const { cookie, secret } = await signIn();
    const again = await http(`${daemon.base}/login?t=${secret}`, { headers: { accept: "text/html" } });
    expect(again.status).toBe(401);
    expect(again.body).toContain("not valid");
    expect(again.headers["set-cookie"]).toBeUndefined();
    const page = await http(`${daemon.base}/`, { headers: { cookie, accept: "text/html" } });
    expect(page.status).toBe(200);
    for (const t of [secret, tokens.claude, tokens.codex, cookie.split("=")[1]]) expect(page.body).not.toContain(t);
    const signedOutCookie = (await http(`${daemon.base}/logout`, { method: "POST", headers: { cookie, origin: daemon.base, "x-csrf-token": "wrong" } })).status;
    expect(signedOutCookie).toBe(403);
  });

  it("disables and enables a server from the page: saved to the config (comments kept) and applied live", async () => {
    const { cookie, csrf } = await signIn();
    await statusWhere(daemon.base, { cookie }, (x) => stateOf(x, "memory") === "ready");
    const before = readFileSync(cfg, "utf8");
    const act = (what: string) =>
      http(`${daemon.base}/api/servers/memory/${what}`, {
        method: "POST",
        headers: { cookie, origin: daemon.base, "x-csrf-token": csrf, "content-type": "application/json" },
        body: "{}",
      });
    const off = await act("disable");
    expect(off.status).toBe(200);
    expect(off.json<{ message: string }>().message).toContain("memory disabled (saved to");
    const after = readFileSync(cfg, "utf8");
    expect(after).toContain("# status page test config: these comments must survive a disable from the page");
    expect(after).toContain("# keep me");
    expect(after).toContain("# the reference server");
    expect(after).toMatch(/memory:\n\s+command: \S+\s+# keep me\n\s+args: \[[^\]]+\]\n\s+enabled: false\n/);
    expect(after.replace(/\n\s+enabled: false/, "")).toBe(before);
    // The running daemon stopped it: agents see it disabled.
    const d = await statusWhere(daemon.base, { cookie }, (x) => stateOf(x, "memory") === "disabled");
    expect(d.servers.find((s) => s.name === "memory")?.enabled).toBe(false);
    const client = new Client({ name: "status-test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${tokens.claude}` } } }));
    const listed = doc((await client.callTool({ name: "mcphub_list_servers", arguments: {} })) as CallToolResult);
    expect((listed.servers as { name: string; state: string }[]).find((s) => s.name === "memory")?.state).toBe("disabled");
    const call = (await client.callTool({ name: "mcphub_call_tool", arguments: { tool: "memory__read_graph", arguments: {} } })) as CallToolResult;
    expect(JSON.stringify(call)).toMatch(/disabled|unknown tool|not/i);
    await client.close();
    const on = await act("enable");
    expect(on.status).toBe(200);
    expect(readFileSync(cfg, "utf8")).toMatch(/enabled: true/);
    // Enabled again, live: ready, or idle when its tool list was cached before the disable (under
    // `start: auto` such a server starts on its first call; docs/lifecycle.md).
    const back = await statusWhere(daemon.base, { cookie }, (x) => ["ready", "idle"].includes(stateOf(x, "memory") ?? ""));
    expect(back.servers.find((s) => s.name === "memory")?.enabled).toBe(true);
    // A reconnect of a disabled server is refused with the reason.
    await act("disable");
    const refused = await act("reconnect");
    expect(refused.status).toBe(409);
    expect(refused.json<{ message: string }>().message).toContain("disabled");
    await act("enable");
    // Three waits of up to 60 s each (statusWhere): a bound above their sum, so a state that never
    // comes is reported with the servers' states rather than as a bare test timeout.
  }, 200_000);

  it("never writes a token, sign-in link or cookie to its log", async () => {
    const { cookie, secret } = await signIn();
    const log = daemon.stderr();
    expect(log).toContain("signed in with a one-time link");
    for (const t of [secret, cookie.split("=")[1] as string, tokens.claude as string, NOTES_KEY]) expect(log).not.toContain(t);
  });

  it("`mcphub open` says so when no daemon answers", async () => {
    const r = await runMcphub(home, ["--config", cfg, "open", "--listen", "127.0.0.1:1", "--no-browser"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no mcphub daemon answers at http://127.0.0.1:1/");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});
