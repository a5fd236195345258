// The reference servers inside the sandbox, started the way the example config starts them
// (npx from the repository, offline, with a read-only npm cache), behind a real gateway:
// server-filesystem writes only inside its writable folder, server-memory and server-everything
// answer their calls, and server-filesystem without directories gets the client's roots as its
// sandbox (restarted with the new ones when they change).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListRootsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, FIXTURES, ROOT, startGateway, tempHome, text, until, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";
import { startDaemon, type Daemon } from "../helpers/daemon.js";
import { attempt, sandboxUnavailable } from "../helpers/sandbox.js";

const unavailable = await sandboxUnavailable();

const npx = (pkg: string, ...args: string[]) => ({ command: "npx", args: ["-y", pkg, ...args], cwd: ROOT });

describe.skipIf(unavailable !== undefined)("reference servers in the sandbox", () => {
  let home: TempHome;
  let gw: GatewayClient;
  let writable: string;
  let readable: string;
  let memoryDir: string;

  beforeAll(async () => {
    home = tempHome("mcphub-sandbox-servers-");
    writable = join(home.dir, "writable");
    readable = join(home.dir, "readable");
    memoryDir = join(home.dir, "memory");
    for (const d of [writable, readable, memoryDir]) mkdirSync(d);
    const config = home.writeConfig({
      expose: "all",
      servers: {
        files: { ...npx("@modelcontextprotocol/server-filesystem", writable, readable), sandbox: { network: "none", write: [writable], read: [readable] } },
        openfiles: { ...npx("@modelcontextprotocol/server-filesystem", writable, readable), sandbox: "off" },
        memory: { ...npx("@modelcontextprotocol/server-memory"), env: { MEMORY_FILE_PATH: join(memoryDir, "graph.jsonl") }, sandbox: { network: "none", write: [memoryDir] } },
        everything: { ...npx("@modelcontextprotocol/server-everything", "stdio"), sandbox: { network: "none" } },
      },
    });
    gw = await startGateway(home, config);
    await waitReady(gw, ["files", "openfiles", "memory", "everything"]);
  });

  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  it("server-filesystem writes inside its writable folder and nowhere else", async () => {
    const ok = await gw.call("files__write_file", { path: join(writable, "a.txt"), content: "inside" });
    expect(ok.isError, text(ok)).toBeFalsy();
    expect(readFileSync(join(writable, "a.txt"), "utf8")).toBe("inside");
    // The server itself allows both folders; the sandbox shows the second one read-only.
    const refused = await gw.call("files__write_file", { path: join(readable, "b.txt"), content: "outside" });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/EROFS|read-only file system/i);
    expect(existsSync(join(readable, "b.txt"))).toBe(false);
    const read = await gw.call("files__list_directory", { path: readable });
    expect(read.isError, text(read)).toBeFalsy();
    // The same server unsandboxed writes there: the refusal above is the sandbox's.
    const open = await gw.call("openfiles__write_file", { path: join(readable, "b.txt"), content: "outside" });
    expect(open.isError, text(open)).toBeFalsy();
    expect(readFileSync(join(readable, "b.txt"), "utf8")).toBe("outside");
    rmSync(join(readable, "b.txt"));
  });

  it("server-memory, started by npx inside the sandbox, answers and keeps its graph where it may write", async () => {
    const created = await gw.call("memory__create_entities", { entities: [{ name: "Zephyr", entityType: "project", observations: ["ships in May"] }] });
    expect(created.isError, text(created)).toBeFalsy();
    const found = await gw.call("memory__search_nodes", { query: "Zephyr" });
    expect(text(found)).toContain("ships in May");
    expect(readFileSync(join(memoryDir, "graph.jsonl"), "utf8")).toContain("Zephyr");
  });

  it("server-everything, started by npx inside the sandbox, answers", async () => {
    const r: CallToolResult = await gw.call("everything__echo", { message: "from the sandbox" });
    expect(text(r)).toContain("from the sandbox");
    const sum = await gw.call("everything__get-sum", { a: 2, b: 3 });
    expect(text(sum)).toContain("5");
  });
});

describe.skipIf(unavailable !== undefined)("roots as the sandbox's allow-list", () => {
  let home: TempHome;
  let client: Client;
  let transport: StdioClientTransport;
  let a: string;
  let b: string;
  let roots: string[] = [];

  beforeAll(async () => {
    home = tempHome("mcphub-sandbox-roots-");
    a = mkdtempSync(join(home.dir, "project-a-"));
    b = mkdtempSync(join(home.dir, "project-b-"));
    roots = [a];
    writeFileSync(join(a, "in-a.txt"), "A");
    writeFileSync(join(b, "in-b.txt"), "B");
    const config = home.writeConfig({
      expose: "all",
      servers: {
        fs: { ...npx("@modelcontextprotocol/server-filesystem"), sandbox: { network: "none", write: ["roots"] }, start: "eager" },
        // The probe fixture does not ask for roots itself: what it can read is the sandbox's doing.
        probe: { command: process.execPath, args: [join(FIXTURES, "sandbox-probe.mjs")], sandbox: { read: ["roots"] } },
      },
    });
    transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "--config", config, "mcp", "serve"], env: home.env as Record<string, string>, stderr: "pipe" });
    client = new Client({ name: "roots-client", version: "1" }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((r) => ({ uri: pathToFileURL(r).href, name: r })) }));
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
    home?.cleanup();
  });

  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;

  it("the client's roots are what the server may write; a change of roots restarts it with the new ones", async () => {
    // server-filesystem asks for the roots itself once initialized; a call may come first.
    await until(async () => text(await call("fs__list_allowed_directories", {})).includes(a), "server-filesystem to apply its roots");
    const first = await call("fs__write_file", { path: join(a, "x.txt"), content: "a" });
    expect(first.isError, text(first)).toBeFalsy();
    expect(readFileSync(join(a, "x.txt"), "utf8")).toBe("a");
    // b is not a root: the server does not allow it, and its sandbox does not even show it.
    const notRoot = await call("fs__write_file", { path: join(b, "x.txt"), content: "b" });
    expect(notRoot.isError).toBe(true);
    expect(existsSync(join(b, "x.txt"))).toBe(false);
    expect(attempt(await call("probe__read_file", { path: join(a, "in-a.txt") }))).toEqual({ ok: true, detail: "A" });
    expect(attempt(await call("probe__read_file", { path: join(b, "in-b.txt") }))).toEqual({ ok: false, detail: "ENOENT" });

    roots = [b];
    await client.sendRootsListChanged();
    await until(async () => {
      const r = await call("fs__list_allowed_directories", {});
      return text(r).includes(b) && !text(r).includes(a);
    }, "the restarted server to see the new roots");
    const second = await call("fs__write_file", { path: join(b, "y.txt"), content: "b" });
    expect(second.isError, text(second)).toBeFalsy();
    expect(readFileSync(join(b, "y.txt"), "utf8")).toBe("b");
    const old = await call("fs__write_file", { path: join(a, "y.txt"), content: "a" });
    expect(old.isError).toBe(true);
    expect(existsSync(join(a, "y.txt"))).toBe(false);
    await until(async () => attempt(await call("probe__read_file", { path: join(b, "in-b.txt") })).ok, "the probe to be restarted with the new roots");
    expect(attempt(await call("probe__read_file", { path: join(a, "in-a.txt") }))).toEqual({ ok: false, detail: "ENOENT" });
  });
});

describe.skipIf(unavailable !== undefined)("roots in the daemon", () => {
  let home: TempHome;
  let daemon: Daemon;
  let mine: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    home = tempHome("mcphub-sandbox-daemon-roots-");
    mine = mkdtempSync(join(home.dir, "session-root-"));
    writeFileSync(join(mine, "mine.txt"), "MINE");
    const probe = { command: process.execPath, args: [join(FIXTURES, "sandbox-probe.mjs")] };
    const cfg = home.writeConfig({
      expose: "all",
      servers: {
        persession: { ...probe, connection: "per-session", sandbox: { read: ["roots"] } },
        shared: { ...probe, sandbox: { read: ["roots"] } },
      },
    });
    daemon = await startDaemon(home, cfg);
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await daemon?.stop();
    home?.cleanup();
  });

  async function session(roots: string[]): Promise<Client> {
    const client = new Client({ name: "roots-http", version: "1" }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((r) => ({ uri: pathToFileURL(r).href })) }));
    await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
    clients.push(client);
    return client;
  }

  it("a per-session connection's sandbox shows that session's roots; a shared one is refused, saying why", async () => {
    const a = await session([mine]);
    const b = await session([]);
    const read = async (c: Client, server: string) => attempt((await c.callTool({ name: `${server}__read_file`, arguments: { path: join(mine, "mine.txt") } })) as CallToolResult);
    await until(async () => (await a.listTools()).tools.some((t) => t.name === "persession__read_file"), "the per-session server's tools");
    expect(await read(a, "persession")).toEqual({ ok: true, detail: "MINE" });
    // The other session's process was started with that session's (empty) roots.
    expect(await read(b, "persession")).toEqual({ ok: false, detail: "ENOENT" });
    // The shared connection (which also lists the tools) cannot start: the server fails, saying why.
    let error = "";
    await until(async () => {
      const listed = JSON.parse(text((await a.callTool({ name: "mcphub_list_servers", arguments: {} })) as CallToolResult)) as { servers: { name: string; state: string; error?: string }[] };
      error = listed.servers.find((s) => s.name === "shared" && s.state === "failed")?.error ?? "";
      return error !== "";
    }, "the shared server to fail");
    expect(error).toBe(
      'sandbox: sandbox.read lists roots, but the mcphub daemon shares this server\'s connection between sessions, so no one session\'s roots can apply; in the daemon give the server connection: per-session (each session\'s process gets that session\'s roots), or pin its roots with roots: [...], or list paths instead of roots, or set sandbox: off for this server (it then runs with your full rights)',
    );
  });
});
