// No leaked processes: after SIGTERM, and separately after the gateway's stdin closes, no process
// the gateway started (children and grandchildren) is alive. Also: malformed configs are one
// precise line and a non-zero exit, never a stack trace.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alive, BIN, descendants, EVERYTHING, FIXTURES, tempHome, type TempHome } from "../helpers/gateway.js";

const node = process.execPath;

function initializeMessage(): string {
  return `${JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  })}\n`;
}

async function startRaw(home: TempHome, cfg: string): Promise<ChildProcess> {
  const child = spawn(node, [BIN, "--config", cfg, "mcp", "serve"], { env: home.env, stdio: ["pipe", "pipe", "pipe"] });
  child.stdin?.write(initializeMessage());
  // Wait for the initialize answer, then for the downstream tree to be up.
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`gateway exited early (${code})`)));
  });
  return child;
}

async function waitForDescendants(pid: number, atLeast: number): Promise<number[]> {
  for (let i = 0; i < 400; i++) {
    const d = descendants(pid);
    if (d.length >= atLeast) return d;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`expected at least ${atLeast} descendants of ${pid}`);
}

async function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

describe("process lifecycle", () => {
  let home: TempHome;
  let cfg: string;
  beforeAll(() => {
    home = tempHome();
    cfg = home.writeConfig({
      expose: "lazy",
      // Every run spawns the whole tree, whatever an earlier run cached.
      start: "eager",
      servers: {
        tree: { command: node, args: [join(FIXTURES, "spawns-grandchild.mjs")] },
        ev: { command: node, args: [EVERYTHING, "stdio"] },
      },
    });
  });
  afterAll(() => home?.cleanup());

  for (const how of ["SIGTERM", "stdin close"] as const) {
    it(`kills every child and grandchild on ${how}`, async () => {
      const gw = await startRaw(home, cfg);
      const pid = gw.pid as number;
      // Two servers, and the fixture's grandchild: at least three descendants.
      const tree = await waitForDescendants(pid, 3);
      if (how === "SIGTERM") gw.kill("SIGTERM");
      else gw.stdin?.end();
      await exited(gw);
      for (let i = 0; i < 100 && tree.some(alive); i++) await new Promise((r) => setTimeout(r, 25));
      expect(tree.filter(alive)).toEqual([]);
    });
  }
});

describe("malformed configs", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
  });
  afterAll(() => home?.cleanup());

  const cases: [string, string, RegExp][] = [
    ["unknown top-level key", "expose: lazy\nservres: {}\n", /servres.*did you mean "servers"/],
    ["unknown server key", "servers:\n  a:\n    comand: x\n", /servers\.a\.comand.*did you mean "command"/],
    ["both command and url", "servers:\n  a:\n    command: x\n    url: http://127.0.0.1:1/mcp\n", /servers\.a.*not both/],
    ["neither command nor url", "servers:\n  a:\n    description: nothing\n", /servers\.a.*command.*url/],
    ["bad duration", "connect_timeout: fast\n", /connect_timeout.*duration/],
    ["__ in a server name", "servers:\n  a__b:\n    command: x\n", /servers\.a__b.*"__"/],
    ["reserved name", "servers:\n  mcphub:\n    command: x\n", /servers\.mcphub.*reserved/],
    ["too many use_when", `servers:\n  a:\n    command: x\n    use_when: [${Array.from({ length: 9 }, (_, i) => `h${i}`).join(", ")}]\n`, /servers\.a\.use_when.*at most 8/],
    ["bad transport", "servers:\n  a:\n    url: http://127.0.0.1:1/mcp\n    transport: websocket\n", /servers\.a\.transport.*"http" or "sse"/],
    ["headers on a stdio server", "servers:\n  a:\n    command: x\n    headers: {X: y}\n", /servers\.a\.headers.*remote/],
    ["tiny response budget", "response_budget: 100B\n", /response_budget.*512/],
    ["pin of an unknown server", "pin: [ghost]\nservers:\n  a:\n    command: x\n", /pin.*unknown server "ghost"/],
    ["bad expose", "expose: some\n", /expose.*"all" or "lazy"/],
    ["YAML syntax error", "servers:\n  a: [unclosed\n", /yaml:\d+:\d+/],
  ];

  for (const [name, yaml, pattern] of cases) {
    it(`rejects ${name} with one precise message`, async () => {
      const cfg = home.writeConfig(yaml, `bad-${name.replace(/\W+/g, "-")}.yaml`);
      const child = spawn(node, [BIN, "--config", cfg, "mcp", "serve"], { env: home.env, stdio: ["pipe", "pipe", "pipe"] });
      let err = "";
      child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
      const code = await exited(child);
      expect(code).not.toBe(0);
      expect(err).toMatch(pattern);
      expect(err).not.toMatch(/\n\s+at /); // no stack trace
    });
  }
});
