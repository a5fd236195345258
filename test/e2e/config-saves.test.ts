// A running daemon under load while its config file is saved the way editors save it: truncate,
// pause, write (200 ms, and longer than the watcher's debounce and settle periods together), and a
// file cut at a line boundary for 200 ms. 16 clients (two agents, each with its own token) keep
// calling a downstream tool and opening new sessions meanwhile: no call may be interrupted, no
// session refused, no server restarted. A truncated file that stays truncated is held (one warning
// line) until it is confirmed; SIGHUP confirms it.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokens } from "../helpers/daemon.js";
import { doc, FIXTURES, tempHome, type TempHome } from "../helpers/gateway.js";
import { httpClient, startDaemon, until, type Daemon, type HttpClient } from "../helpers/mcp-daemon.js";

const node = process.execPath;
const CLIENTS = 16;

function yaml(home: string): string {
  const server = (name: string, fixture: string) => [
    `  ${name}:`,
    `    command: ${JSON.stringify(node)}`,
    `    args: [${JSON.stringify(join(FIXTURES, fixture))}]`,
    `    env: { START_LOG: ${JSON.stringify(join(home, `${name}.log`))} }`,
    "    start: eager",
  ];
  return [
    "expose: lazy",
    "agents:",
    "  alpha:",
    "    type: claude",
    "  beta:",
    "    type: codex",
    "servers:",
    ...server("slow", "slow-tools.mjs"),
    ...server("life", "lifecycle.mjs"),
    "",
  ].join("\n");
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Tally {
  calls: number;
  sessions: number;
  interrupted: string[];
  refused: string[];
}

/** One client: calls the slow tool in a loop and opens a fresh session every few calls. */
async function client(url: string, token: string, tally: Tally, stop: { now: boolean }): Promise<void> {
  let c: HttpClient | undefined;
  let n = 0;
  while (!stop.now) {
    if (!c) {
      try {
        c = await httpClient(url, token);
        tally.sessions++;
      } catch (err) {
        tally.refused.push(String(err));
        await pause(50);
        continue;
      }
    }
    try {
      const r = await c.call("mcphub_call_tool", { tool: n % 2 ? "slow__silent" : "life__echo", arguments: n % 2 ? { ms: 40 } : { message: "m" } });
      const text = JSON.stringify(r.content);
      if (r.isError || !/slept 40|echo: m/.test(text)) tally.interrupted.push(text.slice(0, 300));
      else tally.calls++;
    } catch (err) {
      // A refused request (403/404) surfaces as a thrown error from the SDK client.
      tally.refused.push(String(err).slice(0, 300));
    }
    n++;
    if (n % 8 === 0) {
      await c.close().catch(() => undefined);
      c = undefined;
    }
  }
  await c?.close().catch(() => undefined);
}

function starts(log: string): string[] {
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("start "));
}

describe("config saves under load", () => {
  let home: TempHome;
  let cfg: string;
  let daemon: Daemon;
  let tokens: Record<string, string>;

  beforeAll(async () => {
    home = tempHome();
    cfg = join(home.dir, "mcphub.yaml");
    writeFileSync(cfg, yaml(home.dir));
    tokens = await createTokens(home, cfg, ["alpha", "beta"]);
    daemon = await startDaemon(home, cfg);
    await until(() => /slow: ready/.test(daemon.stderr()) && /life: ready/.test(daemon.stderr()), "both servers ready");
  });
  afterAll(async () => {
    await daemon?.stop();
    home?.cleanup();
  });

  it("truncate-pause-write and a cut file interrupt no call and refuse no session; a lasting truncation is held", async () => {
    const full = readFileSync(cfg, "utf8");
    const lifeStarts = starts(join(home.dir, "life.log"));
    const connects = (daemon.stderr().match(/: connecting/g) ?? []).length;
    const tally: Tally = { calls: 0, sessions: 0, interrupted: [], refused: [] };
    const stop = { now: false };
    const agents = ["alpha", "beta"];
    const running = Array.from({ length: CLIENTS }, (_, i) => client(daemon.url, tokens[agents[i % 2] as string] as string, tally, stop));
    try {
      await until(() => tally.calls >= CLIENTS * 2, "the clients to be calling");
      // 1. Truncate, 200 ms, write back (the issue's save).
      writeFileSync(cfg, "");
      await pause(200);
      writeFileSync(cfg, full);
      await pause(1500);
      // 2. Cut at a line boundary (the second server and the agents' tail gone), 200 ms, write back.
      const lines = full.split("\n");
      writeFileSync(cfg, `${lines.slice(0, lines.findIndex((l) => l.startsWith("  life:"))).join("\n")}\n`);
      await pause(200);
      writeFileSync(cfg, full);
      await pause(1500);
      // 3. Truncated for longer than debounce + settle: held, announced once, not applied.
      writeFileSync(cfg, "");
      await pause(3000);
      writeFileSync(cfg, full);
      await pause(1500);
      const callsBefore = tally.calls;
      await until(() => tally.calls >= callsBefore + CLIENTS, "calls after the edits");
    } finally {
      stop.now = true;
      await Promise.all(running);
    }
    expect({ interrupted: tally.interrupted.length, refused: tally.refused.length }).toEqual({ interrupted: 0, refused: 0 });
    expect(daemon.stderr()).toMatch(/config change held: .*mcphub\.yaml is empty; not applied/);
    expect(tally.sessions).toBeGreaterThan(CLIENTS);
    // Nothing was removed, restarted or re-added.
    expect(daemon.stderr()).not.toMatch(/config reloaded: .*(removed|added|restarted)/);
    expect(daemon.stderr().match(/config change held/g)).toHaveLength(1);
    expect((daemon.stderr().match(/: connecting/g) ?? []).length).toBe(connects);
    expect(starts(join(home.dir, "life.log"))).toEqual(lifeStarts);
  });

  it("a held edit that removes every server is applied by SIGHUP", async () => {
    const full = readFileSync(cfg, "utf8");
    const noServers = `${full.slice(0, full.indexOf("servers:"))}servers: {}\n`;
    writeFileSync(cfg, noServers);
    await until(() => /config change held: .*would remove every server \(slow, life\)/.test(daemon.stderr()), "the held line");
    const c = await httpClient(daemon.url, tokens.alpha as string);
    try {
      const listed = doc(await c.call("mcphub_list_servers")) as { servers: { name: string }[] };
      expect(listed.servers.map((s) => s.name).sort()).toEqual(["life", "slow"]);
      daemon.child.kill("SIGHUP");
      await until(() => /config reloaded \(SIGHUP\): removed (slow, life|life, slow)/.test(daemon.stderr()), "the SIGHUP reload");
    } finally {
      await c.close();
      writeFileSync(cfg, full);
    }
  });
});
