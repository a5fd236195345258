// Acceptance for sandboxed servers (docs/sandbox.md), with real processes: the probe fixture runs
// behind a real gateway twice, once sandboxed and once with `sandbox: off`, and makes the same
// attempts in both: read a canary under HOME, mcphub's vault key file and another harness's
// config, write outside its write: paths, reach a port on the host's loopback, read a secret
// from the environment. Every attempt must fail inside and succeed outside (so the test sees the
// difference, not a fixture that cannot do anything).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, runMcphub, startGateway, tempHome, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";
import { attempt, sandboxUnavailable } from "../helpers/sandbox.js";

const unavailable = await sandboxUnavailable();
const PROBE = join(FIXTURES, "sandbox-probe.mjs");

describe.skipIf(unavailable !== undefined)("a sandboxed server sees only what it needs", () => {
  let home: TempHome;
  let gw: GatewayClient;
  let listener: Server;
  let port = 0;
  const paths = { canary: "", key: "", harness: "", out: "", elsewhere: "" };

  beforeAll(async () => {
    home = tempHome("mcphub-sandbox-");
    paths.canary = join(home.dir, "notes", "canary.txt");
    mkdirSync(join(home.dir, "notes"));
    writeFileSync(paths.canary, "CANARY-in-home");
    paths.harness = join(home.dir, ".claude.json");
    writeFileSync(paths.harness, JSON.stringify({ mcpServers: { x: { env: { TOKEN: "CANARY-harness-token" } } } }));
    mkdirSync(join(home.dir, ".ssh"));
    writeFileSync(join(home.dir, ".ssh", "id_ed25519"), "CANARY-ssh-key");
    paths.out = join(home.dir, "out");
    paths.elsewhere = join(home.dir, "elsewhere");
    mkdirSync(paths.out);
    mkdirSync(paths.elsewhere);
    // A real vault: its key file is created by mcphub itself (no keychain in tests).
    const set = await runMcphub(home, ["vault", "set", "demo/TOKEN"], { input: "vault-secret" });
    expect(set.code, set.stderr).toBe(0);
    paths.key = join(home.dir, "data", "vault", "master.key");
    expect(existsSync(paths.key)).toBe(true);

    listener = createServer((c) => c.end()).listen(0, "127.0.0.1");
    await new Promise<void>((r) => listener.once("listening", () => r()));
    port = (listener.address() as { port: number }).port;

    const probe = (sandbox: unknown) => ({ command: process.execPath, args: [PROBE], sandbox });
    const config = home.writeConfig({
      expose: "all",
      servers: {
        boxed: probe({ network: "none", write: [paths.out] }),
        loop: probe({ network: "loopback" }),
        // read: [~] on purpose: even then the protected paths inside stay covered.
        homeview: probe({ network: "none", read: ["~"] }),
        allowed: probe({ env: ["PROBE_*"] }),
        open: probe("off"),
      },
    });
    gw = await startGateway(home, config, { env: { PROBE_SECRET: "CANARY-env", OTHER_SECRET: "CANARY-env-2" } });
    await waitReady(gw, ["boxed", "loop", "homeview", "allowed", "open"]);
  });

  afterAll(async () => {
    await gw?.close();
    rmSync(join(FIXTURES, `.sandbox-probe-open-${process.pid}.tmp`), { force: true });
    listener?.close();
    home?.cleanup();
  });

  const tryAll = async (server: string) => ({
    canary: attempt(await gw.call(`${server}__read_file`, { path: paths.canary })),
    key: attempt(await gw.call(`${server}__read_file`, { path: paths.key })),
    harness: attempt(await gw.call(`${server}__read_file`, { path: paths.harness })),
    writeElsewhere: attempt(await gw.call(`${server}__write_file`, { path: join(paths.elsewhere, `${server}.txt`), text: "x" })),
    // A folder the sandbox shows read-only (the fixture's own project, for its runtime).
    writeShown: attempt(await gw.call(`${server}__write_file`, { path: join(FIXTURES, `.sandbox-probe-${server}-${process.pid}.tmp`), text: "x" })),
    loopback: attempt(await gw.call(`${server}__connect`, { host: "127.0.0.1", port })),
    env: attempt(await gw.call(`${server}__env`, { name: "OTHER_SECRET" })),
  });

  it("every attempt fails inside the sandbox", async () => {
    const r = await tryAll("boxed");
    for (const [what, a] of Object.entries(r)) expect(a.ok, `${what}: ${a.detail}`).toBe(false);
    // Not found, read-only, refused: the sandbox's answers, not the fixture's.
    expect(r.canary.detail).toBe("ENOENT");
    expect(r.key.detail).toBe("ENOENT");
    expect(r.writeElsewhere.detail).toBe("ENOENT");
    expect(r.writeShown.detail).toBe("EROFS");
    expect(r.loopback.detail).toBe("EACCES");
    expect(existsSync(join(paths.elsewhere, "boxed.txt"))).toBe(false);
    // HOME inside is private and empty: a write there succeeds in it and never reaches the real one.
    expect(attempt(await gw.call("boxed__write_file", { path: join(home.dir, "boxed.txt"), text: "x" })).ok).toBe(true);
    expect(existsSync(join(home.dir, "boxed.txt"))).toBe(false);
    // What it was given still works.
    expect(attempt(await gw.call("boxed__write_file", { path: join(paths.out, "ok.txt"), text: "inside" })).ok).toBe(true);
    expect(readFileSync(join(paths.out, "ok.txt"), "utf8")).toBe("inside");
  });

  it("every attempt succeeds with sandbox: off (the test can see the difference)", async () => {
    const r = await tryAll("open");
    for (const [what, a] of Object.entries(r)) expect(a.ok, `${what}: ${a.detail}`).toBe(true);
    expect(r.canary.detail).toBe("CANARY-in-home");
    expect(r.harness.detail).toContain("CANARY-harness-token");
    expect(r.env.detail).toBe("CANARY-env-2");
  });

  it("network: loopback has a loopback of its own, not the host's", async () => {
    expect(attempt(await gw.call("loop__connect", { host: "127.0.0.1", port }))).toEqual({ ok: false, detail: "ECONNREFUSED" });
    expect(attempt(await gw.call("loop__listen", {})).ok).toBe(true);
    // network: none has no IP at all, not even its own loopback.
    expect(attempt(await gw.call("boxed__listen", {}))).toEqual({ ok: false, detail: "EACCES" });
  });

  it("a listed home directory still hides the vault, SSH keys and harness configs", async () => {
    expect(attempt(await gw.call("homeview__read_file", { path: paths.canary }))).toEqual({ ok: true, detail: "CANARY-in-home" });
    for (const p of [paths.key, paths.harness, join(home.dir, ".ssh", "id_ed25519")]) {
      const a = attempt(await gw.call("homeview__read_file", { path: p }));
      expect(a, p).toEqual({ ok: false, detail: "EACCES" });
    }
    expect(attempt(await gw.call("homeview__list_dir", { path: join(home.dir, "data") }))).toEqual({ ok: false, detail: "EACCES" });
    // Read-only: listing it for reading does not make it writable.
    expect(attempt(await gw.call("homeview__write_file", { path: join(home.dir, "notes", "x.txt"), text: "x" }))).toEqual({ ok: false, detail: "EROFS" });
  });

  it("sandbox.env lets the named variables through, and only those", async () => {
    expect(attempt(await gw.call("allowed__env", { name: "PROBE_SECRET" }))).toEqual({ ok: true, detail: "CANARY-env" });
    expect(attempt(await gw.call("allowed__env", { name: "OTHER_SECRET" })).ok).toBe(false);
    expect(attempt(await gw.call("allowed__env", { name: "PATH" })).ok).toBe(true);
  });
});
