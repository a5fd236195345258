// Issue 15, item 3: daemon sessions expire. An abandoned session (no DELETE) is closed after
// session_idle_timeout and its id then answers 404; a session with an open stream is not idle; each
// agent holds at most max_sessions_per_agent sessions, the longest-idle one making room.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempHome, type TempHome } from "../helpers/gateway.js";
import { abandonedSession, healthz, httpClient, INIT, rawRequest, startDaemon, until, type Daemon } from "../helpers/mcp-daemon.js";

let home: TempHome;
beforeAll(() => {
  home = tempHome("mcphub-sessions-");
});
afterAll(() => home.cleanup());

const ping = (url: string, session: string) =>
  rawRequest(url, "POST", { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" }, { jsonrpc: "2.0", id: 2, method: "ping" });

describe("idle sessions", () => {
  let daemon: Daemon;
  beforeAll(async () => {
    const cfg = home.writeConfig({ servers: {}, session_idle_timeout: "1s" }, "idle.yaml");
    daemon = await startDaemon(home, cfg);
  });
  afterAll(() => daemon?.stop());

  it("closes an abandoned session after session_idle_timeout; its id then answers 404; a session with an open stream stays", async () => {
    const live = await httpClient(daemon.url); // keeps its GET stream open
    const abandoned = await abandonedSession(daemon.url);
    expect((await ping(daemon.url, abandoned)).status).toBe(200);
    expect((await healthz(daemon.url)).sessions).toBe(2);
    await until(async () => ((await healthz(daemon.url)).sessions === 1 ? true : undefined), "the abandoned session to expire");
    const gone = await ping(daemon.url, abandoned);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatch(/unknown or expired session; initialize a new one/);
    // The connected client was idle just as long, but its stream is open: it still works.
    expect((await live.client.listTools()).tools.length).toBeGreaterThan(0);
    // A client that goes away without DELETE is released too once its stream has closed.
    await live.close();
    await until(async () => ((await healthz(daemon.url)).sessions === 0 ? true : undefined), "the closed client's session to expire");
  });
});

describe("sessions per agent", () => {
  let daemon: Daemon;
  beforeAll(async () => {
    const cfg = home.writeConfig({ servers: {}, max_sessions_per_agent: 3 }, "cap.yaml");
    daemon = await startDaemon(home, cfg);
  });
  afterAll(() => daemon?.stop());

  it("evicts the longest-idle session at the cap, and refuses with 429 only when all are busy", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await abandonedSession(daemon.url));
    // Touch the first one: now the second is the longest idle.
    expect((await ping(daemon.url, ids[0] as string)).status).toBe(200);
    const fourth = await abandonedSession(daemon.url);
    expect((await healthz(daemon.url)).sessions).toBe(3);
    expect((await ping(daemon.url, ids[1] as string)).status).toBe(404);
    for (const id of [ids[0], ids[2], fourth]) expect((await ping(daemon.url, id as string)).status).toBe(200);

    // Three clients with open streams: none is idle, so a fourth session is refused, not forced.
    for (const id of [ids[0], ids[2], fourth]) await rawRequest(daemon.url, "DELETE", { "mcp-session-id": id as string, "mcp-protocol-version": "2025-06-18" });
    const busy = await Promise.all([0, 1, 2].map(() => httpClient(daemon.url)));
    try {
      await until(async () => ((await healthz(daemon.url)).sessions === 3 ? true : undefined), "three busy sessions");
      const refused = await rawRequest(daemon.url, "POST", {}, INIT);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatch(/too many open sessions for this gateway \(3, all busy\)/);
    } finally {
      await Promise.all(busy.map((c) => c.close()));
    }
  });
});
