// The daemon's bounds on what clients may hold (config `http_limits`), over real sockets: a
// slowloris head (1 byte every 300 ms), a slow body, a connection that never sends anything and an
// idle keep-alive connection are each dropped within their configured timeout; connections beyond
// the per-address cap and the total cap are refused with one line while other clients keep
// working; a reload applies new caps. And the request body limit follows max_message_size: a
// 5 MiB argument passes under an 8 MiB limit, a 9 MiB body gets 413 naming the setting.
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, tempHome, text, type TempHome } from "../helpers/gateway.js";
import { httpClient, INIT, rawRequest, startDaemon, until, type Daemon } from "../helpers/mcp-daemon.js";

const LIMITS = { header_timeout: "1s", request_timeout: "2s", keep_alive_timeout: "1s", max_connections: 14, max_connections_per_client: 10 };

interface Watched {
  socket: Socket;
  /** ms from connect until the server closed it; undefined while open. */
  closedAfter(): number | undefined;
  /** ms from connect until the first byte from the server. */
  firstDataAfter(): number | undefined;
  received(): string;
}

function open(port: number, localAddress = "127.0.0.1"): Promise<Watched> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress });
    const start = Date.now();
    let closed: number | undefined;
    let first: number | undefined;
    let got = "";
    socket.on("data", (d) => {
      first ??= Date.now() - start;
      got += d.toString();
    });
    socket.on("close", () => (closed = Date.now() - start));
    socket.on("error", () => undefined);
    socket.once("connect", () => resolve({ socket, closedAfter: () => closed, firstDataAfter: () => first, received: () => got }));
    socket.once("error", reject);
  });
}

/** Writes `text` one byte every `everyMs` until the socket closes. */
function trickle(w: Watched, text: string, everyMs: number): void {
  let i = 0;
  const t = setInterval(() => {
    if (w.closedAfter() !== undefined || i >= text.length) return clearInterval(t);
    w.socket.write(text[i++] as string);
  }, everyMs);
}

async function closedWithin(w: Watched[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  while (w.some((x) => x.closedAfter() === undefined) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return w.map((x) => x.closedAfter() ?? Infinity);
}

describe("daemon connection limits", () => {
  let home: TempHome;
  let daemon: Daemon;
  let port: number;
  let cfg: string;
  const config = (limits: Record<string, unknown>) => ({
    expose: "all",
    max_message_size: "8MB",
    http_limits: limits,
    servers: {
      echo: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")], start: "eager" },
      slow: { command: process.execPath, args: [join(FIXTURES, "slow-tools.mjs")], start: "eager" },
    },
  });

  beforeAll(async () => {
    home = tempHome("mcphub-limits-");
    cfg = home.writeConfig(config(LIMITS));
    daemon = await startDaemon(home, cfg);
    port = Number(new URL(daemon.url).port);
  });
  afterAll(async () => {
    await daemon?.stop();
    home?.cleanup();
  });

  it("drops slowloris heads, a slow body, a silent connection and an idle keep-alive within their timeouts", async () => {
    const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nX-Padding: ${"a".repeat(200)}\r\n\r\n`;
    const slowHeads = await Promise.all(Array.from({ length: 6 }, () => open(port)));
    for (const w of slowHeads) trickle(w, head, 300);
    const slowBody = await open(port);
    slowBody.socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n`);
    trickle(slowBody, JSON.stringify(INIT).padEnd(100000, " "), 300);
    const silent = await open(port);
    // One real request, then the connection sits idle (keep-alive).
    const idle = await open(port);
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    idle.socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`);

    // Each is gone within its timeout plus the server's check interval (a quarter of the shortest).
    const heads = await closedWithin(slowHeads, 6000);
    for (const ms of heads) expect(ms).toBeLessThanOrEqual(1000 + 250 + 750);
    const [bodyMs] = await closedWithin([slowBody], 6000);
    expect(bodyMs).toBeLessThanOrEqual(2000 + 250 + 750);
    expect(slowBody.received()).toMatch(/^HTTP\/1\.1 408/);
    const [silentMs] = await closedWithin([silent], 6000);
    expect(silentMs).toBeLessThanOrEqual(1000 + 250 + 750);
    const [idleMs] = await closedWithin([idle], 6000);
    expect(idle.received()).toMatch(/^HTTP\/1\.1 400/); // no session: a ping cannot open one
    // Idle from its answer on: the answer advertises keep_alive_timeout, and Node closes the
    // connection when it is still idle one second after that (its margin against a client
    // reusing the connection just as it closes).
    expect(idle.received()).toMatch(/\r\nKeep-Alive: timeout=1\r\n/);
    expect((idleMs as number) - (idle.firstDataAfter() as number)).toBeLessThanOrEqual(1000 + 1000 + 750);
    expect(daemon.child.exitCode).toBeNull();
  });

  it("bounds receiving a request, never answering it: a call and the GET stream outlive request_timeout", async () => {
    const c = await httpClient(daemon.url);
    try {
      // The notification stream of a session, held open on its own connection.
      const init = await rawRequest(daemon.url, "POST", {}, INIT);
      const session = init.headers["mcp-session-id"] as string;
      const stream = await open(port);
      stream.socket.write(
        `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${session}\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n`,
      );
      // A call answering after 3.5 s: past request_timeout (2 s), header_timeout and keep-alive.
      const started = Date.now();
      const r = await c.call("slow__silent", { ms: 3500 });
      expect(text(r)).toBe("slept 3500");
      expect(Date.now() - started).toBeGreaterThanOrEqual(3500);
      expect(stream.received()).toMatch(/^HTTP\/1\.1 200 /);
      expect(stream.closedAfter(), "the GET stream was closed by a request timeout").toBeUndefined();
      stream.socket.destroy();
    } finally {
      await c.close();
    }
  });

  it("refuses connections past the per-address and total caps, in one line, while others keep working", async () => {
    const mine = await Promise.all(Array.from({ length: LIMITS.max_connections_per_client }, () => open(port)));
    const extra = await open(port);
    const [extraMs] = await closedWithin([extra], 2000);
    // Refused at once, not by a timeout.
    expect(extraMs).toBeLessThan(500);
    expect(extra.received()).toMatch(/^HTTP\/1\.1 429 .*\r\n[\s\S]*too many connections from 127\.0\.0\.1 \(10, http_limits\.max_connections_per_client\)/);
    // Another address still gets in, up to the total.
    const others = await Promise.all(Array.from({ length: LIMITS.max_connections - LIMITS.max_connections_per_client }, () => open(port, "127.0.0.2")));
    const beyond = await open(port, "127.0.0.3");
    const [beyondMs] = await closedWithin([beyond], 2000);
    expect(beyondMs).toBeLessThan(500);
    expect(beyond.received()).toMatch(/^HTTP\/1\.1 503 .*\r\n[\s\S]*too many open connections \(14, http_limits\.max_connections\)/);
    for (const w of [...mine, ...others]) w.socket.destroy();
    await new Promise((r) => setTimeout(r, 200));
    // Freed: a real client works again.
    const c = await httpClient(daemon.url);
    try {
      expect(text(await c.call("echo__echo", { message: "after" }))).toBe("Echo: after");
    } finally {
      await c.close();
    }
  });

  it("the request body limit follows max_message_size (8 MiB here, not the SDK's 4 MiB)", async () => {
    const init = await rawRequest(daemon.url, "POST", {}, INIT);
    const session = init.headers["mcp-session-id"] as string;
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    await rawRequest(daemon.url, "POST", headers, { jsonrpc: "2.0", method: "notifications/initialized" });
    const big = "x".repeat(5 * 1024 * 1024);
    const ok = await rawRequest(daemon.url, "POST", headers, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo__echo", arguments: { message: big } } });
    // Accepted and called: the echo comes back (stored as a receipt, being over the response budget).
    expect(ok.status, ok.body.slice(0, 400)).toBe(200);
    expect(ok.body).toMatch(/"id":2,"result":\{.*"status":"stored".*"originalBytes":52429\d\d/);
    // Over the limit: answered 413 as soon as Content-Length says so, and the rest of the body is
    // read and dropped (a keep-alive connection, as clients use; the socket is written raw so a
    // write still under way when the answer comes does not fail the test).
    const tooBig = JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo__echo", arguments: { message: "x".repeat(9 * 1024 * 1024) } } });
    const w = await open(port);
    w.socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: ${session}\r\nContent-Length: ${tooBig.length}\r\n\r\n`,
    );
    w.socket.write(tooBig);
    for (let i = 0; i < 400 && !w.received().includes("}"); i++) await new Promise((r) => setTimeout(r, 50));
    w.socket.destroy();
    expect(w.received()).toMatch(/^HTTP\/1\.1 413 /);
    const answer = /\{.*\}/s.exec(w.received().slice(w.received().indexOf("\r\n\r\n")))?.[0] ?? "";
    expect(JSON.parse(answer)).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringMatching(/max_message_size, 8 MiB\)$/) } });
  });

  it("a config reload applies new caps to the next connection", async () => {
    // The file the daemon follows.
    expect(home.writeConfig(config({ ...LIMITS, max_connections_per_client: 2 }))).toBe(cfg);
    await until(() => /config reloaded: changed http_limits/.test(daemon.stderr()), "the reload line");
    const two = await Promise.all([open(port), open(port)]);
    const third = await open(port);
    const [ms] = await closedWithin([third], 2000);
    expect(ms).toBeLessThan(500);
    expect(third.received()).toMatch(/too many connections from 127\.0\.0\.1 \(2, http_limits\.max_connections_per_client\)/);
    for (const w of two) w.socket.destroy();
  });
});
