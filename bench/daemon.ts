// The daemon's cost per call against its peers, side by side in one run.
//   npx tsx bench/daemon.ts [--calls 2000] [--rounds 3] [--concurrency 16] [--warmup 4000]
//                           [--only peer,lean,...] [--profile DIR] [--agents-rounds 2] [--no-agents]
// One `echo` tool (test/fixtures/echo.mjs over stdio) behind each server, called with the SDK
// client from this process, sequentially and with CONCURRENCY calls in flight:
//   peer     mcp-hub@4.2.1 over SSE (installed by this script with npm into a temp folder)
//   fwd      a bare SDK streamable-HTTP forwarder (bench/forwarder-http.mjs)
//   raw      a raw JSON server with no downstream and no MCP library: the client's ceiling
//   sdk      `mcphub up` with `http_transport: sdk`
//   lean     `mcphub up` with the lean transport (the default)
// Every server first gets WARMUP calls (its JIT settles; a daemon runs warm). Each round then
// drives every server in turn, the order reversed every other round, and reports
// calls/s, p50/p99 and the server process's own CPU per call (utime+stime from /proc/PID/stat,
// the server alone, not its downstream or this client). Medians over rounds, with the range.
// Then 8 agents through one daemon vs 8 stdio gateways (bench/agents.ts, rounds alternating).
// --profile DIR writes V8 CPU profiles of both mcphub daemons there.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { setMaxListeners } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import YAML from "yaml";
import { BIN, ROOT, isolatedEnv, numberFlag, stringFlag } from "./setup.js";

const ECHO = join(ROOT, "test/fixtures/echo.mjs");
const PEER = "mcp-hub@4.2.1";

const argv = process.argv.slice(2);
const CALLS = numberFlag("calls", 2000);
const ROUNDS = numberFlag("rounds", 3);
const CONCURRENCY = numberFlag("concurrency", 16);
const WARMUP = numberFlag("warmup", 4000);
const ONLY = stringFlag("only")?.split(",");
const PROFILE_DIR = stringFlag("profile") ? resolve(stringFlag("profile") as string) : undefined;
const AGENT_ROUNDS = numberFlag("agents-rounds", 2);
const CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

// The SDK's HTTP client hands one AbortSignal to every fetch, and undici lets go of its listener
// only when the request is collected: thousands of calls trip the leak warning. Not a leak here.
setMaxListeners(0);

const home = mkdtempSync(join(tmpdir(), "mcphub-bench-daemon-"));
const env = isolatedEnv(home);
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    for (const c of children) c.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true });
    process.exit(130);
  });
}

interface Target {
  key: string;
  label: string;
  pid: number;
  client: Client;
  tool: string;
}

/** Starts a server and resolves with its URL once `ready` matches its output. */
function launch(args: string[], ready: RegExp, urlOf: (out: string) => string | undefined, extraEnv: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let out = "";
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${args.join(" ")} not ready after 60 s:\n${out}`)), 60_000);
    const take = (d: Buffer) => {
      out += d.toString();
      const url = urlOf(out);
      if (url && ready.test(out)) {
        clearTimeout(timer);
        res({ child, url });
      }
    };
    child.stdout?.on("data", take);
    child.stderr?.on("data", take);
    child.once("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`${args.join(" ")} exited (${code}):\n${out}`));
    });
  });
}

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

async function connectHttp(url: string): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function peer(): Promise<Target> {
  const dir = join(home, "peer");
  mkdirSync(dir, { recursive: true });
  execFileSync("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", "--loglevel", "error", PEER], { stdio: "inherit" });
  const cfg = join(dir, "servers.json");
  writeFileSync(cfg, JSON.stringify({ mcpServers: { bench: { command: process.execPath, args: [ECHO] } } }));
  const port = await freePort();
  const { child } = await launch(
    [join(dir, "node_modules/mcp-hub/dist/cli.js"), "--port", String(port), "--config", cfg],
    /MCP_HUB_STARTED|started|listening|ready/i,
    () => `http://127.0.0.1:${port}/mcp`,
  );
  // mcp-hub says it started before its servers connect: wait until the tool is listed.
  let client: Client | undefined;
  for (let i = 0; i < 300; i++) {
    try {
      client = new Client({ name: "bench", version: "1.0.0" });
      await client.connect(new SSEClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      if ((await client.listTools()).tools.some((t) => t.name === "bench__echo")) break;
      await client.close();
    } catch {
      // not up yet
    }
    client = undefined;
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!client) throw new Error("mcp-hub never listed bench__echo");
  return { key: "peer", label: `peer ${PEER} (SSE)`, pid: child.pid as number, client, tool: "bench__echo" };
}

async function forwarder(): Promise<Target> {
  const { child, url } = await launch([join(ROOT, "bench/forwarder-http.mjs"), "0", process.execPath, ECHO], /listening on/, (o) => /listening on (\S+)/.exec(o)?.[1]);
  return { key: "fwd", label: "bare SDK streamable-HTTP forwarder", pid: child.pid as number, client: await connectHttp(url), tool: "echo" };
}

async function raw(): Promise<Target> {
  const { child, url } = await launch([join(ROOT, "bench/raw-json-server.mjs"), "0"], /listening on/, (o) => /listening on (\S+)/.exec(o)?.[1]);
  return { key: "raw", label: "raw JSON server, no downstream (ceiling)", pid: child.pid as number, client: await connectHttp(url), tool: "echo" };
}

async function mcphub(transport: "sdk" | "lean"): Promise<Target> {
  const cfg = join(home, `mcphub-${transport}.yaml`);
  // Connected at start, like the peer (with the default `start: auto` a second daemon finds the
  // catalogue cache and starts the server only on the first call).
  writeFileSync(cfg, YAML.stringify({ expose: "all", http_transport: transport, servers: { bench: { command: process.execPath, args: [ECHO], start: "eager" } } }));
  const profile = PROFILE_DIR ? ["--cpu-prof", "--cpu-prof-interval", "200", "--cpu-prof-dir", PROFILE_DIR, "--cpu-prof-name", `mcphub-${transport}.cpuprofile`] : [];
  const { child, url } = await launch([...profile, BIN, "--config", cfg, "up", "--listen", "127.0.0.1:0"], /bench: ready/, (o) => /listening on (\S+\/mcp)/.exec(o)?.[1]);
  return { key: transport, label: `mcphub up, ${transport} transport`, pid: child.pid as number, client: await connectHttp(url), tool: "bench__echo" };
}

/** utime + stime of the process alone, in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function rssBytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
}

interface Sample {
  rate: number;
  p50: number;
  p99: number;
  cpuUs: number;
  rss: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

const callOf = (t: Target) => (i: number) => t.client.callTool({ name: t.tool, arguments: { message: `hello ${i}` } }) as Promise<{ isError?: boolean; content?: { text?: string }[] }>;

/** Runs every server's hot path until V8 has optimized it (a daemon runs warm), before any timing. */
async function warmUp(t: Target): Promise<void> {
  const call = callOf(t);
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < WARMUP) await call(next++);
  }));
  for (let i = 0; i < WARMUP / 10; i++) await call(i);
}

async function measure(t: Target, concurrency: number): Promise<Sample> {
  const call = callOf(t);
  const lat: number[] = [];
  let next = 0;
  let wrong = 0;
  const cpu0 = cpuSeconds(t.pid);
  const start = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= CALLS) return;
      const s = performance.now();
      const r = await call(i);
      lat.push(performance.now() - s);
      if (r.isError || r.content?.[0]?.text !== `Echo: hello ${i}`) wrong++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const total = performance.now() - start;
  const cpu = cpuSeconds(t.pid) - cpu0;
  if (wrong > 0) throw new Error(`${t.label}: ${wrong} wrong answers`);
  lat.sort((a, b) => a - b);
  return { rate: (CALLS / total) * 1000, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), cpuUs: (cpu / CALLS) * 1e6, rss: rssBytes(t.pid) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length));
const fmt = (xs: number[], digits = 0) => {
  const m = median(xs).toFixed(digits);
  return xs.length > 1 ? `${m} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})` : m;
};

async function main() {
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  console.log(`daemon benchmark: ${CALLS} echo calls per row, ${ROUNDS} rounds (order reversed every other round), node ${process.version}, load ${load}, ${new Date().toISOString()}`);
  const makers: [string, () => Promise<Target>][] = [
    ["peer", peer],
    ["fwd", forwarder],
    ["raw", raw],
    ["sdk", () => mcphub("sdk")],
    ["lean", () => mcphub("lean")],
  ];
  const targets: Target[] = [];
  for (const [key, make] of makers) if (!ONLY || ONLY.includes(key)) targets.push(await make());
  const modes = [1, CONCURRENCY];
  for (const t of targets) await warmUp(t);
  process.stderr.write(`warmed up (${WARMUP} calls each)\n`);
  const samples = new Map<string, Sample[]>();
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      for (const c of modes) {
        const s = await measure(t, c);
        const k = `${t.key}/${c}`;
        samples.set(k, [...(samples.get(k) ?? []), s]);
      }
    }
    process.stderr.write(`round ${round + 1}/${ROUNDS} done (load ${readFileSync("/proc/loadavg", "utf8").split(" ")[0]})\n`);
  }
  console.log(`\n${pad("server", 42)}${pad("in flight", 11)}${pad("calls/s", 20)}${pad("p50 ms", 20)}${pad("p99 ms", 22)}${pad("server CPU µs/call", 22)}RSS MiB`);
  for (const t of targets) {
    for (const c of modes) {
      const s = samples.get(`${t.key}/${c}`) ?? [];
      console.log(
        `${pad(t.label, 42)}${pad(String(c), 11)}${pad(fmt(s.map((x) => x.rate)), 20)}${pad(fmt(s.map((x) => x.p50), 2), 20)}${pad(fmt(s.map((x) => x.p99), 2), 22)}${pad(fmt(s.map((x) => x.cpuUs)), 22)}${(median(s.map((x) => x.rss)) / 2 ** 20).toFixed(0)}`,
      );
    }
  }
  const med = (key: string, c: number, f: (s: Sample) => number) => median((samples.get(`${key}/${c}`) ?? []).map(f));
  const have = (k: string) => targets.some((t) => t.key === k);
  if (have("lean")) {
    console.log("\nlean transport against the targets (medians):");
    const row = (what: string, value: number, target: string, ok: boolean) => console.log(`  ${pad(what, 58)}${pad(value.toFixed(2), 8)}${pad(target, 10)}${ok ? "met" : "NOT MET"}`);
    if (have("peer")) {
      for (const c of modes) {
        const r = med("lean", c, (s) => s.cpuUs) / med("peer", c, (s) => s.cpuUs);
        row(`server CPU per call vs peer, ${c} in flight`, r, "≤ 0.50", r <= 0.5);
      }
      const seq = med("lean", 1, (s) => s.rate) / med("peer", 1, (s) => s.rate);
      row("calls/s vs peer, sequential", seq, "≥ 1.30", seq >= 1.3);
    }
    if (have("raw")) {
      const r = med("lean", CONCURRENCY, (s) => s.rate) / med("raw", CONCURRENCY, (s) => s.rate);
      row(`calls/s vs the client ceiling, ${CONCURRENCY} in flight`, r, "≥ 0.90", r >= 0.9);
    }
    if (have("sdk")) {
      for (const c of modes) console.log(`  ${pad(`server CPU per call vs the SDK transport, ${c} in flight`, 58)}${(med("lean", c, (s) => s.cpuUs) / med("sdk", c, (s) => s.cpuUs)).toFixed(2)}`);
    }
  }
  await Promise.all(targets.map((t) => t.client.close().catch(() => undefined)));
  for (const c of children) c.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 500));

  if (!argv.includes("--no-agents")) {
    console.log("");
    execFileSync(process.execPath, [join(ROOT, "node_modules/tsx/dist/cli.mjs"), join(ROOT, "bench/agents.ts"), "--rounds", String(AGENT_ROUNDS)], { stdio: "inherit" });
  }
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) c.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true });
  });
