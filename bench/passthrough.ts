// What a forwarded server→client request costs, side by side in one run.
//   npx tsx bench/passthrough.ts [--calls 300] [--sessions 10]
// One SDK client calls the conformance fixture's `test_simple_text` (no round trip back) and
// `test_elicitation` (the tool elicits, the client answers at once) CALLS times each, sequentially:
// (a) directly over stdio, (b) through the stdio gateway, (c) through the daemon on a shared
// connection, (d) through the daemon with `connection: per-session`. The difference between the
// two tools is the price of one elicitation round trip on that path. Then SESSIONS fresh daemon
// sessions each make one call: with per-session connections the first call also starts the
// session's own downstream process, which is what that setting costs.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import YAML from "yaml";
import { writeFileSync } from "node:fs";
import { BIN, ROOT, isolatedEnv, numberFlag } from "./setup.js";

const FIXTURE = join(ROOT, "test/fixtures/conformance-server.mjs");
const argv = process.argv.slice(2);
const CALLS = numberFlag("calls", 300);
const SESSIONS = numberFlag("sessions", 10);
const WARMUP = 20;

const home = mkdtempSync(join(tmpdir(), "mcphub-bench-passthrough-"));
const env = isolatedEnv(home);
const daemons: ChildProcess[] = [];

function config(name: string, server: Record<string, unknown>): string {
  const path = join(home, `${name}.yaml`);
  writeFileSync(path, YAML.stringify({ expose: "all", servers: { conf: { command: process.execPath, args: [FIXTURE], start: "eager", ...server } } }));
  return path;
}

async function client(transport: Transport): Promise<Client> {
  const c = new Client({ name: "bench", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
  c.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { username: "bench", email: "bench@example.com" } }));
  await c.connect(transport);
  return c;
}

async function startDaemon(cfg: string): Promise<string> {
  const child = spawn(process.execPath, [BIN, "--config", cfg, "up", "--listen", "127.0.0.1:0"], { env, stdio: ["ignore", "ignore", "pipe"] });
  daemons.push(child);
  let err = "";
  return new Promise((res, rej) => {
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(err);
      if (m?.[1] && /conf: ready/.test(err)) res(m[1]);
    });
    child.once("exit", (code) => rej(new Error(`daemon exited (${code}): ${err}`)));
  });
}

async function timeCalls(c: Client, tool: string, args: Record<string, unknown>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await c.callTool({ name: tool, arguments: args });
  const out: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    const r = await c.callTool({ name: tool, arguments: args });
    out.push(performance.now() - t);
    if (r.isError) throw new Error(`${tool} failed: ${JSON.stringify(r.content)}`);
  }
  return out;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (x: number) => x.toFixed(2);

interface Row {
  path: string;
  simple: number[];
  elicit: number[];
}

async function measure(path: string, c: Client, prefix: string): Promise<Row> {
  const simple = await timeCalls(c, `${prefix}test_simple_text`, {});
  const elicit = await timeCalls(c, `${prefix}test_elicitation`, { message: "bench" });
  await c.close();
  return { path, simple, elicit };
}

async function firstCalls(url: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const c = await client(transport);
    const t = performance.now();
    await c.callTool({ name: "conf__test_simple_text", arguments: {} });
    out.push(performance.now() - t);
    await transport.terminateSession();
    await c.close();
  }
  return out;
}

try {
  const rows: Row[] = [];
  rows.push(await measure("direct (stdio, no gateway)", await client(new StdioClientTransport({ command: process.execPath, args: [FIXTURE], env })), ""));
  rows.push(
    await measure("stdio gateway", await client(new StdioClientTransport({ command: process.execPath, args: [BIN, "--config", config("stdio", {}), "mcp", "serve"], env })), "conf__"),
  );
  const shared = await startDaemon(config("shared", {}));
  rows.push(await measure("daemon, shared connection", await client(new StreamableHTTPClientTransport(new URL(shared))), "conf__"));
  const perSession = await startDaemon(config("per-session", { connection: "per-session" }));
  rows.push(await measure("daemon, per-session connection", await client(new StreamableHTTPClientTransport(new URL(perSession))), "conf__"));

  console.log(`\n${CALLS} sequential calls per tool (after ${WARMUP} warm-up), latency in ms\n`);
  console.log("| path | simple p50 | simple p95 | elicit p50 | elicit p95 | elicitation round trip (p50 diff) |");
  console.log("|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(`| ${r.path} | ${ms(pct(r.simple, 50))} | ${ms(pct(r.simple, 95))} | ${ms(pct(r.elicit, 50))} | ${ms(pct(r.elicit, 95))} | ${ms(pct(r.elicit, 50) - pct(r.simple, 50))} |`);
  }

  const firstShared = await firstCalls(shared);
  const firstPerSession = await firstCalls(perSession);
  console.log(`\nfirst call of a fresh daemon session (${SESSIONS} sessions each), latency in ms\n`);
  console.log("| connection | p50 | max |");
  console.log("|---|---|---|");
  console.log(`| shared | ${ms(pct(firstShared, 50))} | ${ms(Math.max(...firstShared))} |`);
  console.log(`| per-session (starts the session's own process) | ${ms(pct(firstPerSession, 50))} | ${ms(Math.max(...firstPerSession))} |`);
} finally {
  for (const d of daemons) d.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 500));
  rmSync(home, { recursive: true, force: true });
}
