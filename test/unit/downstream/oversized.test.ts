// Issue 15, item 1 (downstream side): a stdio server's answer over max_downstream_message_size fails
// only its own call, with an error naming the limit; the session and its process stay up.
import { afterAll, describe, expect, it } from "vitest";
import { Supervisor } from "../../../src/downstream/supervisor.js";
import { fixture, quietLog, textOf } from "./util.js";

describe("oversized downstream lines", () => {
  const sup = new Supervisor({
    servers: { big: fixture("big-output.mjs") },
    connectTimeoutMs: 30_000,
    clientInfo: { name: "mcphub", version: "test" },
    log: quietLog,
    maxMessageBytes: 64 * 1024,
  });
  afterAll(() => sup.close());

  it("fails the one call with an error naming the limit and keeps the session", async () => {
    sup.start();
    const before = await sup.waitForServer("big", { timeoutMs: 30_000 });
    const err = await sup.callTool("big", "big", { bytes: 300_000 }, { timeoutMs: 20_000 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/larger than max_downstream_message_size \(64 KiB\)/);
    expect(err?.message).not.toMatch(/MCP error -32603: MCP error/);
    // Same session: no reconnect happened, and calls keep working (also right at the limit's edge).
    const ok = await sup.callTool("big", "big", { bytes: 60_000 }, { timeoutMs: 20_000 });
    expect(textOf(ok).length).toBe(60_000);
    expect(textOf(await sup.callTool("big", "echo", { message: "still here" }, { timeoutMs: 20_000 }))).toBe("echo: still here");
    const after = sup.snapshot("big");
    expect(after?.state).toBe("ready");
    expect(after?.generation).toBe(before.generation);
  });
});
