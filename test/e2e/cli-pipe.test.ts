// A reader that stops early closes the pipe: `mcphub --help | head -3` must end quietly with the
// command's exit code, not with Node's "Unhandled 'error' event ... EPIPE" stack trace. The real
// launcher (bin/mcphub.js) is spawned with its stdout pipe closed before it writes a byte, so every
// write fails with EPIPE. A daemon whose log pipe closes (`mcphub up 2>&1 | head -2`) keeps serving.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, MEMORY, tempHome, until } from "../helpers/gateway.js";

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

  it("a daemon whose log pipe is closed keeps serving, and stops cleanly on SIGTERM", async () => {
    const cfg = home.writeConfig({ servers: { memory: { command: process.execPath, args: [MEMORY], start: "eager", sandbox: "off" } } }, "daemon.yaml");
    const child = spawn(process.execPath, [BIN, "--config", cfg, "up", "--listen", "127.0.0.1:0"], { env: { ...home.env, MCPHUB_LOG_LEVEL: "info" }, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    child.stderr.destroy();
    let exit: number | null | undefined;
    child.once("exit", (code) => (exit = code));
    try {
      // Its address is in the daemon record (it cannot tell us on stderr).
      // Only a record under its own name (<pid>.json, renamed into place whole) counts: the
      // folder also holds the record's temp file while it is being written, empty at first.
      const dir = join(String(home.env.MCPHUB_DATA_DIR), "daemons");
      const record = () => (existsSync(dir) ? readdirSync(dir).find((n) => /^\d+\.json$/.test(n)) : undefined);
      await until(() => exit !== undefined || record() !== undefined, "the daemon record", 1800);
      expect(exit).toBeUndefined();
      const url = (JSON.parse(readFileSync(join(dir, record() as string), "utf8")) as { url: string }).url;
      // The eager server's "ready" line is written after the pipe closed: the daemon lives on.
      let states: string[] = [];
      await until(async () => {
        const doc = (await (await fetch(url.replace(/\/mcp$/, "/api/status"))).json()) as { servers: { state: string }[] };
        states = doc.servers.map((s) => s.state);
        return states.includes("ready") || exit !== undefined;
      }, "memory ready", 1800);
      expect(states).toEqual(["ready"]);
      expect(exit).toBeUndefined();
    } finally {
      if (exit === undefined) child.kill("SIGTERM");
    }
    await until(() => exit !== undefined, "the daemon's exit");
    expect(exit).toBe(0);
  }, 120_000);
});
