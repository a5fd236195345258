// Team mode operations end to end, with a private PostgreSQL, real `mcphub up` replicas and the
// real CLI: a single machine's data directory imported into PostgreSQL (and exported back to the
// same files), its receipt paged through a replica and its token accepted there; the one-shot
// commands on the configured store (stats counts every replica's calls, an approval from another
// machine takes effect in a running replica, auth status and logout see the shared sign-in, doctor
// checks the store); /healthz saying the store is down while PostgreSQL is stopped, and ok again
// once it is back; the per-client connection cap behind HAProxy with `option forwardfor`
// (trusted_proxies); and the dead-owner rule: a detached call whose replica was SIGKILLed is
// reported lost once its heartbeat is replica_timeout old. Skips with the reason when PostgreSQL
// or HAProxy cannot start here.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request, type IncomingMessage } from "node:http";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokens, http, httpClient, startDaemon, type Daemon } from "../helpers/daemon.js";
import { doc, FIXTURES, runMcphub, tempHome, text, until, type TempHome } from "../helpers/gateway.js";
import { haproxyMissing, startHaproxy, type Balancer } from "../helpers/haproxy.js";
import { reassemble } from "../helpers/page-chain.js";
import { startPostgres, type Postgres } from "../helpers/postgres.js";
import { openStore } from "../../src/store/index.js";
import { MIGRATIONS } from "../../src/store/postgres/index.js";
import { OAuthStore } from "../../src/vault/oauth.js";
import { freePort } from "../helpers/servers.js";

const node = process.execPath;
const RECORDER = join(FIXTURES, "recorder.mjs");
const PROGRESS = join(FIXTURES, "progress-cancel.mjs");
const PASSPHRASE = "team-ops-passphrase-not-a-secret";
/** The schema version a migrated store is at (the last migration this build knows). */
const SCHEMA = MIGRATIONS.at(-1)?.version as number;

let pg: Postgres | undefined;
let skip = "";
let solo: TempHome; // the single machine whose data directory is imported
let r1Home: TempHome;
let r2Home: TempHome;
let r3Home: TempHome;
let r3Cfg = "";
let soloCfg = "";
let soloTeamCfg = "";
let r1Cfg = "";
let r2Cfg = "";
let lbPort = 0;
let token = "";
let receipt = "";
let r1: Daemon | undefined;
let r2: Daemon | undefined;
let lb: Balancer | undefined;

function servers(log: string) {
  return {
    rec: { command: node, args: [RECORDER], env: { RECORDER_LOG: log } },
    // Every tool of q waits for a first approval (quarantine), by an operator on any machine.
    q: { command: node, args: [RECORDER], quarantine: true },
    slow: { command: node, args: [PROGRESS] },
  };
}

function teamConfig(log: string, extra: Record<string, unknown> = {}) {
  return {
    expose: "lazy",
    store: pg?.url,
    allowed_hosts: [`127.0.0.1:${lbPort}`],
    trusted_proxies: ["127.0.0.1/32"],
    replica_timeout: "2s",
    agents: { alpha: {} },
    servers: servers(log),
    ...extra,
  };
}

beforeAll(async () => {
  const noHaproxy = haproxyMissing();
  if (noHaproxy) {
    skip = noHaproxy;
    return;
  }
  const started = await startPostgres();
  if ("skip" in started) {
    skip = started.skip;
    return;
  }
  pg = started;
  lbPort = await freePort();
  [solo, r1Home, r2Home, r3Home] = [tempHome("mcphub-solo-"), tempHome("mcphub-r1-"), tempHome("mcphub-r2-"), tempHome("mcphub-r3-")] as [TempHome, TempHome, TempHome, TempHome];
  for (const h of [solo, r1Home, r2Home, r3Home]) h.env.MCPHUB_VAULT_PASSPHRASE = PASSPHRASE;
  const log = join(solo.dir, "recorder.log");
  soloCfg = solo.writeConfig({ expose: "lazy", agents: { alpha: {} }, servers: servers(log) });
  soloTeamCfg = solo.writeConfig(teamConfig(log), "team.yaml");
  r1Cfg = r1Home.writeConfig(teamConfig(log));
  r2Cfg = r2Home.writeConfig(teamConfig(log));
  // Replica 3 sits behind the balancer with a small per-client cap (the trusted_proxies test).
  r3Cfg = r3Home.writeConfig(teamConfig(log, { http_limits: { max_connections_per_client: 2 } }));
}, 180_000);

afterAll(async () => {
  await lb?.stop();
  for (const r of [r1, r2]) if (r && r.child.exitCode === null && r.child.signalCode === null) await r.stop();
  pg?.destroy();
  for (const h of [solo, r1Home, r2Home, r3Home]) h?.cleanup();
});

/** The files of the shared state in a data directory (not its locks, key file, secrets or daemon record). */
function sharedFiles(dir: string): Map<string, string> {
  const keep = /^(tokens\.json|vault\/keyring\.json|vault\/oauth\.enc|vault\/results\/[^/]+\.res|vault\/detached\/[^/]+\.rec|definitions\/[^/.][^/]*\.json|catalog\/[^/.][^/]*\.json|telemetry\/(calls|audit)-[\d-]+\.ndjson)$/;
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (keep.test(relative(dir, p))) out.set(relative(dir, p), readFileSync(p).toString("base64"));
    }
  };
  walk(dir);
  return out;
}

const cli = (home: TempHome, cfg: string, args: string[]) => runMcphub(home, ["--config", cfg, ...args]);

describe("team mode operations on PostgreSQL", () => {
  it("store import moves a data directory into PostgreSQL, export writes the same files back, and a replica pages the imported receipt", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    // One machine on its own files: a token, a stored result, call records, catalogue and pins.
    token = (await createTokens(solo, soloCfg, ["alpha"])).alpha as string;
    const local = await startDaemon(solo, soloCfg);
    try {
      const c = await httpClient(local.url, token);
      const stored = doc(await c.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 300_000 } }));
      expect(stored.status).toBe("stored");
      receipt = String(stored.callId);
      await c.close();
    } finally {
      await local.stop();
    }

    const dry = await cli(solo, soloTeamCfg, ["store", "import", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/Dry run: import .* would copy \d+/);
    const imported = await cli(solo, soloTeamCfg, ["store", "import", "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    const report = JSON.parse(imported.stdout) as { rows: { space: string; copied: number }[] };
    const copied = Object.fromEntries(report.rows.map((r) => [r.space, r.copied]));
    expect(copied).toMatchObject({ keyring: 1, tokens: 1, results: 1 });
    expect(copied.calls).toBeGreaterThanOrEqual(1);
    expect(copied.definitions).toBeGreaterThanOrEqual(1);
    expect(copied.catalog).toBeGreaterThanOrEqual(1);
    // The summary table, and a re-run that finds everything there.
    const again = await cli(solo, soloTeamCfg, ["store", "import"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/WHAT\s+UNIT\s+SOURCE\s+COPIED\s+SAME/);
    expect(again.stdout).toMatch(/stored results \(sealed chunks\)\s+results\s+1\s+0\s+1\s+0\s+0\s+0 B/);
    expect(again.stdout).toMatch(/already holds everything in .*; nothing to do/);

    // Back to files: the same bytes as the data directory that was imported.
    const out = join(solo.dir, "exported");
    const exported = await cli(solo, soloTeamCfg, ["store", "export", out]);
    expect(exported.code, exported.stderr).toBe(0);
    const a = sharedFiles(join(solo.dir, "data"));
    const b = sharedFiles(out);
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    for (const [path, bytes] of a) expect(b.get(path) === bytes, `${path} differs after the round trip`).toBe(true);
    // An export into a directory that holds something else is refused, precisely and without a trace.
    writeFileSync(join(out, "tokens.json"), '{"version":1,"tokens":[]}\n');
    const refused = await cli(solo, soloTeamCfg, ["store", "export", out]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/is not empty: 1 entry differs from the source \(tokens\/tokens\).*Nothing was written.*--merge.*--force/);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(join(out, "tokens.json"), "utf8")).toBe('{"version":1,"tokens":[]}\n');

    // A replica on PostgreSQL (another machine: its own empty data directory) accepts the token
    // and pages the receipt the single machine stored.
    r1 = await startDaemon(r1Home, r1Cfg);
    const c = await httpClient(r1.url, token);
    try {
      const { bytes } = await reassemble((cursor) => c.caller.call("mcphub_get_result", { callId: receipt, cursor }), receipt);
      expect((JSON.parse(bytes.toString()) as { content: { text: string }[] }).content[0]?.text).toBe("x".repeat(300_000));
      await c.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 10 } });
    } finally {
      await c.close();
    }
    // Now the store holds what the replica added: a plain import is refused, --merge adds nothing lost.
    const busy = await cli(solo, soloTeamCfg, ["store", "import"]);
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toMatch(/is not empty: .*--merge/);
    const merged = await cli(solo, soloTeamCfg, ["store", "import", "--merge", "--json"]);
    expect(merged.code, merged.stderr).toBe(0);
  }, 120_000);

  it("stats on another machine reads every replica's call records from PostgreSQL", async (ctx) => {
    if (!pg || !r1) return ctx.skip(skip || "needs the replica of the first test");
    const r = await cli(r2Home, r2Cfg, ["stats", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const stats = JSON.parse(r.stdout) as { totals: { calls: number }; servers: { server: string; calls: number }[] };
    // The single machine's call (imported) and the replica's own.
    expect(stats.servers.find((s) => s.server === "rec")?.calls).toBeGreaterThanOrEqual(2);
    // The machine's own data directory holds none of them.
    expect(readdirSync(r2Home.dir)).not.toContain("data");
  });

  it("approve on another machine takes effect in the running replica; doctor checks the store", async (ctx) => {
    if (!pg || !r1) return ctx.skip(skip || "needs the replica of the first test");
    const c = await httpClient(r1.url, token);
    try {
      const refused = doc(await c.caller.call("mcphub_call_tool", { tool: "q__big", arguments: { bytes: 5 } }));
      expect(refused).toMatchObject({ status: "refused", reason: "awaiting_approval", approve: "mcphub approve q__big" });
      const listed = await cli(r2Home, r2Cfg, ["approve", "--json"]);
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout) as { pending: { namespaced: string }[] }).pending.map((p) => p.namespaced)).toContain("q__big");
      const approved = await cli(r2Home, r2Cfg, ["approve", "q"]);
      expect(approved.code, approved.stderr).toBe(0);
      await until(async () => text(await c.caller.call("mcphub_call_tool", { tool: "q__big", arguments: { bytes: 5 } })) === "xxxxx", "the replica to allow the approved tool", 100);
      // The approval is in the shared audit trail.
      const stats = await cli(r2Home, r2Cfg, ["stats", "--json"]);
      expect((JSON.parse(stats.stdout) as { guardrails?: { approved?: number } }).guardrails?.approved).toBeGreaterThanOrEqual(1);
    } finally {
      await c.close();
    }
    const dr = await cli(r2Home, r2Cfg, ["doctor", "--json"]);
    const checks = JSON.parse(dr.stdout) as { name: string; ok: boolean; detail: string }[];
    const store = checks.find((x) => x.name === "store");
    expect(store?.ok, JSON.stringify(store)).toBe(true);
    expect(store?.detail).toMatch(new RegExp(`^PostgreSQL postgres://mcphub@127\\.0\\.0\\.1:\\d+/mcphub: schema ${SCHEMA}, [\\d.]+ ms$`));
    expect(checks.find((x) => x.name === "vault")?.detail).toMatch(/passphrase/);
  }, 60_000);

  it("auth status and logout on another machine read and change the sign-in every replica shares", async (ctx) => {
    if (!pg || !r1) return ctx.skip(skip || "needs the imported store of the first test");
    const url = "http://127.0.0.1:9/mcp";
    const cfg = r2Home.writeConfig({ ...teamConfig(join(solo.dir, "recorder.log")), servers: { ...servers(join(solo.dir, "recorder.log")), remote: { url } } }, "auth.yaml");
    // A sign-in as a replica stores it: sealed with the team's data key, in PostgreSQL.
    const store = await openStore({ dataDir: join(r1Home.dir, "data"), url: String(pg.url), follow: true });
    try {
      const oauth = await OAuthStore.open({ dataDir: join(r1Home.dir, "data"), store, env: { ...process.env, MCPHUB_VAULT_PASSPHRASE: PASSPHRASE, MCPHUB_KEYCHAIN: "off" } });
      const now = Date.now();
      await oauth.update("remote", () => ({ url, account: "ada@example.org", tokens: { access_token: "canary-access-token-77", token_type: "Bearer", scope: "read", obtained_at: now, expires_at: now + 3_600_000 } }));
    } finally {
      await store.close();
    }
    const status = await cli(r2Home, cfg, ["auth", "status", "--json"]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject([{ server: "remote", state: "signed_in", account: "ada@example.org", scopes: ["read"] }]);
    expect(status.stdout + status.stderr).not.toContain("canary-access-token-77");
    const out = await cli(r2Home, cfg, ["auth", "logout", "remote"]);
    expect(out.code, out.stderr).toBe(0);
    const after = await cli(r2Home, cfg, ["auth", "status", "--json"]);
    expect((JSON.parse(after.stdout) as { state: string }[]).filter((e) => e.state === "signed_in")).toEqual([]);
  }, 60_000);

  it("behind HAProxy (option forwardfor) the per-client cap counts each client, not the balancer; X-Forwarded-For a client writes does not get it out", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const r3 = await startDaemon(r3Home, r3Cfg);
    lb = await startHaproxy(r3Home.dir, [r3.port], lbPort, { forwardfor: true });
    const open: IncomingMessage[] = [];
    const sessions: string[] = [];
    try {
      // Client 127.0.0.2 holds two requests open (each session's event stream): its cap of 2.
      for (let i = 0; i < 2; i++) {
        const sid = await initialize("127.0.0.2");
        expect(sid.status).toBe(200);
        sessions.push(String(sid.session));
        open.push(await stream("127.0.0.2", String(sid.session)));
      }
      const third = await initialize("127.0.0.2");
      expect(third.status).toBe(429);
      expect(third.body).toMatch(/too many connections from 127\.0\.0\.2 \(2, http_limits\.max_connections_per_client; counted per request through the proxy 127\.0\.0\.1\)/);
      // Writing its own X-Forwarded-For does not help: HAProxy appends the real address.
      expect((await initialize("127.0.0.2", { "X-Forwarded-For": "10.9.9.9" })).status).toBe(429);
      // Another client through the same balancer is not under that cap (without trusted_proxies
      // both would be the balancer's 127.0.0.1, already at 2 connections).
      expect((await initialize("127.0.0.3")).status).toBe(200);
      // Once its sessions end (a DELETE, here from the other client: a session is the agent's),
      // their streams close and the client is admitted again.
      for (const sid of sessions) expect(await remove("127.0.0.3", sid)).toBe(200);
    } finally {
      for (const s of open) s.destroy();
    }
    await until(async () => (await initialize("127.0.0.2")).status === 200, "client 127.0.0.2 under its cap again", 100);
    await lb.stop();
    lb = undefined;
    await r3.stop();
  }, 60_000);

  it("/healthz says the store is down (degraded, with the reason) while PostgreSQL is stopped, and ok once it is back", async (ctx) => {
    if (!pg || !r1) return ctx.skip(skip || "needs the replica of the first test");
    const health = async () => (await http(`${r1?.base}/healthz`, { headers: { Host: `127.0.0.1:${r1?.port}` } })).json<{ status: string; store: { kind: string; reachable: boolean; schema_version?: number; latency_ms: number; reason?: string } }>();
    const up = await health();
    expect(up.status).toBe("ok");
    expect(up.store).toMatchObject({ kind: "postgres", reachable: true, schema_version: SCHEMA, following: true });
    expect(typeof up.store.latency_ms).toBe("number");
    // The status page's document has the same card; an agent's view carries no URL or error text.
    const page = (await http(`${r1.base}/api/status`, { headers: { Host: `127.0.0.1:${r1.port}`, Authorization: `Bearer ${token}` } })).json<{ store?: Record<string, unknown> }>();
    expect(page.store).toMatchObject({ kind: "postgres", reachable: true, schema_version: SCHEMA });
    expect(page.store?.where).toBeUndefined();
    pg.stop();
    try {
      let down = up;
      await until(async () => {
        down = await health();
        return !down.store.reachable;
      }, "/healthz to see PostgreSQL down", 100);
      expect(down.status).toBe("degraded");
      expect(down.store.reason).toMatch(/^PostgreSQL cannot be reached \((connection refused|connection lost|the server is shutting down or starting up)\)$/);
      // No URL, host or port of the database before a token check.
      expect(JSON.stringify(down)).not.toContain(String(pg.port));
      // The daemon still serves calls that store nothing.
      const c = await httpClient(r1.url, token);
      expect(text(await c.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 7 } }))).toBe("x".repeat(7));
      await c.close();
    } finally {
      pg.start();
    }
    await until(async () => {
      const h = await health();
      return h.status === "ok" && h.store.reachable && h.store.schema_version === SCHEMA;
    }, "/healthz ok again", 200);
  }, 90_000);

  it("a detached call whose replica was SIGKILLed is pending while its heartbeat is fresh, then reported lost (replica_timeout 2s)", async (ctx) => {
    if (!pg || !r1) return ctx.skip(skip || "needs the replica of the first test");
    r2 = await startDaemon(r2Home, r2Cfg);
    const a = await httpClient(r1.url, token);
    const b = await httpClient(r2.url, token);
    try {
      const accepted = doc(await a.caller.call("mcphub_call_tool", { tool: "slow__slow", arguments: { steps: 100000 }, detach: true }));
      expect(accepted.status).toBe("accepted");
      const poll = async () => doc(await b.caller.call("mcphub_poll_result", { callId: accepted.callId }));
      expect((await poll()).status).toBe("pending");
      r1.child.kill("SIGKILL");
      const killed = Date.now();
      // Its heartbeat is younger than replica_timeout: still taken to run.
      expect((await poll()).status).toBe("pending");
      let last: Record<string, unknown> = {};
      await until(async () => {
        last = await poll();
        return last.status !== "pending";
      }, "the other replica to give the call up", 200);
      expect(Date.now() - killed).toBeGreaterThanOrEqual(1000);
      expect(JSON.stringify(last)).toMatch(/stopped before it finished/);
    } finally {
      await a.close().catch(() => undefined);
      await b.close();
    }
  }, 60_000);
});

/** An initialize POST through the balancer from a local address; the status, body and session id. */
function initialize(from: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; session?: string }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "cap", version: "1" } } });
    const req = request(
      {
        host: "127.0.0.1",
        port: lbPort,
        localAddress: from,
        path: "/mcp",
        method: "POST",
        agent: false,
        headers: { Host: `127.0.0.1:${lbPort}`, Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Content-Length": Buffer.byteLength(body), ...headers },
      },
      (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, ...(typeof res.headers["mcp-session-id"] === "string" ? { session: res.headers["mcp-session-id"] } : {}) }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Ends a session (DELETE) through the balancer; the status. */
function remove(from: string, session: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: lbPort, localAddress: from, path: "/mcp", method: "DELETE", agent: false, headers: { Host: `127.0.0.1:${lbPort}`, Authorization: `Bearer ${token}`, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** The session's event stream (GET), held open through the balancer; resolves once it answered 200. */
function stream(from: string, session: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: lbPort,
        localAddress: from,
        path: "/mcp",
        method: "GET",
        agent: false,
        headers: { Host: `127.0.0.1:${lbPort}`, Authorization: `Bearer ${token}`, Accept: "text/event-stream", "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25" },
      },
      (res) => (res.statusCode === 200 ? resolve(res) : reject(new Error(`GET stream answered ${res.statusCode}`))),
    );
    req.on("error", reject);
    req.end();
  });
}
