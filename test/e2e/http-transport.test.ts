// The lean streamable-HTTP transport (src/gateway/http/) as a client sees it on the wire, against
// a real daemon in front of the conformance fixture: plain JSON answers on kept-alive connections,
// SSE only when a request needs it (progress, a request forwarded during the call, a slow answer,
// or a client that prefers it), priming events, the standalone GET stream, resuming a broken
// stream with Last-Event-ID, cancellation, DELETE, and every transport-level refusal answered
// exactly as the SDK's transport answers it (checked against a daemon on `http_transport: sdk`).
import { Agent, request, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../helpers/daemon.js";
import { FIXTURES, tempHome, type TempHome } from "../helpers/gateway.js";

const LATEST = "2025-11-25";
const ACCEPT = "application/json, text/event-stream";

interface Sse {
  id?: string;
  event?: string;
  data: string;
  retry?: number;
}

interface Answer {
  status: number;
  headers: IncomingMessage["headers"];
  body: string;
  reusedSocket: boolean;
}

function post(base: string, body: unknown, headers: Record<string, string> = {}, agent?: Agent): Promise<Answer> {
  return send(base, "POST", typeof body === "string" ? body : JSON.stringify(body), { accept: ACCEPT, "content-type": "application/json", ...headers }, agent);
}

function send(base: string, method: string, body: string | undefined, headers: Record<string, string>, agent?: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const u = new URL(`${base}/mcp`);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method, headers, ...(agent ? { agent } : {}) }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, reusedSocket: req.reusedSocket }));
    });
    req.once("error", reject);
    req.end(body);
  });
}

/** Opens a request and hands back the response as it streams, with a way to break it off. */
function open(base: string, method: string, body: string | undefined, headers: Record<string, string>): Promise<{ res: IncomingMessage; events: () => Sse[]; next: (n?: number) => Promise<Sse[]>; abort: () => void }> {
  return new Promise((resolve, reject) => {
    const u = new URL(`${base}/mcp`);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method, headers }, (res) => {
      let buf = "";
      const got: Sse[] = [];
      const waiters: (() => void)[] = [];
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        buf += c;
        let end;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          if (block.startsWith(":")) continue; // keep-alive comment
          got.push(parseEvent(block));
        }
        for (const w of waiters.splice(0)) w();
      });
      res.on("end", () => {
        for (const w of waiters.splice(0)) w();
      });
      const next = async (n = 1) => {
        while (got.length < n && !res.readableEnded) await new Promise<void>((r) => waiters.push(r));
        return got.slice(0, n);
      };
      resolve({ res, events: () => got, next, abort: () => req.destroy() });
    });
    req.once("error", (err) => (err.message.includes("socket hang up") ? undefined : reject(err)));
    req.end(body);
  });
}

function parseEvent(block: string): Sse {
  const e: Sse = { data: "" };
  const data: string[] = [];
  for (const line of block.split("\n")) {
    const i = line.indexOf(":");
    const field = line.slice(0, i);
    const value = line.slice(i + 1).replace(/^ /, "");
    if (field === "id") e.id = value;
    else if (field === "event") e.event = value;
    else if (field === "retry") e.retry = Number(value);
    else if (field === "data") data.push(value);
  }
  e.data = data.join("\n");
  return e;
}

const sseMessages = (events: Sse[]) => events.filter((e) => e.data !== "").map((e) => JSON.parse(e.data) as Record<string, unknown>);

async function initialize(base: string, capabilities: Record<string, unknown> = {}, version = LATEST): Promise<{ sid: string; h: Record<string, string> }> {
  const a = await post(base, { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: version, capabilities, clientInfo: { name: "wire-test", version: "1.0.0" } } });
  expect(a.status, a.body).toBe(200);
  const sid = a.headers["mcp-session-id"] as string;
  expect(sid).toMatch(/^[0-9a-f-]{36}$/);
  const h = { "mcp-session-id": sid, "mcp-protocol-version": version };
  expect((await post(base, { jsonrpc: "2.0", method: "notifications/initialized" }, h)).status).toBe(202);
  return { sid, h };
}

const call = (id: number, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

describe("lean HTTP transport on the wire", () => {
  let home: TempHome;
  let lean: Daemon;
  let sdk: Daemon;
  beforeAll(async () => {
    home = tempHome("mcphub-wire-");
    const conf = { command: process.execPath, args: [join(FIXTURES, "conformance-server.mjs")], namespace: false, connection: "per-session" };
    // `pub`: the same fixture on the connection shared by every session, so what it adds is published to all.
    const pub = { command: process.execPath, args: [join(FIXTURES, "conformance-server.mjs")] };
    lean = await startDaemon(home, home.writeConfig({ expose: "all", servers: { conf, pub } }, "lean.yaml"));
    sdk = await startDaemon(home, home.writeConfig({ expose: "all", http_transport: "sdk", servers: { conf } }, "sdk.yaml"));
  }, 60_000);
  afterAll(async () => {
    await Promise.all([lean?.stop(), sdk?.stop()]);
    home?.cleanup();
  });

  it("answers a call that needs no stream with one JSON body, on a connection kept alive", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const { h } = await initialize(lean.base);
    // `conf` is per-session: this session's first call starts its own fixture process, which on a
    // loaded machine can take past STREAM_AFTER_MS and rightly turn that answer into a stream.
    // The calls measured below come after it.
    expect((await post(lean.base, call(0, "test_simple_text"), h)).status).toBe(200);
    const first = await post(lean.base, call(1, "test_simple_text"), h, agent);
    const second = await post(lean.base, call(2, "test_simple_text"), h, agent);
    agent.destroy();
    for (const [a, id] of [[first, 1], [second, 2]] as const) {
      expect(a.status).toBe(200);
      expect(a.headers["content-type"]).toBe("application/json");
      expect(a.headers["mcp-session-id"]).toBe(h["mcp-session-id"]);
      expect(JSON.parse(a.body)).toMatchObject({ jsonrpc: "2.0", id, result: { content: [{ type: "text" }] } });
    }
    expect(second.reusedSocket).toBe(true);
  });

  it("streams a call that asks for progress: a priming event (id, retry) first, then progress and the answer, each with an id", async () => {
    const { h } = await initialize(lean.base);
    const s = await open(lean.base, "POST", JSON.stringify(call(3, "test_tool_with_progress", {}, { progressToken: "p3" })), { accept: ACCEPT, "content-type": "application/json", ...h });
    expect(s.res.headers["content-type"]).toBe("text/event-stream");
    await new Promise((r) => s.res.once("end", r));
    const events = s.events();
    expect(events[0]).toMatchObject({ data: "", retry: 1000 });
    expect(events[0]?.id).toMatch(/^p\d+\.\d+$/);
    const messages = sseMessages(events);
    const progress = messages.filter((m) => m.method === "notifications/progress");
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((m) => (m.params as { progressToken: string }).progressToken === "p3")).toBe(true);
    expect(messages.at(-1)).toMatchObject({ id: 3, result: { content: [{ text: "Progress test completed" }] } });
    // Every message event carries an id after the priming one, in order.
    const seqs = events.map((e) => Number(e.id?.split(".")[1]));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it("starts a call as maybe-JSON and turns it into a stream when the server elicits during it", async () => {
    const { h } = await initialize(lean.base, { elicitation: { form: {} } });
    const s = await open(lean.base, "POST", JSON.stringify(call(4, "test_elicitation", { message: "who are you?" })), { accept: ACCEPT, "content-type": "application/json", ...h });
    expect(s.res.headers["content-type"]).toBe("text/event-stream");
    const [priming, asked] = await s.next(2);
    expect(priming?.data).toBe("");
    const elicit = JSON.parse(asked?.data ?? "{}") as { id: number; method: string; params: { message: string } };
    expect(elicit).toMatchObject({ method: "elicitation/create", params: { message: "who are you?" } });
    const answered = await post(lean.base, { jsonrpc: "2.0", id: elicit.id, result: { action: "accept", content: { username: "ada", email: "ada@example.com" } } }, h);
    expect(answered.status).toBe(202);
    await new Promise((r) => s.res.once("end", r));
    expect(sseMessages(s.events()).at(-1)).toMatchObject({ id: 4, result: { content: [{ type: "text" }] } });
    expect(JSON.stringify(sseMessages(s.events()).at(-1))).toContain("ada");
  });

  it("resumes a stream broken mid-call: GET with Last-Event-ID replays what followed, the answer included", async () => {
    const { h } = await initialize(lean.base);
    const s = await open(lean.base, "POST", JSON.stringify(call(5, "test_block", { ms: 600 }, { progressToken: 5 })), { accept: ACCEPT, "content-type": "application/json", ...h });
    const [priming] = await s.next(1);
    expect(priming?.id).toBeDefined();
    s.abort();
    const resumed = await open(lean.base, "GET", undefined, { accept: "text/event-stream", ...h, "last-event-id": priming?.id as string });
    expect(resumed.res.statusCode).toBe(200);
    await new Promise((r) => resumed.res.once("end", r));
    expect(sseMessages(resumed.events())).toEqual([{ jsonrpc: "2.0", id: 5, result: { content: [{ type: "text", text: "unblocked" }] } }]);
    // Delivered in full: the stream is forgotten, and a second resume of it is refused.
    const again = await send(lean.base, "GET", undefined, { accept: "text/event-stream", ...h, "last-event-id": priming?.id as string });
    expect(again.status).toBe(400);
    expect(JSON.parse(again.body).error.message).toContain("names no stream of this session that can be resumed");
  });

  it("gives a slow answer its stream after a second, so long calls get keep-alives and can resume", async () => {
    const { h } = await initialize(lean.base);
    const s = await open(lean.base, "POST", JSON.stringify(call(6, "test_block", { ms: 1600 })), { accept: ACCEPT, "content-type": "application/json", ...h });
    expect(s.res.headers["content-type"]).toBe("text/event-stream");
    await new Promise((r) => s.res.once("end", r));
    expect(s.events()[0]?.data).toBe("");
    expect(sseMessages(s.events())).toEqual([{ jsonrpc: "2.0", id: 6, result: { content: [{ type: "text", text: "unblocked" }] } }]);
  });

  it("streams every request for a client that lists text/event-stream first, and answers a batch as a JSON array otherwise", async () => {
    const { h } = await initialize(lean.base);
    const streamed = await post(lean.base, call(7, "test_simple_text"), { ...h, accept: "text/event-stream, application/json" });
    expect(streamed.headers["content-type"]).toBe("text/event-stream");
    expect(sseMessages(streamed.body.split("\n\n").filter(Boolean).map(parseEvent)).at(-1)).toMatchObject({ id: 7 });
    const batch = await post(lean.base, [call(8, "test_simple_text"), { jsonrpc: "2.0", id: 9, method: "ping" }], h);
    expect(batch.headers["content-type"]).toBe("application/json");
    expect((JSON.parse(batch.body) as { id: number }[]).map((m) => m.id)).toEqual([8, 9]);
  });

  it("ends a cancelled call's POST with 202 and no answer", async () => {
    const { h } = await initialize(lean.base);
    const pending = post(lean.base, call(10, "test_block", { ms: 20_000 }), h);
    await new Promise((r) => setTimeout(r, 300));
    expect((await post(lean.base, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 10, reason: "changed my mind" } }, h)).status).toBe(202);
    const a = await pending;
    expect(a.status).toBe(202);
    expect(a.body).toBe("");
  });

  it("keeps one standalone GET stream per session: list_changed goes there, and a resume replays it", async () => {
    const { h } = await initialize(lean.base);
    expect((await send(lean.base, "GET", undefined, { ...h, accept: "application/json" })).status).toBe(406);
    const g = await open(lean.base, "GET", undefined, { ...h, accept: "text/event-stream" });
    const [priming] = await g.next(1);
    expect(priming?.id).toMatch(/^g\.\d+$/);
    expect((await send(lean.base, "GET", undefined, { ...h, accept: "text/event-stream" })).status).toBe(409);
    expect((await post(lean.base, call(11, "pub__test_add_resource", { name: "fresh" }), h)).status).toBe(200);
    const [, changed] = await g.next(2);
    expect(JSON.parse(changed?.data ?? "{}")).toMatchObject({ method: expect.stringMatching(/^notifications\/(resources|prompts)\/list_changed$/) });
    g.abort();
    const resumed = await open(lean.base, "GET", undefined, { ...h, accept: "text/event-stream", "last-event-id": priming?.id as string });
    const [replayed] = await resumed.next(1);
    expect(replayed).toEqual(changed);
    resumed.abort();
  });

  it("ends the session on DELETE: the pending call's POST gets 404, and so does anything after", async () => {
    const { h } = await initialize(lean.base);
    const pending = post(lean.base, call(12, "test_block", { ms: 20_000 }), h);
    await new Promise((r) => setTimeout(r, 300));
    expect((await send(lean.base, "DELETE", undefined, h)).status).toBe(200);
    expect((await pending).status).toBe(404);
    const after = await post(lean.base, call(13, "test_simple_text"), h);
    expect(after.status).toBe(404);
  });

  it("refuses what the SDK's transport refuses, with the same status, JSON-RPC code and message", async () => {
    const cases: [string, (h: Record<string, string>) => [string, string | undefined, Record<string, string>]][] = [
      ["no Accept for SSE", (h) => ["POST", JSON.stringify(call(1, "test_simple_text")), { ...h, accept: "application/json", "content-type": "application/json" }]],
      ["not JSON", (h) => ["POST", JSON.stringify(call(1, "test_simple_text")), { ...h, accept: ACCEPT, "content-type": "text/plain" }]],
      ["body too large", (h) => ["POST", "x".repeat(4 * 1024 * 1024 + 1), { ...h, accept: ACCEPT, "content-type": "application/json" }]],
      ["invalid JSON", (h) => ["POST", "{not json", { ...h, accept: ACCEPT, "content-type": "application/json" }]],
      ["not JSON-RPC", (h) => ["POST", JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" }), { ...h, accept: ACCEPT, "content-type": "application/json" }]],
      ["extra top-level key", (h) => ["POST", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", extra: true }), { ...h, accept: ACCEPT, "content-type": "application/json" }]],
      ["batch over 100", (h) => ["POST", JSON.stringify(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" }))), { ...h, accept: ACCEPT, "content-type": "application/json" }]],
      ["unknown protocol version", (h) => ["POST", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }), { ...h, "mcp-protocol-version": "1999-01-01", accept: ACCEPT, "content-type": "application/json" }]],
      ["second initialize", (h) => ["POST", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: "x", version: "1" } } }), { ...h, accept: ACCEPT, "content-type": "application/json" }]],
      ["PUT", (h) => ["PUT", "{}", { ...h, accept: ACCEPT, "content-type": "application/json" }]],
      ["GET without Accept", (h) => ["GET", undefined, { ...h, accept: "application/json" }]],
    ];
    const leanSession = await initialize(lean.base);
    const sdkSession = await initialize(sdk.base);
    for (const [what, make] of cases) {
      const [method, body, leanHeaders] = make(leanSession.h);
      const [, , sdkHeaders] = make(sdkSession.h);
      const a = await send(lean.base, method, body, leanHeaders);
      const b = await send(sdk.base, method, body, sdkHeaders);
      expect({ what, status: a.status, allow: a.headers.allow, body: JSON.parse(a.body) }).toEqual({ what, status: b.status, allow: b.headers.allow, body: JSON.parse(b.body) });
      expect(a.status, what).toBeGreaterThanOrEqual(400);
    }
  });
});
