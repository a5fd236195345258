// The status page shows each stdio server's sandbox (docs/status.md): the operator sees what the
// running process may write and read (roots resolved, protected paths covered), an agent's view
// only the network and counts, and an unsandboxed server says so. Real daemon, real processes.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokens, http, startDaemon, type Daemon } from "../helpers/daemon.js";
import { FIXTURES, runMcphub, tempHome, type TempHome } from "../helpers/gateway.js";
import { sandboxUnavailable } from "../helpers/sandbox.js";

const unavailable = await sandboxUnavailable();

interface Sandboxed {
  name: string;
  state: string;
  sandbox?: { mode: string; live?: boolean; network?: string; write?: string[] | number; read?: string[] | number; backend?: string };
}

describe.skipIf(unavailable !== undefined)("the status page shows each server's sandbox", () => {
  let home: TempHome;
  let daemon: Daemon;
  let token = "";
  let cfg = "";

  beforeAll(async () => {
    home = tempHome("mcphub-sandbox-status-");
    mkdirSync(join(home.dir, "out"));
    const probe = { command: process.execPath, args: [join(FIXTURES, "sandbox-probe.mjs")], start: "eager" };
    cfg = home.writeConfig({
      servers: {
        boxed: { ...probe, sandbox: { network: "loopback", write: ["~/out"] } },
        open: { ...probe, sandbox: "off" },
        remote: { url: "http://127.0.0.1:9/mcp", enabled: false },
      },
      agents: { viewer: { type: "claude" } },
    });
    token = (await createTokens(home, cfg, ["viewer"])).viewer as string;
    daemon = await startDaemon(home, cfg);
  });

  afterAll(async () => {
    await daemon?.stop();
    home?.cleanup();
  });

  async function servers(headers: Record<string, string> = {}): Promise<Sandboxed[]> {
    for (let i = 0; i < 600; i++) {
      const a = await http(`${daemon.base}/api/status`, { headers });
      const list = a.status === 200 ? (a.json<{ servers: Sandboxed[] }>().servers) : [];
      if (list.find((s) => s.name === "boxed")?.sandbox?.live) return list;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("boxed never showed a live sandbox");
  }

  /** The operator's view: a page session from a one-time `mcphub open` link. */
  async function operatorCookie(): Promise<string> {
    const r = await runMcphub(home, ["--config", cfg, "open", "--listen", `127.0.0.1:${daemon.port}`, "--no-browser", "--json"]);
    const landed = await http((JSON.parse(r.stdout) as { url: string }).url, { headers: { accept: "text/html" } });
    return String(landed.headers["set-cookie"]).split(";")[0] as string;
  }

  it("the operator sees the live sandbox with its paths; off is said; remote servers have none", async () => {
    const list = await servers({ cookie: await operatorCookie() });
    const boxed = list.find((s) => s.name === "boxed");
    expect(boxed?.state).toBe("ready");
    expect(boxed?.sandbox).toMatchObject({ mode: "on", live: true, network: "loopback", write: [join(home.dir, "out").replace(home.dir, "~")], read: [] });
    expect(boxed?.sandbox?.backend).toMatch(/^bubblewrap \d/);
    expect(list.find((s) => s.name === "open")?.sandbox).toEqual({ mode: "off" });
    expect(list.find((s) => s.name === "remote")?.sandbox).toBeUndefined();
  });

  it("an agent's view has the network and counts, not the operator's paths", async () => {
    const list = await servers({ authorization: `Bearer ${token}` });
    expect(list.find((s) => s.name === "boxed")?.sandbox).toMatchObject({ mode: "on", network: "loopback", write: 1, read: 0 });
  });
});
