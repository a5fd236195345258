// Issue 15 acceptance: a bounded soak of the real daemon. 2,000 abandoned sessions (initialize,
// then walk away without DELETE) and 200 full client reconnect cycles (connect, call a stdio
// downstream, DELETE, close); the daemon's resident memory and open file descriptors must come
// back near their baseline. Bounds are generous and nothing is timed.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, tempHome, type TempHome } from "../helpers/gateway.js";
import { abandonedSession, healthz, httpClient, resources, startDaemon, until, type Daemon } from "../helpers/mcp-daemon.js";

const MiB = 1024 * 1024;
let home: TempHome;
let daemon: Daemon;

beforeAll(async () => {
  home = tempHome("mcphub-soak-");
  const cfg = home.writeConfig({
    expose: "all",
    // Long enough for most of the 2,000 to be open at once (how many depends on the machine's
    // speed, so the count is reported, not asserted), short enough to wait for.
    session_idle_timeout: "15s",
    max_sessions_per_agent: 5000,
    servers: { echo: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")] } },
  });
  daemon = await startDaemon(home, cfg);
});
afterAll(async () => {
  await daemon?.stop();
  home?.cleanup();
});

const sessions = async () => Number((await healthz(daemon.url)).sessions);
const pid = () => daemon.child.pid as number;

async function settle(): Promise<{ rss: number; fds: number }> {
  await until(async () => ((await sessions()) === 0 ? true : undefined), "every session to expire", 1200);
  // A sweep that closed many sessions asks for a collection; give it a moment to return pages.
  await new Promise((r) => setTimeout(r, 1500));
  return resources(pid());
}

describe("soak", () => {
  it("2,000 abandoned sessions and 200 reconnect cycles leave memory and descriptors near their baseline", async () => {
    // Warm-up, so one-time allocations (code, caches, the downstream connection) are in the baseline.
    const warm = await httpClient(daemon.url);
    for (let i = 0; i < 20; i++) await warm.call("echo__echo", { message: "warm" });
    await warm.client.close();
    for (let i = 0; i < 100; i++) await abandonedSession(daemon.url);
    const base = await settle();

    for (let i = 0; i < 2000; i++) await abandonedSession(daemon.url);
    const peakSessions = await sessions();
    const peak = resources(pid());
    const afterAbandoned = await settle();

    for (let i = 0; i < 200; i++) {
      const c = await httpClient(daemon.url);
      const r = await c.call("echo__echo", { message: `cycle ${i}` });
      expect(r.isError).toBeFalsy();
      await c.transport.terminateSession();
      await c.client.close();
    }
    const afterCycles = await settle();

    const report = {
      baseline: { rssMiB: +(base.rss / MiB).toFixed(1), fds: base.fds },
      with2000Sessions: { sessions: peakSessions, rssMiB: +(peak.rss / MiB).toFixed(1), fds: peak.fds },
      after2000Expired: { rssMiB: +(afterAbandoned.rss / MiB).toFixed(1), fds: afterAbandoned.fds },
      after200Cycles: { rssMiB: +(afterCycles.rss / MiB).toFixed(1), fds: afterCycles.fds },
    };
    console.log(`soak: ${JSON.stringify(report)}`);
    // Expiry, not the cap, freed them.
    expect(peakSessions).toBeGreaterThan(0);
    // Generous: 2,000 sessions cost about 100 MiB here (measured +97 MiB with all of them open),
    // and V8 returns freed pages lazily (+42..+56 MiB was seen right after expiry); a leak keeps
    // all of it (and the session count never drops to 0 at all).
    for (const after of [afterAbandoned, afterCycles]) {
      expect(after.fds).toBeLessThanOrEqual(base.fds + 8);
      expect(after.rss).toBeLessThanOrEqual(base.rss + 80 * MiB);
    }
  }, 300_000);
});
