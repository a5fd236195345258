// The supervisor against our fixture servers: publication order, outcome-unknown on a crash,
// cancellation and progress, list_changed coalescing, tree kill, locked secrets, stderr.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LockedError, NotConnectedError, OutcomeUnknownError, type SecretResolver } from "../../../src/downstream/types.js";
import { alive, descendants, eventually, fixture, lines, supervisorKit, textOf } from "./util.js";

const kit = supervisorKit();
const { supervisor, tmp } = kit;

afterEach(() => kit.cleanup());

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected the promise to reject");
}

describe("Supervisor", () => {
  it("publishes a fast server while a slow one is still starting", async () => {
    const sup = supervisor({ fast: fixture("slow-start.mjs", { env: { SLOW_START_MS: "0" } }), slow: fixture("slow-start.mjs", { env: { SLOW_START_MS: "4000" } }) });
    const readyOrder: string[] = [];
    const slowStateWhenFastReady: string[] = [];
    sup.onChange((name) => {
      if (sup.snapshot(name)?.state === "ready" && !readyOrder.includes(name)) {
        readyOrder.push(name);
        if (name === "fast") slowStateWhenFastReady.push(sup.snapshot("slow")?.state ?? "none");
      }
    });
    sup.start();
    await sup.waitForServer("slow", { timeoutMs: 20_000 });
    await eventually(() => readyOrder.length === 2, "both ready events");
    expect(readyOrder).toEqual(["fast", "slow"]);
    expect(slowStateWhenFastReady).toEqual(["connecting"]);
  });

  it("reports disabled, unknown and not-started servers with distinct errors", async () => {
    const sup = supervisor({ on: fixture("slow-start.mjs"), off: fixture("slow-start.mjs", { enabled: false }), later: fixture("slow-start.mjs") });
    sup.start(["on", "off"]);
    expect(sup.snapshot("off")?.state).toBe("disabled");
    expect(sup.snapshot("later")).toBeUndefined();
    expect(sup.snapshots().map((s) => s.name)).toEqual(["off", "on"]);
    const disabled = await rejection(sup.waitForServer("off", { timeoutMs: 1000 }));
    expect(disabled).toBeInstanceOf(NotConnectedError);
    expect((disabled as NotConnectedError).kind).toBe("disabled");
    const unknown = await rejection(sup.callTool("nope", "echo", {}));
    expect((unknown as NotConnectedError).kind).toBe("unknown");
    expect((unknown as Error).message).toContain('unknown server "nope"');
    const notStarted = await rejection(sup.waitForServer("later", { timeoutMs: 50 }));
    expect((notStarted as NotConnectedError).kind).toBe("not_published");
    expect(() => sup.start(["ghost"])).toThrow(/unknown server/);
  });

  it("turns a crash mid-call into outcome-unknown, never replays, and reconnects", async () => {
    const dir = tmp();
    const env = { CRASH_LOG: join(dir, "crash.log"), START_LOG: join(dir, "start.log") };
    const sup = supervisor({ crashy: fixture("crash-mid-call.mjs", { env }) });
    sup.start();
    await sup.waitForServer("crashy", { timeoutMs: 20_000 });
    // A long timeout: the failure must come from the child's exit, not from a timer.
    const err = await rejection(sup.callTool("crashy", "crash", {}, { timeoutMs: 600_000 }));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as OutcomeUnknownError).reason).toBe("transport");
    expect((err as OutcomeUnknownError).server).toBe("crashy");
    expect((err as OutcomeUnknownError).tool).toBe("crash");
    expect((err as Error).message).toMatch(/not retried/);
    const next = await sup.callTool("crashy", "echo", { message: "again" }, { timeoutMs: 20_000 });
    expect(textOf(next)).toBe("echo: again");
    expect(lines(env.CRASH_LOG)).toHaveLength(1);
    expect(lines(env.START_LOG)).toHaveLength(2);
    expect(sup.snapshot("crashy")?.generation).toBeGreaterThanOrEqual(2);
  });

  it("forwards progress and returns isError results as normal results", async () => {
    const sup = supervisor({ p: fixture("progress-cancel.mjs") });
    sup.start();
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const result = await sup.callTool("p", "slow", { steps: 3 }, { onProgress: (p) => progress.push(p) });
    expect(textOf(result)).toBe("done after 3 steps");
    expect(progress).toEqual([
      { progress: 1, total: 3, message: "step 1" },
      { progress: 2, total: 3, message: "step 2" },
      { progress: 3, total: 3, message: "step 3" },
    ]);
    const sup2 = supervisor({ s: fixture("slow-start.mjs") });
    sup2.start();
    const failed = await sup2.callTool("s", "fail", {});
    expect(failed.isError).toBe(true);
  });

  it("forwards a caller's cancellation downstream and keeps the session", async () => {
    const dir = tmp();
    const env = { CANCEL_LOG: join(dir, "cancel.log"), START_LOG: join(dir, "start.log") };
    const sup = supervisor({ p: fixture("progress-cancel.mjs", { env }) });
    sup.start();
    const ac = new AbortController();
    const err = await rejection(sup.callTool("p", "slow", { steps: 100_000 }, { signal: ac.signal, onProgress: () => ac.abort() }));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as OutcomeUnknownError).reason).toBe("cancelled");
    await eventually(() => lines(env.CANCEL_LOG).length === 1, "the fixture to record the cancellation");
    expect(lines(env.CANCEL_LOG)[0]).toMatch(/^cancelled /);
    const ok = await sup.callTool("p", "echo", { message: "still here" });
    expect(textOf(ok)).toBe("echo: still here");
    expect(lines(env.START_LOG)).toHaveLength(1);
  });

  it("treats a timeout as outcome-unknown, cancels it downstream, and keeps the shared session", async () => {
    const dir = tmp();
    const env = { CANCEL_LOG: join(dir, "cancel.log"), START_LOG: join(dir, "start.log") };
    const sup = supervisor({ p: fixture("progress-cancel.mjs", { env }) });
    sup.start();
    await sup.waitForServer("p", { timeoutMs: 20_000 });
    const err = await rejection(sup.callTool("p", "slow", { steps: 100_000 }, { timeoutMs: 300 }));
    expect((err as OutcomeUnknownError).reason).toBe("timeout");
    await eventually(() => lines(env.CANCEL_LOG).length === 1, "the downstream saw the cancellation");
    const ok = await sup.callTool("p", "echo", { message: "after" });
    expect(textOf(ok)).toBe("echo: after");
    // The same process served the next call: a timed-out call does not restart a shared server.
    expect(lines(env.START_LOG)).toHaveLength(1);
  });

  it("coalesces a list_changed storm into few re-lists", async () => {
    const sup = supervisor({ lc: fixture("list-changed.mjs") });
    sup.start();
    const before = await sup.waitForServer("lc", { timeoutMs: 20_000 });
    const changes: number[] = [];
    sup.onChange((n) => changes.push(sup.snapshot(n)?.tools.length ?? 0));
    await sup.callTool("lc", "add_tool", { count: 50 });
    await eventually(() => sup.snapshot("lc")?.tools.some((t) => t.name === "added_50") === true, "the 50th added tool");
    const count = Number(textOf(await sup.callTool("lc", "list_count", {})));
    // 1 at connect, then at most one in flight + one pending for the storm (a few if the
    // notifications straddle reads); never one per notification.
    expect(count).toBeGreaterThanOrEqual(2);
    expect(count).toBeLessThanOrEqual(5);
    const after = sup.snapshot("lc")!;
    expect(after.tools).toHaveLength(before.tools.length + 50);
    expect(after.generation - before.generation).toBe(count - 1);
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.length).toBeLessThanOrEqual(count);
  });

  it("kills the whole process tree on close, grandchildren included", async () => {
    const sup = supervisor({ tree: fixture("spawns-grandchild.mjs"), other: fixture("slow-start.mjs") });
    sup.start();
    await sup.waitForServer("tree", { timeoutMs: 20_000 });
    await sup.waitForServer("other", { timeoutMs: 20_000 });
    const grandchild = Number(textOf(await sup.callTool("tree", "grandchild_pid", {})));
    const pids = descendants(process.pid);
    expect(pids).toContain(grandchild);
    expect(pids.filter(alive).length).toBeGreaterThanOrEqual(3);
    await sup.close();
    await sup.close(); // idempotent
    expect(pids.filter(alive)).toEqual([]);
    const err = await rejection(sup.callTool("other", "echo", { message: "x" }));
    expect((err as NotConnectedError).kind).toBe("closed");
  });

  it("locks only the server whose secrets are locked", async () => {
    const calls: string[] = [];
    const secrets: SecretResolver = {
      envFor: async (server) => {
        calls.push(server);
        throw new LockedError("the vault is locked; run `mcphub vault unlock`");
      },
      header: async () => {
        throw new LockedError("the vault is locked");
      },
      knownSecretValues: () => [],
    };
    const sup = supervisor(
      { locked: fixture("slow-start.mjs", { vault: "P" }), fine: fixture("slow-start.mjs"), remote: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "vault://P/TOKEN" }, enabled: true } },
      { secrets, backoff: { initialMs: 10, maxMs: 60_000 } },
    );
    sup.start();
    await sup.waitForServer("fine", { timeoutMs: 20_000 });
    await eventually(() => sup.snapshot("locked")?.state === "locked" && sup.snapshot("remote")?.state === "locked", "both locked");
    const snap = sup.snapshot("locked")!;
    expect(snap.connected).toBe(false);
    expect(snap.error).toMatch(/locked/);
    const err = await rejection(sup.callTool("locked", "echo", { message: "x" }));
    expect((err as NotConnectedError).kind).toBe("not_connected");
    expect((err as Error).message).toMatch(/locked/);
    expect(textOf(await sup.callTool("fine", "echo", { message: "ok" }))).toBe("echo: ok");
    // Retries wait for the maximum backoff: no hot loop while locked.
    expect(calls).toEqual(["locked"]);
  });

  it("redacts secrets from a failed start's stderr and error", async () => {
    const secret = "s3cr3t-value-from-vault";
    const token = "tok_abcdefghijklmnop";
    const secrets: SecretResolver = {
      envFor: async () => ({ FIXTURE_SECRET: secret }),
      header: async () => "",
      knownSecretValues: () => [secret],
    };
    const sup = supervisor({ leaky: fixture("stderr-secret.mjs", { vault: "P", env: { SERVICE_TOKEN: token } }) }, { secrets, backoff: { initialMs: 60_000, maxMs: 60_000 } });
    sup.start();
    await eventually(() => sup.snapshot("leaky")?.state === "failed", "the failed state");
    const snap = sup.snapshot("leaky")!;
    const all = JSON.stringify(snap);
    expect(all).not.toContain(secret);
    expect(all).not.toContain(token);
    expect(snap.error).toMatch(/exited with code 3/);
    expect(snap.error).toMatch(/downstream stderr: /);
    // The error carries a fixed summary plus the one line that explains it, redacted (issue 15,
    // item 12: an operator needs the file, option or variable to act on); the tail is kept, redacted.
    expect(snap.error).toContain("fatal: could not log in with [redacted]");
    expect(snap.stderrTail).toContain("could not log in with [redacted]");
    expect(snap.stderrTail).not.toMatch(/\u001b/);
  });

  it("keeps retrying a failing server in the background", async () => {
    const dir = tmp();
    const env = { START_LOG: join(dir, "start.log") };
    const sup = supervisor({ bad: fixture("stderr-secret.mjs", { env }) }, { backoff: { initialMs: 10, maxMs: 50 } });
    sup.start();
    await eventually(() => lines(env.START_LOG).length >= 3, "three start attempts");
    expect(["failed", "connecting"]).toContain(sup.snapshot("bad")?.state);
  });

  it("isolates child env: no vault passphrase, no other server's vars", async () => {
    const saved = { ...process.env };
    process.env.MCPHUB_VAULT_PASSPHRASE = "gateway-only-passphrase";
    process.env.B_ONLY = "ambient value meant for b";
    try {
      const sup = supervisor({
        a: fixture("slow-start.mjs", { env: { A_ONLY: "1", SHARED: "a" }, cwd: "~" }),
        b: fixture("slow-start.mjs", { env: { B_ONLY: "2", SHARED: "b" } }),
      });
      sup.start(["a"]);
      const r = await sup.callTool("a", "env", { names: ["A_ONLY", "B_ONLY", "SHARED", "MCPHUB_VAULT_PASSPHRASE", "PATH"] });
      const env = JSON.parse(textOf(r)) as Record<string, string | null>;
      expect(env).toEqual({ A_ONLY: "1", B_ONLY: null, SHARED: "a", MCPHUB_VAULT_PASSPHRASE: null, PATH: process.env.PATH });
      expect(textOf(await sup.callTool("a", "cwd", {}))).toBe((await import("node:os")).homedir());
      expect(sup.snapshot("b")).toBeUndefined(); // not started: never spawned
    } finally {
      process.env = saved;
    }
  });

  it("fails in-flight calls at once on close, saying nothing was retried", async () => {
    const sup = supervisor({ p: fixture("progress-cancel.mjs") });
    sup.start();
    let started!: () => void;
    const progressed = new Promise<void>((r) => (started = r));
    const call = rejection(sup.callTool("p", "slow", { steps: 100_000 }, { timeoutMs: 600_000, onProgress: () => started() }));
    await progressed;
    await sup.close();
    const err = await call;
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as Error).message).toMatch(/shutting down/);
  });

  it("kills a server that is still starting when closed", async () => {
    const sup = supervisor({ slow: fixture("slow-start.mjs", { env: { SLOW_START_MS: "30000" } }) });
    sup.start();
    await eventually(() => descendants(process.pid).some(alive), "the child to be spawned");
    const pids = descendants(process.pid);
    await sup.close();
    expect(pids.filter(alive)).toEqual([]);
    expect(sup.snapshot("slow")?.connected).toBe(false);
  });

  it("reports a command that cannot be spawned as failed, with the reason", async () => {
    const sup = supervisor({ missing: { command: "/nonexistent/mcp-server", enabled: true }, ok: fixture("slow-start.mjs") });
    sup.start();
    const err = await rejection(sup.waitForServer("missing", { timeoutMs: 10_000 }));
    expect((err as NotConnectedError).kind).toBe("not_connected");
    expect(sup.snapshot("missing")?.state).toBe("failed");
    expect(sup.snapshot("missing")?.error).toMatch(/ENOENT/);
    await sup.waitForServer("ok", { timeoutMs: 20_000 });
  });

  it("returns large results over stdio intact", async () => {
    const sup = supervisor({ big: fixture("big-output.mjs") });
    sup.start();
    const r = await sup.callTool("big", "big", { bytes: 3_000_000 });
    expect(textOf(r)).toHaveLength(3_000_000);
  });
});
