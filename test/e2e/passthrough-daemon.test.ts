// Protocol pass-through in the HTTP daemon, where one process serves many agents: server→client
// requests reach only the session that owns the call; on a shared connection an ambiguous owner
// is refused (never guessed); `connection: per-session` gives each session its own connection;
// and nothing stays behind when sessions end (subscriptions released, forwarded requests
// cancelled, dedicated connections closed). Runs the daemon in-process to read its pass-through
// gauges; the clients, HTTP and the downstream fixture processes are real.
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema, type RawConfig } from "../../src/config/schema.js";
import { startHttpGateway, TokenStore, type HttpGateway } from "../../src/serve/index.js";
import { memoryLogger } from "../../src/util/log.js";
import { alive, FIXTURES, ROOT, tempHome, text, type TempHome } from "../helpers/gateway.js";
import { eventually, fixtureEvents, peerClient, type Answers, type PeerClient } from "../helpers/passthrough.js";

const node = process.execPath;

interface Daemon {
  gw: HttpGateway;
  events: string;
  tokens: Record<string, string>;
  connect(agent: string, answers: Answers): Promise<PeerClient & { end(): Promise<void> }>;
}

async function daemon(home: TempHome, name: string, server: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Daemon> {
  const events = join(home.dir, `${name}.ndjson`);
  const raw: RawConfig = {
    expose: "lazy",
    servers: { conf: { command: node, args: [join(FIXTURES, "conformance-server.mjs")], env: { CONFORMANCE_EVENTS: events }, ...server }, ...extra },
    agents: { alice: {}, bob: {} },
  };
  const dataDir = join(home.dir, `data-${name}`);
  const tokens: Record<string, string> = {};
  const store = TokenStore.open(dataDir);
  for (const agent of ["alice", "bob"]) tokens[agent] = (await store.create(agent)).token;
  const gw = await startHttpGateway({ config: configSchema.parse(raw), dataDir, env: home.env, log: memoryLogger(), listen: { host: "127.0.0.1", port: 0 } });
  return {
    gw,
    events,
    tokens,
    async connect(agent, answers) {
      const transport = new StreamableHTTPClientTransport(new URL(gw.url), { requestInit: { headers: { Authorization: `Bearer ${tokens[agent]}` } } });
      const peer = await peerClient(transport, answers, agent);
      return {
        ...peer,
        // Ends the session on the daemon (DELETE), as a harness does when it quits.
        end: async () => {
          await transport.terminateSession().catch(() => undefined);
          await peer.close();
        },
      };
    },
  };
}

const accept = (username: string): Answers => ({ elicit: () => ({ action: "accept", content: { username, email: `${username}@example.com` } }) });
const elicitArgs = (message: string) => ({ tool: "conf__test_elicitation", arguments: { message } });

describe("daemon with a shared connection", () => {
  let home: TempHome;
  let d: Daemon;
  beforeAll(async () => {
    home = tempHome("mcphub-pt-shared-");
    d = await daemon(home, "shared", {});
  });
  afterAll(async () => {
    await d?.gw.close();
    home?.cleanup();
  });

  it("an elicitation raised during agent A's call reaches A's session only", async () => {
    const a = await d.connect("alice", accept("alice"));
    const b = await d.connect("bob", accept("bob"));
    try {
      const ra = await a.call("mcphub_call_tool", elicitArgs("for alice"));
      expect(text(ra)).toBe('User response: action=accept, content={"username":"alice","email":"alice@example.com"}');
      expect(a.asked.map((x) => x.params.message)).toEqual(["for alice"]);
      expect(b.asked).toEqual([]);
      const rb = await b.call("mcphub_call_tool", elicitArgs("for bob"));
      expect(text(rb)).toContain('"username":"bob"');
      expect(a.asked).toHaveLength(1);
      expect(b.asked.map((x) => x.params.message)).toEqual(["for bob"]);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it("refuses, with a precise error, a request that arrives while two sessions have calls in flight", async () => {
    const a = await d.connect("alice", accept("alice"));
    const b = await d.connect("bob", accept("bob"));
    const refusedBefore = d.gw.hub.passthrough.stats().refused_total;
    const blocks = () => fixtureEvents(d.events).filter((e) => e.kind === "block-start").length;
    const started = blocks();
    const stop = new AbortController();
    const blocked = b.call("mcphub_call_tool", { tool: "conf__test_block", arguments: { ms: 120_000 } }, { signal: stop.signal }).catch((err: unknown) => err);
    try {
      await eventually(() => blocks() > started, "bob's call to be running");
      const r = await a.call("mcphub_call_tool", elicitArgs("whose?"));
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(
        /^elicitation failed: MCP error -32600: elicitation\/create from server "conf" arrived on the connection the mcphub daemon shares between sessions while requests from 2 upstream sessions were in flight on it, so it cannot tell which session the request is for and refused it; set connection: per-session for "conf" in the mcphub config$/,
      );
      expect(a.asked).toEqual([]);
      expect(b.asked).toEqual([]);
      expect(d.gw.hub.passthrough.stats().refused_total).toBe(refusedBefore + 1);
    } finally {
      stop.abort();
      await blocked;
      await a.end();
      await b.end();
    }
    await eventually(() => fixtureEvents(d.events).some((e) => e.kind === "block-cancelled"), "bob's call to be cancelled downstream");
  });

  it("roots/list on a shared connection is refused even when one session owns the call: the server would keep them for everyone", async () => {
    const a = await d.connect("alice", { roots: () => [{ uri: "file:///home/alice" }] });
    try {
      const r = await a.call("mcphub_call_tool", { tool: "conf__test_roots" });
      expect(text(r)).toBe(
        'roots failed: MCP error -32600: roots/list from server "conf" arrived on the connection the mcphub daemon shares between sessions, where one session\'s roots would apply to every session\'s calls, so it was refused; set connection: per-session for "conf" in the mcphub config, or pin its roots with roots: [...]',
      );
      expect(a.asked).toEqual([]);
    } finally {
      await a.end();
    }
  });

  it("nothing leaks after sessions end: shared subscriptions are released with their last session, pending forwarded requests are cancelled", async () => {
    const count = (kind: string) => fixtureEvents(d.events).filter((e) => e.kind === kind).length;
    const subscribedBefore = count("subscribed");
    const unsubscribedBefore = count("unsubscribed");
    const a = await d.connect("alice", accept("alice"));
    const b = await d.connect("bob", accept("bob"));
    const uri = "mcphub://conf/test%3A%2F%2Fwatched-resource";
    await a.client.subscribeResource({ uri });
    await b.client.subscribeResource({ uri });
    // One downstream subscription, shared by both sessions.
    expect(count("subscribed")).toBe(subscribedBefore + 1);
    expect(d.gw.hub.passthrough.stats().subscriptions).toBe(1);
    await a.end();
    await eventually(() => d.gw.hub.passthrough.stats().sessions === 1, "alice's session to end");
    expect(count("unsubscribed")).toBe(unsubscribedBefore);
    await b.call("mcphub_call_tool", { tool: "conf__test_touch_resource" });
    await eventually(() => b.updated.includes(uri), "bob's update");
    expect(a.updated).toEqual([]);
    await b.end();
    await eventually(() => count("unsubscribed") === unsubscribedBefore + 1, "the downstream unsubscribe");
    expect(d.gw.hub.passthrough.stats().subscriptions).toBe(0);

    // A forwarded elicitation the client never answers is cancelled when its session ends.
    let asked = false;
    const c = await d.connect("alice", { elicit: () => ((asked = true), new Promise(() => undefined)) });
    const failedBefore = count("request-failed");
    const pending = c.call("mcphub_call_tool", elicitArgs("never answered")).catch((err: unknown) => err);
    await eventually(() => asked && d.gw.hub.passthrough.stats().forwarded_pending === 1, "the forwarded request");
    await c.end();
    await pending;
    await eventually(() => count("request-failed") === failedBefore + 1, "the downstream to see the cancellation");
    const failure = fixtureEvents(d.events).filter((e) => e.kind === "request-failed").at(-1);
    expect(failure?.message).toBe("MCP error -32000: elicitation/create: the upstream session ended before it answered");
    await eventually(() => d.gw.hub.passthrough.stats().requests_in_flight === 0, "no request in flight");
    expect(d.gw.hub.passthrough.stats()).toMatchObject({ sessions: 0, requests_in_flight: 0, forwarded_pending: 0, subscriptions: 0, dedicated_connections: 0 });
  });
});

describe("daemon with connection: per-session", () => {
  let home: TempHome;
  let d: Daemon;
  beforeAll(async () => {
    home = tempHome("mcphub-pt-session-");
    d = await daemon(home, "per-session", { connection: "per-session" });
  });
  afterAll(async () => {
    await d?.gw.close();
    home?.cleanup();
  });

  it("concurrent requests of two agents each reach their own session over their own connection, closed when the session ends", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const a = await d.connect("alice", accept("alice"));
    const b = await d.connect("bob", { elicit: async () => (await gate, { action: "accept", content: { username: "bob", email: "bob@example.com" } }) });
    const bobCall = b.call("mcphub_call_tool", elicitArgs("for bob"));
    await eventually(() => b.asked.length === 1, "bob's elicitation");
    // Bob's request is still open on his connection; Alice's goes to her own and to her.
    const ra = await a.call("mcphub_call_tool", elicitArgs("for alice"));
    expect(text(ra)).toContain('"username":"alice"');
    release();
    expect(text(await bobCall)).toContain('"username":"bob"');
    expect(a.asked.map((x) => x.params.message)).toEqual(["for alice"]);
    expect(b.asked.map((x) => x.params.message)).toEqual(["for bob"]);
    const pids = [...new Set(fixtureEvents(d.events).filter((e) => e.kind === "elicited").map((e) => e.pid))];
    expect(pids).toHaveLength(2);
    expect(d.gw.hub.passthrough.stats().dedicated_connections).toBe(2);
    await a.end();
    await b.end();
    await eventually(() => d.gw.hub.passthrough.stats().dedicated_connections === 0, "dedicated connections to close");
    await eventually(() => pids.every((pid) => !alive(pid)), "the dedicated processes to exit");
    expect(d.gw.hub.passthrough.stats()).toMatchObject({ sessions: 0, requests_in_flight: 0, forwarded_pending: 0, subscriptions: 0 });
  });
});

describe("daemon: server-filesystem with connection: per-session", () => {
  let home: TempHome;
  let d: Daemon;
  beforeAll(async () => {
    home = tempHome("mcphub-pt-fs-");
    const fs = { command: node, args: [join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")], connection: "per-session" };
    d = await daemon(home, "fs", {}, { fs });
  });
  afterAll(async () => {
    await d?.gw.close();
    home?.cleanup();
  });

  it("each agent's session lists its own root and not the other's", async () => {
    const dirs = ["alice", "bob"].map((who) => {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), `mcphub-${who}-`)));
      writeFileSync(join(dir, `${who}.txt`), who);
      return dir;
    });
    const [aliceDir, bobDir] = dirs as [string, string];
    const a = await d.connect("alice", { roots: () => [{ uri: pathToFileURL(aliceDir).href }] });
    const b = await d.connect("bob", { roots: () => [{ uri: pathToFileURL(bobDir).href }] });
    try {
      const allowed = async (p: typeof a) => text(await p.call("mcphub_call_tool", { tool: "fs__list_allowed_directories" }));
      await eventually(async () => (await allowed(a)).includes(aliceDir), "alice's root");
      await eventually(async () => (await allowed(b)).includes(bobDir), "bob's root");
      expect(await allowed(a)).not.toContain(bobDir);
      expect(text(await a.call("mcphub_call_tool", { tool: "fs__list_directory", arguments: { path: aliceDir } }))).toContain("[FILE] alice.txt");
      const denied = await a.call("mcphub_call_tool", { tool: "fs__list_directory", arguments: { path: bobDir } });
      expect(text(denied)).toMatch(/Access denied/);
    } finally {
      await a.end();
      await b.end();
    }
  });
});
