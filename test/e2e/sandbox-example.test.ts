// The README's quick start as written: `mcphub up` on mcphub.example.yaml itself (not a copy), whose
// three servers run sandboxed (issue 27, item 4). Each answers through the daemon; server-filesystem
// writes inside the example's folder and nowhere else; the status page shows the sandboxes the
// file asks for (files and memory without a network, everything with it).
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, tempHome, text, type TempHome } from "../helpers/gateway.js";
import { http, httpClient, startDaemon, type Daemon } from "../helpers/daemon.js";
import { sandboxUnavailable } from "../helpers/sandbox.js";

const unavailable = await sandboxUnavailable();
const EXAMPLE = join(ROOT, "mcphub.example.yaml");

interface Row {
  name: string;
  state: string;
  sandbox?: { mode: string; live?: boolean; network?: string; write?: string[] | number };
}

describe.skipIf(unavailable !== undefined)("the quick start: mcphub up on mcphub.example.yaml, sandboxed", () => {
  let home: TempHome;
  let daemon: Daemon;
  let client: Awaited<ReturnType<typeof httpClient>>;
  const inside = join(ROOT, `.sandbox-example-${process.pid}.tmp`);

  beforeAll(async () => {
    home = tempHome("mcphub-sandbox-example-");
    daemon = await startDaemon(home, EXAMPLE);
    client = await httpClient(daemon.url);
  });

  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
    rmSync(inside, { force: true });
    home?.cleanup();
  });

  const call = async (tool: string, args: Record<string, unknown>) => text(await client.caller.call("mcphub_call_tool", { tool, arguments: args }));

  it("every server answers from its sandbox; files writes in the example's folder and nowhere else", async () => {
    expect(await call("everything__echo", { message: "quick start" })).toContain("quick start");
    expect(await call("memory__create_entities", { entities: [{ name: "Quickstart", entityType: "test", observations: ["sandboxed"] }] })).toContain("Quickstart");
    expect(await call("memory__search_nodes", { query: "Quickstart" })).toContain("sandboxed");

    expect(await call("files__write_file", { path: inside, content: "inside" })).not.toMatch(/error|denied/i);
    expect(readFileSync(inside, "utf8")).toBe("inside");
    // Refused (server-filesystem's own allow-list answers first; the sandbox's refusal of a path
    // the server would allow is tested in sandbox-servers.test.ts), and nothing lands there.
    const outside = join(home.dir, "outside.txt");
    expect(await call("files__write_file", { path: outside, content: "x" })).toMatch(/denied|outside|not allowed|EROFS|ENOENT/i);
    expect(existsSync(outside)).toBe(false);
  });

  it("the status page shows the sandboxes the example asks for", async () => {
    let rows: Row[] = [];
    for (let i = 0; i < 600; i++) {
      const a = await http(`${daemon.base}/api/status`);
      rows = a.status === 200 ? a.json<{ servers: Row[] }>().servers : [];
      if (["files", "memory", "everything"].every((n) => rows.find((r) => r.name === n)?.sandbox?.live)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const box = (n: string) => rows.find((r) => r.name === n)?.sandbox;
    // (No agent tokens yet: a loopback client is served unscoped, and sees the paths.)
    expect(box("files")).toMatchObject({ mode: "on", live: true, network: "none", write: [ROOT] });
    expect(box("memory")).toMatchObject({ mode: "on", live: true, network: "none", write: [] });
    expect(box("everything")).toMatchObject({ mode: "on", live: true, network: "full", write: [] });
  });
});
