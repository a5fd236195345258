// Enabling a server from the status page starts it now, whatever its start mode, even when the
// config watcher has already applied the page's own write (the race a loaded machine produces:
// the reload lands first, and a cached `start: auto` server would stay idle).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../src/config/load.js";
import type { Config } from "../../src/config/schema.js";
import { Hub } from "../../src/gateway/index.js";
import { memoryLogger } from "../../src/util/log.js";
import { FIXTURES, until } from "../helpers/gateway.js";

const dirs: string[] = [];
const hubs: Hub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function hubOf(config: Config, dataDir: string): Hub {
  const hub = new Hub({ config, dataDir, env: { ...process.env, MCPHUB_KEYCHAIN: "off" }, log: memoryLogger() });
  hubs.push(hub);
  return hub;
}

const withEcho = (enabled: boolean) => validateConfig({ servers: { echo: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")], enabled } } });
const stateOf = (hub: Hub) => hub.supervisor.snapshot("echo")?.state;

describe("Hub.setServerEnabled", () => {
  it("starts a cached auto server even when a reload already enabled it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "mcphub-enable-"));
    dirs.push(dataDir);
    // A first run fills the catalogue cache.
    const first = hubOf(withEcho(true), dataDir);
    first.start();
    await until(() => existsSync(join(dataDir, "catalog", "echo.json")), "the catalogue cache");
    await first.close();
    hubs.splice(hubs.indexOf(first), 1);

    const hub = hubOf(withEcho(true), dataDir);
    hub.start();
    expect(stateOf(hub)).toBe("idle"); // cached, starts on first use
    await hub.setServerEnabled("echo", false);
    expect(stateOf(hub)).toBe("disabled");
    // The page wrote enabled: true and the config watcher applied it first...
    hub.applyConfig(withEcho(true));
    expect(stateOf(hub)).toBe("idle");
    // ...then the page's own action runs: the operator asked for it running.
    await hub.setServerEnabled("echo", true);
    await until(() => stateOf(hub) === "ready", "echo ready");
  });
});
