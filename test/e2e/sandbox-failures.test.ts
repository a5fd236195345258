// A sandbox that cannot be set up: the server goes to `failed` with the cause and the fix, and is
// never started unsandboxed in its place (the probe fixture writes a marker file the moment it
// runs; it must never appear). Causes covered with real processes: bubblewrap missing, a
// bubblewrap that cannot create namespaces (a stand-in printing the message bwrap prints when the
// kernel forbids unprivileged user namespaces, since a test cannot switch the kernel's off), a
// listed path that does not exist, mcphub's data dir listed, a cwd that would show all of HOME,
// and npx asked for a package it would have to download.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doc, FIXTURES, ROOT, startGateway, tempHome, until, type GatewayClient, type TempHome } from "../helpers/gateway.js";
import { sandboxUnavailable } from "../helpers/sandbox.js";

const unavailable = await sandboxUnavailable();
const PROBE = join(FIXTURES, "sandbox-probe.mjs");

interface Listed {
  name: string;
  state: string;
  error?: string;
}

async function failure(gw: GatewayClient, server: string): Promise<Listed> {
  let found: Listed | undefined;
  await until(async () => {
    const servers = doc(await gw.call("mcphub_list_servers")).servers as Listed[];
    found = servers.find((s) => s.name === server);
    return found?.state === "failed";
  }, `${server} to fail`);
  return found as Listed;
}

describe("a sandbox that cannot be set up fails the server, naming the cause and the fix", () => {
  let home: TempHome;
  const markers: Record<string, string> = {};
  const gateways: GatewayClient[] = [];

  beforeAll(() => {
    home = tempHome("mcphub-sandbox-fail-");
    for (const n of ["nobwrap", "nouserns", "missing", "datadir", "homecwd"]) markers[n] = join(home.dir, `${n}.started`);
  });

  afterAll(async () => {
    for (const gw of gateways) await gw.close();
    home?.cleanup();
  });

  const probe = (name: string, sandbox: unknown, extra: Record<string, unknown> = {}) => ({
    command: process.execPath,
    args: [PROBE],
    env: { SANDBOX_PROBE_STARTED: markers[name] },
    sandbox,
    ...extra,
  });

  it("bubblewrap missing: the install command, and nothing started", async () => {
    const config = home.writeConfig({ servers: { nobwrap: probe("nobwrap", { network: "none" }) } }, "nobwrap.yaml");
    // A PATH without bwrap (the probe's node is given by its full path).
    const gw = await startGateway(home, config, { env: { PATH: join(home.dir, "empty-bin") } });
    gateways.push(gw);
    const s = await failure(gw, "nobwrap");
    expect(s.error).toBe(
      "sandbox: bubblewrap (bwrap) is not installed (not found on PATH); install bubblewrap (Debian/Ubuntu: sudo apt install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap), or set sandbox: off for this server (it then runs with your full rights)",
    );
    expect(existsSync(markers.nobwrap as string)).toBe(false);
  });

  it("user namespaces refused: bwrap's words, the switch behind them and the fix", async () => {
    const fake = join(home.dir, "fake-bwrap");
    // What bubblewrap 0.8 prints when the kernel refuses unprivileged user namespaces.
    writeFileSync(
      fake,
      `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "bubblewrap 0.8.0"; exit 0; fi\necho "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>." >&2\nexit 1\n`,
    );
    chmodSync(fake, 0o755);
    const config = home.writeConfig({ servers: { nouserns: probe("nouserns", {}) } }, "nouserns.yaml");
    const gw = await startGateway(home, config, { env: { MCPHUB_BWRAP: fake } });
    gateways.push(gw);
    const s = await failure(gw, "nouserns");
    expect(s.error).toMatch(/^sandbox: .*namespaces.*\(.*bwrap said: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces/);
    // The fix names a concrete action, and the alternative is the operator's call.
    expect(s.error).toMatch(/; (enable them|allow them|allow bwrap|run the container|check that the kernel).*or set sandbox: off for this server/);
    expect(existsSync(markers.nouserns as string)).toBe(false);
  });

  it.skipIf(unavailable !== undefined)("a listed path that does not exist, mcphub's data dir listed, a cwd that would show all of HOME", async () => {
    mkdirSync(join(home.dir, "data"), { recursive: true });
    const config = home.writeConfig(
      {
        servers: {
          missing: probe("missing", { read: ["~/no-such-folder"] }),
          datadir: probe("datadir", { read: ["~/data"] }),
          homecwd: probe("homecwd", {}, { cwd: "~" }),
          // npx cannot install inside a sandbox: said as such, not as an npm error.
          notinstalled: { command: "npx", args: ["-y", "@mcphub-test/not-installed-anywhere"], cwd: ROOT, sandbox: { network: "none" } },
        },
      },
      "paths.yaml",
    );
    const gw = await startGateway(home, config);
    gateways.push(gw);
    expect((await failure(gw, "missing")).error).toBe(
      "sandbox: sandbox.read lists ~/no-such-folder, which does not exist; create it or remove it from sandbox.read, or set sandbox: off for this server (it then runs with your full rights)",
    );
    expect((await failure(gw, "datadir")).error).toBe("sandbox: sandbox.read lists ~/data, which is mcphub's data dir (vault, key file, tokens); a sandboxed server never sees it: remove it from the list");
    expect((await failure(gw, "homecwd")).error).toBe(
      "sandbox: the server's cwd ~ would show your whole home directory; set cwd to the folder the server needs, or list ~ under sandbox.read to show it on purpose",
    );
    for (const n of ["missing", "datadir", "homecwd"]) expect(existsSync(markers[n] as string), n).toBe(false);
    expect((await failure(gw, "notinstalled")).error).toBe(
      "sandbox: npx could not find @mcphub-test/not-installed-anywhere installed (npm said: ENOTCACHED), and it cannot download it inside the sandbox (npm's cache is read-only there and the network is off); install it in the server's cwd (npm install @mcphub-test/not-installed-anywhere) or globally, or set sandbox: off for this server (it then runs with your full rights)",
    );
  });
});
