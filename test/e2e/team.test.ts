// Team mode end to end: a private PostgreSQL, two `mcphub up` replicas (each with a data directory
// of its own, as on two machines) on `store: postgres://...`, HAProxy in front with affinity on
// Mcp-Session-Id, and the SDK's streamable HTTP client. What one replica writes, the other reads:
// receipts, detached calls, tokens (a revoke holds on the other replica within a second, by
// LISTEN/NOTIFY). A replica that does not know a session answers 404, so the client initializes
// again (the spec's rule); a replica killed with SIGKILL mid-call loses nothing acknowledged and
// replays nothing. Skips with the reason when PostgreSQL or HAProxy cannot start here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokens, http, httpClient, startDaemon, type Daemon } from "../helpers/daemon.js";
import { doc, FIXTURES, runMcphub, tempHome, text, until, type TempHome } from "../helpers/gateway.js";
import { haproxyMissing, startHaproxy, type Balancer } from "../helpers/haproxy.js";
import { freePort } from "../helpers/servers.js";
import { startPostgres, type Postgres } from "../helpers/postgres.js";
import { reassemble } from "../helpers/page-chain.js";

const node = process.execPath;
const RECORDER = join(FIXTURES, "recorder.mjs");
const PROGRESS = join(FIXTURES, "progress-cancel.mjs");
const PASSPHRASE = "team-test-passphrase-not-a-secret";

let pg: Postgres | undefined;
let skip = "";
const homes: TempHome[] = [];
const replicas: Daemon[] = [];
let lb: Balancer | undefined;
let cfgs: string[] = [];
let token = "";
let recorderLog = "";

function config(store: string, log: string, lbPort: number) {
  return {
    expose: "lazy",
    store,
    // The name clients reach the replicas by: the balancer's address.
    allowed_hosts: [`127.0.0.1:${lbPort}`],
    agents: { alpha: {}, beta: {} },
    servers: { rec: { command: node, args: [RECORDER], env: { RECORDER_LOG: log } }, slow: { command: node, args: [PROGRESS] } },
  };
}

async function startReplica(i: number): Promise<Daemon> {
  const home = homes[i] as TempHome;
  return startDaemon(home, cfgs[i] as string);
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
  for (let i = 0; i < 2; i++) {
    const home = tempHome("mcphub-team-");
    home.env.MCPHUB_VAULT_PASSPHRASE = PASSPHRASE;
    homes.push(home);
  }
  recorderLog = join((homes[0] as TempHome).dir, "recorder.log");
  const lbPort = await freePort();
  cfgs = homes.map((h) => h.writeConfig(config(pg?.url as string, recorderLog, lbPort)));
  // The token is created through the CLI of the first machine, into PostgreSQL.
  token = (await createTokens(homes[0] as TempHome, cfgs[0] as string, ["alpha"])).alpha as string;
  for (let i = 0; i < 2; i++) replicas.push(await startReplica(i));
  lb = await startHaproxy((homes[0] as TempHome).dir, replicas.map((r) => r.port), lbPort);
}, 180_000);

afterAll(async () => {
  await lb?.stop();
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) await r.stop();
  pg?.destroy();
  for (const h of homes) h.cleanup();
});

const replica = (i: number) => replicas[i] as Daemon;

describe("team mode: two replicas on PostgreSQL behind HAProxy", () => {
  it("store status names PostgreSQL and the applied migrations", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const r = await runMcphub(homes[1] as TempHome, ["--config", cfgs[1] as string, "store", "status", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as { kind: string; where: string; applied: { version: number }[]; pending: unknown[] };
    expect(s.kind).toBe("postgres");
    expect(s.applied.length).toBeGreaterThan(0);
    expect(s.pending).toEqual([]);
    expect(s.where).not.toMatch(/password/);
  });

  it("sessions through the balancer: each client stays on its replica and both replicas serve", async (ctx) => {
    if (!pg || !lb) return ctx.skip(skip);
    const clients = await Promise.all([httpClient(lb.url, token), httpClient(lb.url, token), httpClient(lb.url, token), httpClient(lb.url, token)]);
    try {
      for (const c of clients) {
        for (let i = 0; i < 3; i++) {
          const r = await c.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 10 } });
          expect(text(r)).toBe("x".repeat(10));
        }
      }
      // Round robin placed the sessions on both replicas (each counts its own), and every call
      // above succeeded, so affinity kept each session on the replica that created it.
      const counts = await Promise.all(
        [0, 1].map(async (i) => (await http(`${replica(i).base}/healthz`, { headers: { Host: `127.0.0.1:${replica(i).port}` } })).json<{ sessions: number }>().sessions),
      );
      expect(counts.every((n) => n >= 1), JSON.stringify(counts)).toBe(true);
      expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(4);
    } finally {
      for (const c of clients) await c.close();
    }
    const calls = readFileSync(recorderLog, "utf8").trim().split("\n").length;
    expect(calls).toBeGreaterThanOrEqual(12);
  });

  it("a replica that does not know a session answers 404, so the client initializes again", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const c = await httpClient(replica(0).url, token);
    try {
      const sid = (c.transport as { sessionId?: string } | undefined)?.sessionId;
      expect(sid).toBeTruthy();
      const other = await http(replica(1).url, {
        method: "POST",
        headers: {
          Host: `127.0.0.1:${replica(1).port}`,
          Authorization: `Bearer ${token}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "Mcp-Session-Id": String(sid),
          "MCP-Protocol-Version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(other.status).toBe(404);
    } finally {
      await c.close();
    }
  });

  it("a receipt written on one replica pages from the other, and is refused to another agent", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const a = await httpClient(replica(0).url, token);
    const b = await httpClient(replica(1).url, token);
    try {
      const stored = doc(await a.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 300_000 } }));
      expect(stored.status).toBe("stored");
      const { bytes } = await reassemble((cursor) => b.caller.call("mcphub_get_result", { callId: stored.callId, cursor }), String(stored.callId));
      expect((JSON.parse(bytes.toString()) as { content: { text: string }[] }).content[0]?.text).toBe("x".repeat(300_000));
      const betaToken = (await createTokens(homes[1] as TempHome, cfgs[1] as string, ["beta"])).beta as string;
      const beta = await httpClient(replica(1).url, betaToken);
      try {
        const refused = await beta.caller.call("mcphub_get_result", { callId: stored.callId });
        expect(refused.isError).toBe(true);
      } finally {
        await beta.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a detached call started on one replica is pollable on the other", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const a = await httpClient(replica(0).url, token);
    const b = await httpClient(replica(1).url, token);
    try {
      const accepted = doc(await a.caller.call("mcphub_call_tool", { tool: "rec__store", arguments: { key: "k", value: "v" }, detach: true }));
      expect(accepted.status).toBe("accepted");
      let answer = "";
      await until(async () => {
        const p = await b.caller.call("mcphub_poll_result", { callId: accepted.callId });
        if ((p.structuredContent as { status?: string } | undefined)?.status === "pending") return false;
        answer = text(p);
        return true;
      }, "the detached call to finish", 400);
      expect(answer).toBe("stored k");
      // Still running on replica 0: the other replica says pending (its owner is alive), not lost.
      const running = doc(await a.caller.call("mcphub_call_tool", { tool: "slow__slow", arguments: { steps: 100000 }, detach: true }));
      expect(doc(await b.caller.call("mcphub_poll_result", { callId: running.callId })).status).toBe("pending");
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a token revoked through one machine's CLI is refused by the other replica within a second", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const fresh = (await createTokens(homes[0] as TempHome, cfgs[0] as string, ["alpha"])).alpha as string;
    const probe = () =>
      http(replica(1).url, {
        method: "POST",
        headers: { Host: `127.0.0.1:${replica(1).port}`, Authorization: `Bearer ${fresh}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "probe", version: "1" } } }),
      });
    // Created on machine 0: replica 1 accepts it (it heard the change).
    await until(async () => (await probe()).status === 200, "replica 1 to accept the new token", 100);
    const list = await runMcphub(homes[0] as TempHome, ["--config", cfgs[0] as string, "token", "list", "alpha", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const ids = (JSON.parse(list.stdout) as { id: string; last4: string }[]).filter((t) => t.last4 === fresh.slice(-4)).map((t) => t.id);
    const revoked = await runMcphub(homes[0] as TempHome, ["--config", cfgs[0] as string, "token", "revoke", ids[0] as string]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const t0 = Date.now();
    await until(async () => (await probe()).status === 401, "replica 1 to refuse the revoked token", 100);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it("a replica killed with SIGKILL mid-call: the balancer sends new sessions to the survivor; nothing acknowledged is lost, nothing replays", async (ctx) => {
    if (!pg || !lb) return ctx.skip(skip);
    const a = await httpClient(replica(0).url, token);
    const stored = doc(await a.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 120_000 } }));
    expect(stored.status).toBe("stored");
    const before = readFileSync(recorderLog, "utf8").split("\n").filter(Boolean).length;
    // A call in flight on replica 0 when it dies.
    const inflight = a.caller.call("mcphub_call_tool", { tool: "slow__slow", arguments: { steps: 100000 } }).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 300));
    replica(0).child.kill("SIGKILL");
    expect(await inflight).toBeInstanceOf(Error);
    await a.close().catch(() => undefined);
    // A new session through the balancer lands on the survivor and reads what replica 0 acknowledged.
    const c = await httpClient(lb.url, token);
    try {
      const { bytes } = await reassemble((cursor) => c.caller.call("mcphub_get_result", { callId: stored.callId, cursor }), String(stored.callId));
      expect(bytes.length).toBeGreaterThan(120_000);
    } finally {
      await c.close();
    }
    // The in-flight call was not replayed on the survivor (the recorder saw no new call from it).
    const after = readFileSync(recorderLog, "utf8").split("\n").filter(Boolean).length;
    expect(after).toBe(before);
    replicas[0] = await startReplica(0);
  }, 60_000);

  it("PostgreSQL restarting: a call that stores nothing keeps working, reading a receipt or storing one fails clearly, and both recover without a gateway restart", async (ctx) => {
    if (!pg) return ctx.skip(skip);
    const b = await httpClient(replica(1).url, token);
    try {
      const stored = doc(await b.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 100_000 } }));
      expect(stored.status).toBe("stored");
      pg.stop();
      const small = await b.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 10 } });
      expect(text(small)).toBe("x".repeat(10));
      const read = await b.caller.call("mcphub_get_result", { callId: stored.callId });
      expect(read.isError).toBe(true);
      expect(text(read)).toMatch(/cannot be reached/);
      expect(text(read)).not.toMatch(/password/i);
      // A result over the budget cannot become a receipt while the store is down: the call fails
      // with an error that says what happened and what to do, never with the whole result (it
      // would flood the model) and never a crash; the replica keeps serving.
      const big = await b.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 100_000 } });
      expect(big.isError).toBe(true);
      const refused = doc(big);
      expect(refused.error).toBe("result not stored");
      expect(refused.tool).toBe("rec__big");
      expect(refused.resultBytes).toBeGreaterThan(100_000);
      expect(refused.overBudgetBytes).toBe((refused.resultBytes as number) - (refused.budgetBytes as number));
      expect(String(refused.reason)).toMatch(/shared store postgres:\/\/mcphub@127\.0\.0\.1:\d+\/mcphub cannot be reached/);
      expect(String(refused.hint)).toMatch(/over the response budget.*Call it again later/);
      expect(text(big)).not.toContain("x".repeat(1000));
      expect(JSON.stringify(big).length).toBeLessThan(2000);
      expect(text(big)).not.toMatch(/password|\n\s+at /i);
      // Several at once, mixed with calls that store nothing: those still answer.
      const mixed = await Promise.all([0, 1, 2, 3].map((i) => b.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: i % 2 ? 10 : 50_000 } })));
      expect(mixed.map((r) => (r.isError ? "error" : text(r)))).toEqual(["error", "x".repeat(10), "error", "x".repeat(10)]);
      expect(replica(1).child.exitCode).toBeNull();
      pg.start();
      await until(async () => doc(await b.caller.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 100_000 } })).status === "stored", "stored results to work again", 100);
    } finally {
      await b.close();
    }
  }, 90_000);
});
