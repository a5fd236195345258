// Runtimes other than node inside the sandbox, with real processes behind a real gateway: a
// Python server run as `python3 SCRIPT`, and a server whose command is a script naming its
// interpreter in its `#!` line — here a virtualenv's python under HOME, as pipx and uv tools are
// installed (that interpreter is outside every folder the sandbox shows unless the sandbox follows
// the `#!` line; without it the start fails with "execvp ...: No such file or directory").
// Each still sees nothing of HOME it was not given.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, startGateway, tempHome, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";
import { attempt, sandboxUnavailable } from "../helpers/sandbox.js";

const unavailable = await sandboxUnavailable();
const PY_PROBE = join(FIXTURES, "sandbox-probe.py");

/** Where python3 runs from (sys.executable), or undefined when there is no usable python3. */
function python(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return execFileSync("python3", ["-c", "import sys; print(sys.executable)"], { env, encoding: "utf8", timeout: 30_000 }).trim();
  } catch {
    console.warn("python runtime tests skipped: python3 is not installed");
    return undefined;
  }
}

describe.skipIf(unavailable !== undefined)("python servers in the sandbox", () => {
  let home: TempHome;
  let gw: GatewayClient | undefined;
  let outside: string | undefined;
  let venvPython = "";
  const canary = { path: "" };

  beforeAll(async () => {
    home = tempHome("mcphub-sandbox-py-");
    outside = python(home.env);
    if (!outside) return;
    canary.path = join(home.dir, "notes", "canary.txt");
    mkdirSync(join(home.dir, "notes"));
    writeFileSync(canary.path, "CANARY-py");
    // A tool installed the pipx way: a virtualenv under HOME, and a script whose #! names its python.
    const venv = join(home.dir, ".local", "pipx", "venvs", "probe");
    execFileSync("python3", ["-m", "venv", "--without-pip", venv], { env: home.env, timeout: 60_000 });
    venvPython = join(venv, "bin", "python");
    const tool = join(venv, "bin", "probe-py");
    writeFileSync(tool, readFileSync(PY_PROBE, "utf8").replace(/^#!.*\n/, `#!${venvPython}\n`));
    chmodSync(tool, 0o755);
    const config = home.writeConfig({
      expose: "all",
      servers: {
        py: { command: "python3", args: [PY_PROBE], sandbox: { network: "none" } },
        tool: { command: tool, sandbox: { network: "none" } },
      },
    });
    gw = await startGateway(home, config);
    await waitReady(gw, ["py", "tool"]);
  });

  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  it("python3 SCRIPT answers from the sandbox with the interpreter it has outside, and sees nothing of HOME", async (ctx) => {
    if (!gw || !outside) return ctx.skip();
    const r = attempt(await gw.call("py__where", {}));
    expect(r.ok).toBe(true);
    expect(r.detail).toBe(outside);
    expect(attempt(await gw.call("py__read_file", { path: canary.path }))).toEqual({ ok: false, detail: "ENOENT" });
    expect(attempt(await gw.call("py__read_file", { path: PY_PROBE })).ok).toBe(true);
  });

  it("a script whose #! names a virtualenv's python under HOME starts, on that python, and sees nothing else of HOME", async (ctx) => {
    if (!gw || !outside) return ctx.skip();
    const r = attempt(await gw.call("tool__where", {}));
    expect(r.ok).toBe(true);
    expect(r.detail).toBe(venvPython);
    expect(attempt(await gw.call("tool__read_file", { path: canary.path }))).toEqual({ ok: false, detail: "ENOENT" });
  });
});
