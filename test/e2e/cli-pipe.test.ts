// A reader that stops early closes the pipe: `mcphub --help | head -3` must end quietly with the
// command's exit code, not with Node's "Unhandled 'error' event ... EPIPE" stack trace. The real
// launcher (bin/mcphub.js) is spawned with its stdout pipe closed before it writes a byte, so every
// write fails with EPIPE.
import { spawn } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, tempHome } from "../helpers/gateway.js";

const home = tempHome("mcphub-pipe-");
afterAll(() => home.cleanup());

/** Runs mcphub with a stdout nobody reads (the pipe is closed at once); returns code and stderr. */
function runIntoClosedPipe(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: home.env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.destroy();
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("close", (code, signal) => resolve({ code, signal, stderr })));
}

describe("output into a closed pipe", () => {
  it.each([[["--help"]], [["sync", "--help"]], [["--version"]]])("mcphub %j ends quietly with exit 0", async (args) => {
    const run = await runIntoClosedPipe(args);
    expect(run.stderr).toBe("");
    expect(run).toMatchObject({ code: 0, signal: null });
  }, 60_000);

  it("a failing command keeps its exit code and its one-line error on stderr", async () => {
    const run = await runIntoClosedPipe(["--config", `${home.dir}/no-such.yaml`, "list"]);
    expect(run.stderr).not.toMatch(/EPIPE|at .*\.js:\d+/);
    expect(run.stderr).toMatch(/^mcphub: .*no-such\.yaml/);
    expect(run.code).toBeGreaterThan(0);
  }, 60_000);
});
