// Many agents, one daemon versus one gateway each, side by side in one run.
//   npx tsx bench/agents.ts [--agents 8] [--calls 10000] [--profile DIR]
// N agents make CALLS echo calls in all (CALLS/N each, sequentially, all agents at once) through
// mcphub_call_tool: (a) as N sessions of the shared HTTP daemon (`mcphub up`, one bearer token per
// agent, one echo downstream for everyone), (b) as N stdio gateways (`mcphub mcp serve --agent`,
// each with its own echo downstream). Reports calls/s, p50/p99 latency and the resident memory of
// the gateway processes and their downstream children, which is what sharing one set saves.
// --profile DIR writes a V8 CPU profile of the daemon there (open it in Chrome DevTools).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import YAML from "yaml";
import { descendants, rssTree } from "./proc.js";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "bin/mcphub.js");
const ECHO = join(ROOT, "test/fixtures/echo.mjs");

const argv = process.argv.slice(2);
const flag = (name: string, dflt: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const AGENTS = flag("agents", 8);
const CALLS = flag("calls", 10_000);
const PER_AGENT = Math.ceil(CALLS / AGENTS);
const WARMUP = 50;
const profileIdx = argv.indexOf("--profile");
const PROFILE_DIR = profileIdx >= 0 ? resolve(argv[profileIdx + 1] ?? ".") : undefined;

const home = mkdtempSync(join(tmpdir(), "mcphub-bench-agents-"));
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  HOME: home,
  MCPHUB_DATA_DIR: join(home, "data"),
  MCPHUB_KEYCHAIN: "off",
};
const agentNames = Array.from({ length: AGENTS }, (_, i) => `agent${i + 1}`);

// Every process this benchmark starts, so that an error or Ctrl-C still ends them all.
const started = new Set<number>();
function killAll(signal: NodeJS.Signals): void {
  for (const pid of started) {
    for (const p of [...descendants(pid), pid]) {
      try {
        process.kill(p, signal);
      } catch {
        // already gone
      }
    }
  }
}
process.on("exit", () => killAll("SIGKILL"));
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    killAll("SIGKILL");
    rmSync(home, { recursive: true, force: true });
    process.exit(130);
  });
}

function writeConfig(): string {
  const p = join(home, "mcphub.yaml");
  const cfg = {
    expose: "lazy",
    servers: { echo: { command: process.execPath, args: [ECHO] } },
    agents: Object.fromEntries(agentNames.map((a) => [a, { servers: ["echo"] }])),
  };
  writeFileSync(p, YAML.stringify(cfg));
  return p;
}

type CallResult = { isError?: boolean; structuredContent?: { error?: string }; content?: unknown };
const callEcho = (client: Client, message: string) =>
  client.callTool({ name: "mcphub_call_tool", arguments: { tool: "echo__echo", arguments: { message } } }) as Promise<CallResult>;

async function waitUntilCallable(client: Client): Promise<void> {
  for (let i = 0; i < 800; i++) {
    const r = await callEcho(client, "ready?");
    if (!r.isError && !r.structuredContent?.error) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error("echo__echo never became callable");
}

interface Run {
  label: string;
  rate: number;
  p50: number;
  p99: number;
  readyMs: number;
  rss: { bytes: number; processes: number };
  errors: number;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** Warm-up, then every agent makes its calls in sequence, all agents at the same time. */
async function drive(label: string, clients: Client[], gatewayPids: number[], t0: number): Promise<Run> {
  await Promise.all(clients.map(waitUntilCallable));
  const readyMs = performance.now() - t0;
  await Promise.all(clients.map(async (c) => {
    for (let i = 0; i < WARMUP; i++) await callEcho(c, `warm ${i}`);
  }));
  const lat: number[] = [];
  let errors = 0;
  const start = performance.now();
  await Promise.all(
    clients.map(async (c, a) => {
      for (let i = 0; i < PER_AGENT; i++) {
        const message = `agent${a + 1} call ${i}`;
        const s = performance.now();
        const r = await callEcho(c, message);
        lat.push(performance.now() - s);
        // A wrong or failed answer is counted, not silently timed.
        if (r.isError || r.structuredContent?.error || !JSON.stringify(r.content).includes(message)) errors++;
      }
    }),
  );
  const total = performance.now() - start;
  const rss = rssTree(gatewayPids);
  lat.sort((x, y) => x - y);
  return { label, rate: (lat.length / total) * 1000, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), readyMs, rss, errors };
}

async function viaDaemon(cfg: string): Promise<Run> {
  const tokens = new Map<string, string>();
  for (const a of agentNames) {
    const out = execFileSync(process.execPath, [BIN, "--config", cfg, "token", "create", a, "--json"], { env, encoding: "utf8" });
    tokens.set(a, (JSON.parse(out) as { token: string }).token);
  }
  const t0 = performance.now();
  const profile = PROFILE_DIR ? ["--cpu-prof", "--cpu-prof-dir", PROFILE_DIR] : [];
  const daemon: ChildProcess = spawn(process.execPath, [...profile, BIN, "--config", cfg, "up", "--listen", "127.0.0.1:0"], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  if (daemon.pid === undefined) throw new Error("could not start the daemon");
  const pid = daemon.pid;
  started.add(pid);
  const exited = new Promise<void>((res) => daemon.once("exit", () => res()));
  const clients: Client[] = [];
  try {
    const url = await new Promise<string>((res, rej) => {
      let buf = "";
      daemon.stderr?.setEncoding("utf8");
      daemon.stderr?.on("data", (d: string) => {
        buf += d;
        const m = /mcphub listening on (http:\/\/\S+\/mcp)/.exec(buf);
        if (m?.[1]) res(m[1]);
      });
      daemon.once("exit", (code) => rej(new Error(`daemon exited (${code}) before listening: ${buf.trim()}`)));
    });
    for (const a of agentNames) {
      const client = new Client({ name: `bench-${a}`, version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${tokens.get(a)}` } } }),
      );
      clients.push(client);
    }
    return await drive("(a) HTTP daemon, 1 process", clients, [pid], t0);
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    daemon.kill("SIGTERM");
    await Promise.race([exited, new Promise((res) => setTimeout(res, 5000))]);
    killAll("SIGKILL");
    started.delete(pid);
  }
}

async function viaStdio(cfg: string): Promise<Run> {
  const t0 = performance.now();
  const clients: Client[] = [];
  const pids: number[] = [];
  try {
    await Promise.all(
      agentNames.map(async (a) => {
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [BIN, "--config", cfg, "mcp", "serve", "--agent", a],
          env,
          stderr: "ignore",
        });
        const client = new Client({ name: `bench-${a}`, version: "1.0.0" });
        clients.push(client);
        await client.connect(transport);
        if (transport.pid !== null) {
          pids.push(transport.pid);
          started.add(transport.pid);
        }
      }),
    );
    return await drive(`(b) ${AGENTS} stdio gateways`, clients, pids, t0);
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    killAll("SIGKILL");
    for (const p of pids) started.delete(p);
  }
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}
const mib = (b: number) => `${(b / 1024 ** 2).toFixed(0)} MiB`;

async function main() {
  console.log(
    `${AGENTS} agents, ${PER_AGENT * AGENTS} mcphub_call_tool echo calls in all (${PER_AGENT} each, sequential per agent, all at once), node ${process.version}, ${new Date().toISOString()}`,
  );
  const cfg = writeConfig();
  const runs = [await viaDaemon(cfg), await viaStdio(cfg)];
  console.log(
    `\n${pad("path", 28)}${pad("calls/s", 10)}${pad("p50 ms", 10)}${pad("p99 ms", 10)}${pad("ready ms", 10)}${pad("errors", 8)}RSS (gateways + downstreams)`,
  );
  for (const r of runs) {
    console.log(
      `${pad(r.label, 28)}${pad(r.rate.toFixed(0), 10)}${pad(r.p50.toFixed(2), 10)}${pad(r.p99.toFixed(2), 10)}${pad(r.readyMs.toFixed(0), 10)}${pad(String(r.errors), 8)}${mib(r.rss.bytes)} in ${r.rss.processes} processes`,
    );
  }
  const [d, s] = runs as [Run, Run];
  console.log(
    `\ndaemon / stdio: calls/s ${(d.rate / s.rate).toFixed(2)}x, p50 ${(d.p50 / s.p50).toFixed(2)}x, p99 ${(d.p99 / s.p99).toFixed(2)}x, RSS ${(d.rss.bytes / s.rss.bytes).toFixed(2)}x`,
  );
  console.log("(ready ms: from start to every agent's first successful call; RSS measured right after the timed calls)");
  if (d.errors + s.errors > 0) process.exitCode = 1;
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    killAll("SIGKILL");
    rmSync(home, { recursive: true, force: true });
  });
