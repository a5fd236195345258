// The operator's controls on a running supervisor (the status page's buttons): reconnect drops
// and re-opens one server's connection at once; replace puts a new config in place (disable stops
// the process tree, enable starts afresh) without touching the other servers.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { Supervisor } from "../../../src/downstream/supervisor.js";
import { alive, descendants, eventually, fixture, quietLog } from "./util.js";

const open: Supervisor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function supervisor(): Supervisor {
  const sup = new Supervisor({
    servers: { a: fixture("echo.mjs"), b: fixture("echo.mjs") },
    connectTimeoutMs: 20_000,
    clientInfo: { name: "mcphub", version: "test" },
    log: quietLog,
    backoff: { initialMs: 10, maxMs: 200 },
  });
  open.push(sup);
  return sup;
}

/** The live processes below this test process (the echo servers). */
function children(): number[] {
  return descendants(process.pid).filter((p) => alive(p) && cmdline(p).includes("echo.mjs"));
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

describe("Supervisor controls", () => {
  it("reconnect replaces one server's connection and process, and leaves the others alone", async () => {
    const sup = supervisor();
    sup.start();
    await sup.waitForServer("a", { timeoutMs: 20_000 });
    await sup.waitForServer("b", { timeoutMs: 20_000 });
    const genA = sup.snapshot("a")?.generation ?? 0;
    const genB = sup.snapshot("b")?.generation ?? 0;
    const before = children();
    const states: string[] = [];
    sup.onChange((n) => {
      if (n === "a") states.push(sup.snapshot("a")?.state ?? "");
    });
    sup.reconnect("a");
    await eventually(() => sup.snapshot("a")?.state === "ready" && (sup.snapshot("a")?.generation ?? 0) > genA, "a reconnected");
    expect(states[0]).toBe("connecting");
    expect(sup.snapshot("b")?.generation).toBe(genB);
    await eventually(() => children().length === before.length, "one old process gone, one new");
    expect(children().filter((p) => !before.includes(p))).toHaveLength(1);
    const r = await sup.callTool("a", "echo", { message: "again" });
    expect(JSON.stringify(r.content)).toContain("Echo: again");
  });

  it("replace with a disabled config stops the server; enabling starts it again", async () => {
    const sup = supervisor();
    sup.start();
    await sup.waitForServer("a", { timeoutMs: 20_000 });
    await sup.waitForServer("b", { timeoutMs: 20_000 });
    const before = children();
    await sup.replace("a", fixture("echo.mjs", { enabled: false }));
    expect(sup.snapshot("a")?.state).toBe("disabled");
    await eventually(() => children().length === before.length - 1, "a's process stopped");
    await expect(sup.callTool("a", "echo", { message: "x" })).rejects.toThrow(/disabled/);
    expect(sup.snapshot("b")?.state).toBe("ready");
    await sup.replace("a", fixture("echo.mjs"));
    sup.start(["a"]);
    await sup.waitForServer("a", { timeoutMs: 20_000 });
    const r = await sup.callTool("a", "echo", { message: "back" });
    expect(JSON.stringify(r.content)).toContain("Echo: back");
  });
});
