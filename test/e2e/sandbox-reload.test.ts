// A sandbox is fixed when its process starts, so an edit of a running server's `sandbox:` must
// restart that server with the new one (the sandbox is part of the connection's identity). Real
// gateway following its config file, the probe fixture: a folder it may not write becomes
// writable once listed, and `sandbox: off` shows it HOME again; its neighbour keeps its process.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, startGateway, tempHome, until, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";
import { attempt, attemptAcrossRestart, sandboxUnavailable } from "../helpers/sandbox.js";

const unavailable = await sandboxUnavailable();
const PROBE = join(FIXTURES, "sandbox-probe.mjs");

describe.skipIf(unavailable !== undefined)("editing a running server's sandbox", () => {
  let home: TempHome;
  let gw: GatewayClient;
  let out = "";
  let canary = "";
  let marks = "";
  const probe = (sandbox: unknown) => ({ command: process.execPath, args: [PROBE], start: "eager", sandbox });
  // The neighbour writes a marker each time it starts (into the one folder its sandbox may write).
  const other = () => ({ ...probe({ network: "none", write: [marks] }), env: { SANDBOX_PROBE_STARTED: join(marks, "other.started") } });
  const config = (boxed: unknown) => home.writeConfig({ expose: "all", servers: { boxed: probe(boxed), other: other() } });

  beforeAll(async () => {
    home = tempHome("mcphub-sandbox-reload-");
    out = join(home.dir, "out");
    marks = join(home.dir, "marks");
    mkdirSync(out);
    mkdirSync(marks);
    canary = join(home.dir, "canary.txt");
    writeFileSync(canary, "CANARY-reload");
    gw = await startGateway(home, config({ network: "none" }));
    await waitReady(gw, ["boxed", "other"]);
  });

  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  const write = async (name: string) => attemptAcrossRestart(await gw.call("boxed__write_file", { path: join(out, name), text: "x" }));

  it("restarts the server with the new sandbox, in both directions, and leaves the others alone", async () => {
    expect(await write("before.txt")).toEqual({ ok: false, detail: "ENOENT" });
    const started = join(marks, "other.started");
    expect(existsSync(started)).toBe(true);
    rmSync(started);

    config({ network: "none", write: [out] });
    await until(async () => (await write("after.txt")).ok, "the listed folder to become writable");
    expect(readFileSync(join(out, "after.txt"), "utf8")).toBe("x");
    expect(attempt(await gw.call("boxed__read_file", { path: canary })).ok).toBe(false);

    config("off");
    await until(async () => attemptAcrossRestart(await gw.call("boxed__read_file", { path: canary })).ok, "sandbox: off to show HOME");
    // The neighbour's config did not change: it was not restarted.
    expect(existsSync(started)).toBe(false);
    expect(attempt(await gw.call("other__env", { name: "PATH" })).ok).toBe(true);
  });
});
