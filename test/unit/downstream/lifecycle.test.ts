// The supervisor's lifecycle against real fixture processes: admitted servers stay idle until a
// call needs them (concurrent first calls share one start), ready servers are stopped after the
// idle timeout but never while a call or lease holds them, and reconcile() restarts only the
// servers whose connection changed.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../../src/config/schema.js";
import { alive, eventually, fixture, lines, supervisorKit, textOf } from "./util.js";

const kit = supervisorKit();
const { supervisor, tmp } = kit;
afterEach(() => kit.cleanup());

const server = (log: string, extra: Partial<ServerConfig> = {}) => fixture("lifecycle.mjs", { env: { START_LOG: log }, ...extra });
const pids = (log: string) => lines(log).map((l) => Number(l.slice("start ".length)));

describe("start on first use", () => {
  it("keeps an admitted server idle until a call, and concurrent first calls share one start", async () => {
    const log = join(tmp(), "a.log");
    const sup = supervisor({ a: server(log) });
    sup.admit(["a"]);
    expect(sup.snapshot("a")?.state).toBe("idle");
    expect(pids(log)).toEqual([]);
    const results = await Promise.all([1, 2, 3].map((i) => sup.callTool("a", "echo", { message: `m${i}` })));
    expect(results.map(textOf)).toEqual(["echo: m1", "echo: m2", "echo: m3"]);
    expect(pids(log)).toHaveLength(1);
    expect(sup.snapshot("a")?.state).toBe("ready");
  });

  it("never starts a server that was neither admitted nor started", async () => {
    const log = join(tmp(), "a.log");
    const sup = supervisor({ a: server(log) });
    expect(sup.snapshot("a")).toBeUndefined();
    await expect(sup.callTool("a", "echo", { message: "x" }, { timeoutMs: 200 })).rejects.toThrow(/did not become ready/);
    expect(pids(log)).toEqual([]);
  });
});

describe("idle stopping", () => {
  it("stops a ready server after the idle timeout and starts it again on the next call", async () => {
    const log = join(tmp(), "a.log");
    const sup = supervisor({ a: server(log) }, { idleTimeoutMs: () => 300 });
    sup.start(["a"]);
    expect(textOf(await sup.callTool("a", "echo", { message: "one" }))).toBe("echo: one");
    const [first] = pids(log);
    await eventually(() => sup.snapshot("a")?.state === "idle", "a to be stopped");
    await eventually(() => !alive(first as number), "a's process to exit");
    expect(textOf(await sup.callTool("a", "echo", { message: "two" }))).toBe("echo: two");
    expect(pids(log)).toHaveLength(2);
  });

  it("never stops a server with a call in flight or a lease held", async () => {
    const dir = tmp();
    const [logA, logB, logC] = ["a", "b", "c"].map((n) => join(dir, `${n}.log`)) as [string, string, string];
    const release = join(dir, "release");
    const sup = supervisor({ a: server(logA), b: server(logB), c: server(logC) }, { idleTimeoutMs: () => 300 });
    sup.start(["a", "b", "c"]);
    // Held before they are ready, so no idle window opens for a or b however slow the start.
    const inFlight = sup.callTool("a", "wait_for", { path: release });
    inFlight.catch(() => undefined); // awaited below; a failed assertion must not leave it unhandled
    const releaseB = sup.lease("b");
    expect(sup.busy("a")).toBe(1);
    expect(sup.busy("b")).toBe(1);
    await Promise.all(["a", "b"].map((n) => sup.waitForServer(n, { timeoutMs: 20_000 })));
    // c, with nothing holding it, is stopped; a and b are not.
    await eventually(() => sup.snapshot("c")?.state === "idle", "c to be stopped");
    expect(sup.snapshot("a")?.state).toBe("ready");
    expect(sup.snapshot("b")?.state).toBe("ready");
    expect(pids(logA).every(alive) && pids(logB).every(alive)).toBe(true);
    writeFileSync(release, "");
    expect(textOf(await inFlight)).toContain("saw");
    releaseB();
    releaseB(); // idempotent
    expect(sup.busy("b")).toBe(0);
    await eventually(() => sup.snapshot("a")?.state === "idle" && sup.snapshot("b")?.state === "idle", "a and b to be stopped once released");
  });

  it("leaves a server that exits while idle stopped instead of respawning it", async () => {
    const log = join(tmp(), "a.log");
    const sup = supervisor({ a: server(log) }, { idleTimeoutMs: () => 60_000 });
    sup.start(["a"]);
    await sup.waitForServer("a", { timeoutMs: 20_000 });
    process.kill(pids(log)[0] as number, "SIGKILL");
    await eventually(() => sup.snapshot("a")?.state === "idle", "a to go idle");
    expect(pids(log)).toHaveLength(1);
    expect(textOf(await sup.callTool("a", "echo", { message: "back" }))).toBe("echo: back");
    expect(pids(log)).toHaveLength(2);
  });
});

describe("reconcile", () => {
  it("restarts only servers whose connection changed; others keep their process and in-flight calls", async () => {
    const dir = tmp();
    const [logA, logB, logC, logGone] = ["a", "b", "c", "gone"].map((n) => join(dir, `${n}.log`)) as [string, string, string, string];
    const release = join(dir, "release");
    const servers = { a: server(logA), b: server(logB), gone: server(logGone) };
    const sup = supervisor(servers);
    sup.start(["a", "b", "gone"]);
    await Promise.all(["a", "b", "gone"].map((n) => sup.waitForServer(n, { timeoutMs: 20_000 })));
    const [aPid] = pids(logA);
    const [bPid] = pids(logB);
    const held = sup.callTool("a", "wait_for", { path: release });
    const doomed = sup.callTool("gone", "wait_for", { path: release }).catch((e: unknown) => e);

    const result = sup.reconcile({
      a: { ...servers.a, description: "only metadata changed", idle_timeout: 0 },
      b: server(logB, { args: [...(servers.b.args ?? []), "--extra"] }),
      c: server(logC),
    });
    expect(result).toEqual({ added: ["c"], removed: ["gone"], restarted: ["b"], updated: ["a"] });
    expect(String(await doomed)).toMatch(/gone__wait_for was interrupted because it was removed from the configuration/);
    await eventually(() => !alive(bPid as number), "b's old process to exit");
    // The replacement is not admitted: the caller decides when it starts.
    expect(sup.snapshot("b")).toBeUndefined();
    expect(sup.snapshot("c")).toBeUndefined();
    expect(sup.snapshot("gone")).toBeUndefined();
    sup.start(["b"]);
    expect(textOf(await sup.callTool("b", "echo", { message: "new b" }))).toBe("echo: new b");
    expect(pids(logB)).toHaveLength(2);

    writeFileSync(release, "");
    expect(textOf(await held)).toContain("saw");
    expect(pids(logA)).toEqual([aPid]);
    expect(alive(aPid as number)).toBe(true);
  });
});
