// The call limits' ledger (src/gateway/limits): a sliding minute per agent, calls in flight per
// agent, and per server with a bounded first-come-first-served queue; the limits read from the
// config in force at each decision. The clock is the test's, so nothing here waits on a minute.
import { describe, expect, it } from "vitest";
import { validateConfig, type Config } from "../../../src/config/index.js";
import { isRefusal, Limiter, SlidingWindow, WINDOW_MS, type Lease, type LimitRefusal } from "../../../src/gateway/limits/index.js";

const ECHO = { command: "node", args: ["echo.mjs"] };

function setup(raw: Record<string, unknown>) {
  let config: Config = validateConfig({ servers: { echo: ECHO, fragile: ECHO }, ...raw });
  let t = 1_000_000;
  const limiter = new Limiter({ config: () => config, now: () => t });
  return {
    limiter,
    advance: (ms: number) => (t += ms),
    reload: (next: Record<string, unknown>) => {
      config = validateConfig({ servers: { echo: ECHO, fragile: ECHO }, ...next });
      limiter.reconfigure();
    },
  };
}

function lease(a: ReturnType<Limiter["acquire"]>): Lease {
  if (a instanceof Promise || isRefusal(a)) throw new Error(`expected a lease, got ${a instanceof Promise ? "a promise" : a.message}`);
  return a;
}
function refusal(a: ReturnType<Limiter["acquire"]>): LimitRefusal {
  if (a instanceof Promise || !isRefusal(a)) throw new Error("expected a refusal");
  return a;
}

describe("calls_per_minute", () => {
  it("refuses the 61st call in a minute under 60 with the limit's key and the exact wait; another agent is unaffected", () => {
    const { limiter, advance } = setup({ agents: { alpha: { limits: { calls_per_minute: 60 } }, beta: {} } });
    for (let i = 0; i < 60; i++) {
      lease(limiter.acquire("alpha", "echo")).release();
      advance(100);
    }
    const r = refusal(limiter.acquire("alpha", "echo"));
    expect(r.kind).toBe("calls_per_minute");
    expect(r.key).toBe("agents.alpha.limits.calls_per_minute");
    expect(r.value).toBe(60);
    // The first call started 6 s ago: it leaves the window in 54 s.
    expect(r.retryAfterMs).toBe(WINDOW_MS - 6000);
    expect(r.message).toMatch(/agent "alpha" started 60 calls in the last minute, its limit \(agents\.alpha\.limits\.calls_per_minute: 60\); retry in 54s/);
    lease(limiter.acquire("beta", "echo")).release();
    // Exactly when the oldest leaves, one more may start (and only one).
    advance(r.retryAfterMs);
    lease(limiter.acquire("alpha", "echo")).release();
    expect(refusal(limiter.acquire("alpha", "echo")).kind).toBe("calls_per_minute");
  });

  it("a refused call does not count against the minute", () => {
    const { limiter, advance } = setup({ limits: { calls_per_minute: 2 } });
    lease(limiter.acquire("", "echo")).release();
    lease(limiter.acquire("", "echo")).release();
    for (let i = 0; i < 5; i++) expect(refusal(limiter.acquire("", "echo")).key).toBe("limits.calls_per_minute");
    advance(WINDOW_MS);
    lease(limiter.acquire("", "echo")).release();
    lease(limiter.acquire("", "echo")).release();
  });

  it("the top-level limits are every agent's default; an agent's own key wins", () => {
    const { limiter } = setup({ limits: { calls_per_minute: 1 }, agents: { own: { limits: { calls_per_minute: 3 } }, plain: {} } });
    lease(limiter.acquire("plain", "echo")).release();
    expect(refusal(limiter.acquire("plain", "echo")).key).toBe("limits.calls_per_minute");
    for (let i = 0; i < 3; i++) lease(limiter.acquire("own", "echo")).release();
    expect(refusal(limiter.acquire("own", "echo")).key).toBe("agents.own.limits.calls_per_minute");
  });

  it("follows a reload: a raised limit admits at once, a lowered one keeps the newest starts", () => {
    const { limiter, reload } = setup({ limits: { calls_per_minute: 2 } });
    lease(limiter.acquire("", "echo")).release();
    lease(limiter.acquire("", "echo")).release();
    refusal(limiter.acquire("", "echo"));
    reload({ limits: { calls_per_minute: 3 } });
    lease(limiter.acquire("", "echo")).release();
    reload({ limits: { calls_per_minute: 1 } });
    expect(refusal(limiter.acquire("", "echo")).value).toBe(1);
    reload({});
    for (let i = 0; i < 10; i++) lease(limiter.acquire("", "echo")).release();
  });
});

describe("concurrent_calls per agent", () => {
  it("refuses a call over the agent's calls in flight until one ends", () => {
    const { limiter } = setup({ agents: { alpha: { limits: { concurrent_calls: 2 } }, beta: {} } });
    const a = lease(limiter.acquire("alpha", "echo"));
    lease(limiter.acquire("alpha", "fragile"));
    const r = refusal(limiter.acquire("alpha", "echo"));
    expect(r.kind).toBe("concurrent_calls");
    expect(r.key).toBe("agents.alpha.limits.concurrent_calls");
    expect(r.message).toMatch(/has 2 calls in flight/);
    lease(limiter.acquire("beta", "echo"));
    a.release();
    a.release(); // given back once, however often it is released
    lease(limiter.acquire("alpha", "echo"));
    expect(refusal(limiter.acquire("alpha", "echo")).kind).toBe("concurrent_calls");
    expect(limiter.snapshot().agents.find((s) => s.agent === "alpha")?.in_flight).toBe(2);
  });
});

describe("a server's concurrent_calls", () => {
  it("without a queue, refuses at once and names the server's key", () => {
    const { limiter } = setup({ servers: { echo: ECHO, fragile: { ...ECHO, limits: { concurrent_calls: 1 } } } });
    const first = lease(limiter.acquire("a", "fragile"));
    const r = refusal(limiter.acquire("b", "fragile"));
    expect(r.kind).toBe("server_concurrent_calls");
    expect(r.key).toBe("servers.fragile.limits.concurrent_calls");
    expect(r.message).toMatch(/server "fragile" has 1 calls in flight.*and no queue \(servers\.fragile\.limits\.queue: 0\)/);
    lease(limiter.acquire("b", "echo"));
    first.release();
    lease(limiter.acquire("b", "fragile"));
  });

  it("with a queue, calls wait first come first served; a full queue refuses; a timeout refuses with its key", async () => {
    const { limiter } = setup({ servers: { echo: ECHO, fragile: { ...ECHO, limits: { concurrent_calls: 1, queue: 2, queue_timeout: "30s" } } } });
    const first = lease(limiter.acquire("a", "fragile"));
    const second = limiter.acquire("b", "fragile");
    const third = limiter.acquire("c", "fragile");
    expect(second).toBeInstanceOf(Promise);
    expect(third).toBeInstanceOf(Promise);
    expect(refusal(limiter.acquire("d", "fragile")).message).toMatch(/2 calls already waiting, the queue's size/);
    expect(limiter.snapshot().servers.find((s) => s.server === "fragile")).toMatchObject({ in_flight: 1, queued: 2 });
    first.release();
    const got2 = lease(await second);
    expect(got2.agent).toBe("b");
    expect(limiter.snapshot().servers.find((s) => s.server === "fragile")).toMatchObject({ in_flight: 1, queued: 1 });
    got2.release();
    lease(await third).release();
    expect(limiter.snapshot().servers.find((s) => s.server === "fragile")).toMatchObject({ in_flight: 0, queued: 0 });

    const { limiter: short } = setup({ servers: { echo: ECHO, fragile: { ...ECHO, limits: { concurrent_calls: 1, queue: 1, queue_timeout: "20ms" } } } });
    const held = lease(short.acquire("a", "fragile"));
    const late = refusal(await (short.acquire("b", "fragile") as Promise<Lease | LimitRefusal>));
    expect(late.kind).toBe("server_queue_timeout");
    expect(late.key).toBe("servers.fragile.limits.queue_timeout");
    // The call that timed out holds nothing: the agent's count is back to zero.
    expect(short.snapshot().agents.find((s) => s.agent === "b")).toBeUndefined();
    held.release();
  });

  it("a cancelled call leaves the queue; a raised limit (reload) lets waiting calls in", async () => {
    const { limiter, reload } = setup({ servers: { echo: ECHO, fragile: { ...ECHO, limits: { concurrent_calls: 1, queue: 5 } } } });
    lease(limiter.acquire("a", "fragile"));
    const ac = new AbortController();
    const cancelled = limiter.acquire("b", "fragile", ac.signal) as Promise<unknown>;
    const waiting = limiter.acquire("c", "fragile") as Promise<Lease | LimitRefusal>;
    ac.abort(new Error("client cancelled"));
    await expect(cancelled).rejects.toThrow(/client cancelled/);
    expect(limiter.snapshot().servers.find((s) => s.server === "fragile")?.queued).toBe(1);
    reload({ servers: { echo: ECHO, fragile: { ...ECHO, limits: { concurrent_calls: 2, queue: 5 } } } });
    expect(lease(await waiting).agent).toBe("c");
    expect(limiter.inFlight().sort((x, y) => x.agent.localeCompare(y.agent))).toEqual([
      { agent: "a", server: "fragile", calls: 1 },
      { agent: "c", server: "fragile", calls: 1 },
    ]);
  });
});

describe("the config keys", () => {
  it("refuses bad limits with the key's path", () => {
    expect(() => validateConfig({ limits: { calls_per_minute: 0 } })).toThrow(/limits\.calls_per_minute: calls_per_minute must be at least 1/);
    expect(() => validateConfig({ agents: { a: { limits: { concurrent_calls: 1.5 } } } })).toThrow(/agents\.a\.limits\.concurrent_calls: expected a whole number, got a number \(1\.5\)/);
    expect(() => validateConfig({ servers: { s: { ...ECHO, limits: { queue: 3 } } } })).toThrow(/servers\.s\.limits\.concurrent_calls/);
    expect(() => validateConfig({ limits: { per_hour: 3 } })).toThrow(/limits\.per_hour: unknown key/);
  });
});

describe("SlidingWindow", () => {
  it("holds at most N starts in any 60 s and says when the next may start", () => {
    const w = new SlidingWindow(3);
    expect([w.take(0), w.take(10), w.take(20)]).toEqual([0, 0, 0]);
    expect(w.take(30)).toBe(WINDOW_MS - 30);
    expect(w.take(WINDOW_MS)).toBe(0);
    expect(w.count(WINDOW_MS)).toBe(3);
    w.resize(1);
    expect(w.count(WINDOW_MS)).toBe(1);
    expect(w.take(WINDOW_MS + 1)).toBeGreaterThan(0);
  });
});
