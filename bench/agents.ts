// Many agents, one daemon versus one gateway each, side by side in one run.
//   npx tsx bench/agents.ts [--agents 8] [--calls 10000] [--rounds 1] [--transport lean|sdk] [--profile DIR]
// N agents make CALLS echo calls in all (CALLS/N each, sequentially, all agents at once) through
// mcphub_call_tool: (a) as N sessions of the shared HTTP daemon (`mcphub up`, one bearer token per
// agent, one echo downstream for everyone), (b) as N stdio gateways (`mcphub mcp serve --agent`,
// each with its own echo downstream). Each agent is a process of its own (bench/agent-driver.mjs),
// as harnesses are, so their MCP clients do not queue on one thread. Reports calls/s, p50/p99
// latency, the daemon's CPU per call, and the resident memory of the gateway processes and their
// downstream children, which is what sharing one set saves.
// --profile DIR writes a V8 CPU profile of the daemon there (open it in Chrome DevTools).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import YAML from "yaml";
import { descendants, rssTree } from "./proc.js";
import { BIN, ROOT, isolatedEnv, numberFlag } from "./setup.js";

const ECHO = join(ROOT, "test/fixtures/echo.mjs");

const argv = process.argv.slice(2);
const AGENTS = numberFlag("agents", 8);
const CALLS = numberFlag("calls", 10_000);
const PER_AGENT = Math.ceil(CALLS / AGENTS);
const WARMUP = numberFlag("warmup", 300);
const ROUNDS = numberFlag("rounds", 1);
const transportIdx = argv.indexOf("--transport");
const TRANSPORT = transportIdx >= 0 ? argv[transportIdx + 1] : "lean";
const profileIdx = argv.indexOf("--profile");
const PROFILE_DIR = profileIdx >= 0 ? resolve(argv[profileIdx + 1] ?? ".") : undefined;

const home = mkdtempSync(join(tmpdir(), "mcphub-bench-agents-"));
const env = isolatedEnv(home);
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
    http_transport: TRANSPORT,
    servers: { echo: { command: process.execPath, args: [ECHO] } },
    agents: Object.fromEntries(agentNames.map((a) => [a, { servers: ["echo"] }])),
  };
  writeFileSync(p, YAML.stringify(cfg));
  return p;
}

const DRIVER = join(ROOT, "bench/agent-driver.mjs");

interface Run {
  label: string;
  rate: number;
  p50: number;
  p99: number;
  readyMs: number;
  rss: { bytes: number; processes: number };
  errors: number;
  /** CPU per call (utime+stime from /proc) of the gateway processes: the daemon, or the 8 stdio gateways. */
  gatewayCpuUs: number;
  /** CPU per call of the agents' own processes (their MCP clients). */
  clientCpuUs: number;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

interface Driver {
  child: ChildProcess;
  lines: AsyncIterator<string>;
}

async function nextLine(d: Driver): Promise<Record<string, unknown>> {
  const r = await d.lines.next();
  if (r.done) throw new Error(`an agent driver ended early (exit ${d.child.exitCode})`);
  return JSON.parse(r.value) as Record<string, unknown>;
}

/**
 * Starts one driver process per agent, waits until every agent's first call succeeded and its
 * warm-up is done, then lets them all call at once. `gatewayPids` gives the processes whose
 * memory counts (the daemon, or each driver's stdio gateway once it says its pid).
 */
async function drive(label: string, agentEnv: (agent: string) => Record<string, string>, daemonPid?: number): Promise<Run> {
  const t0 = performance.now();
  const drivers: Driver[] = agentNames.map((a) => {
    const child = spawn(process.execPath, [DRIVER], {
      env: { ...env, MCPHUB_BENCH_AGENT: a, MCPHUB_BENCH_CALLS: String(PER_AGENT), MCPHUB_BENCH_WARMUP: String(WARMUP), ...agentEnv(a) },
      stdio: ["pipe", "pipe", "inherit"],
    });
    if (child.pid !== undefined) started.add(child.pid);
    return { child, lines: createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]() };
  });
  try {
    const ready = await Promise.all(drivers.map(nextLine));
    const readyMs = performance.now() - t0;
    const gatewayPids = daemonPid !== undefined ? [daemonPid] : ready.map((r) => Number(r.gatewayPid));
    const driverPids = drivers.map((d) => d.child.pid as number);
    const sum = (pids: number[]) => pids.reduce((n, p) => n + cpuSeconds(p), 0);
    const gw0 = sum(gatewayPids);
    const cl0 = sum(driverPids);
    const start = performance.now();
    for (const d of drivers) d.child.stdin?.write("go\n");
    const results = await Promise.all(drivers.map(nextLine));
    const total = performance.now() - start;
    const gwCpu = sum(gatewayPids) - gw0;
    const clCpu = sum(driverPids) - cl0;
    const rss = rssTree(gatewayPids);
    const lat = results.flatMap((r) => r.lat as number[]).sort((x, y) => x - y);
    const errors = results.reduce((n, r) => n + Number(r.errors), 0);
    const perCall = (sec: number) => (sec / lat.length) * 1e6;
    return { label, rate: (lat.length / total) * 1000, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), readyMs, rss, errors, gatewayCpuUs: perCall(gwCpu), clientCpuUs: perCall(clCpu) };
  } finally {
    for (const d of drivers) d.child.stdin?.end("exit\n");
    await Promise.all(drivers.map((d) => new Promise((res) => (d.child.exitCode !== null ? res(undefined) : d.child.once("exit", res)))));
    for (const d of drivers) if (d.child.pid !== undefined) started.delete(d.child.pid);
  }
}

async function viaDaemon(cfg: string): Promise<Run> {
  const tokens = new Map<string, string>();
  for (const a of agentNames) {
    const out = execFileSync(process.execPath, [BIN, "--config", cfg, "token", "create", a, "--json"], { env, encoding: "utf8" });
    tokens.set(a, (JSON.parse(out) as { token: string }).token);
  }
  const profile = PROFILE_DIR ? ["--cpu-prof", "--cpu-prof-dir", PROFILE_DIR] : [];
  const daemon: ChildProcess = spawn(process.execPath, [...profile, BIN, "--config", cfg, "up", "--listen", "127.0.0.1:0"], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  if (daemon.pid === undefined) throw new Error("could not start the daemon");
  const pid = daemon.pid;
  started.add(pid);
  const exited = new Promise<void>((res) => daemon.once("exit", () => res()));
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
    return await drive("(a) HTTP daemon, 1 process", (a) => ({ MCPHUB_BENCH_URL: url, MCPHUB_BENCH_TOKEN: tokens.get(a) as string }), pid);
  } finally {
    daemon.kill("SIGTERM");
    await Promise.race([exited, new Promise((res) => setTimeout(res, 5000))]);
    killAll("SIGKILL");
    started.delete(pid);
  }
}

async function viaStdio(cfg: string): Promise<Run> {
  try {
    return await drive(`(b) ${AGENTS} stdio gateways`, (a) => ({ MCPHUB_BENCH_STDIO: JSON.stringify([process.execPath, BIN, "--config", cfg, "mcp", "serve", "--agent", a]) }));
  } finally {
    killAll("SIGKILL");
  }
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}
const mib = (b: number) => `${(b / 1024 ** 2).toFixed(0)} MiB`;

const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? (v[m] as number) : ((v[m - 1] as number) + (v[m] as number)) / 2;
};
const range = (xs: number[], digits = 0) => (xs.length > 1 ? ` (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})` : "");

async function main() {
  console.log(
    `${AGENTS} agents, ${PER_AGENT * AGENTS} mcphub_call_tool echo calls in all (${PER_AGENT} each, sequential per agent, all at once), ${ROUNDS} round(s) alternating which side goes first, daemon on the ${TRANSPORT} transport, node ${process.version}, load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}, ${new Date().toISOString()}`,
  );
  const cfg = writeConfig();
  const daemon: Run[] = [];
  const stdio: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      daemon.push(await viaDaemon(cfg));
      stdio.push(await viaStdio(cfg));
    } else {
      stdio.push(await viaStdio(cfg));
      daemon.push(await viaDaemon(cfg));
    }
  }
  console.log(
    `\n${pad("path", 28)}${pad("round", 7)}${pad("calls/s", 10)}${pad("p50 ms", 10)}${pad("p99 ms", 10)}${pad("ready ms", 10)}${pad("errors", 8)}${pad("gateway CPU", 13)}${pad("client CPU", 12)}RSS (gateways + downstreams)`,
  );
  for (const [i, r] of [...daemon.map((r, i) => [i, r] as const), ...stdio.map((r, i) => [i, r] as const)]) {
    console.log(
      `${pad(r.label, 28)}${pad(String(i + 1), 7)}${pad(r.rate.toFixed(0), 10)}${pad(r.p50.toFixed(2), 10)}${pad(r.p99.toFixed(2), 10)}${pad(r.readyMs.toFixed(0), 10)}${pad(String(r.errors), 8)}${pad(`${r.gatewayCpuUs.toFixed(0)} µs`, 13)}${pad(`${r.clientCpuUs.toFixed(0)} µs`, 12)}${mib(r.rss.bytes)} in ${r.rss.processes} processes`,
    );
  }
  const rate = daemon.map((d, i) => d.rate / (stdio[i] as Run).rate);
  const rss = daemon.map((d, i) => d.rss.bytes / (stdio[i] as Run).rss.bytes);
  const p50 = daemon.map((d, i) => d.p50 / (stdio[i] as Run).p50);
  console.log(
    `\ndaemon / stdio, median over rounds (range): calls/s ${median(rate).toFixed(2)}x${range(rate, 2)}, p50 ${median(p50).toFixed(2)}x${range(p50, 2)}, RSS ${median(rss).toFixed(2)}x${range(rss, 2)}`,
  );
  const gw = daemon.map((d, i) => d.gatewayCpuUs / (stdio[i] as Run).gatewayCpuUs);
  const cl = daemon.map((d, i) => d.clientCpuUs / (stdio[i] as Run).clientCpuUs);
  console.log(`CPU per call, daemon / stdio: gateways ${median(gw).toFixed(2)}x${range(gw, 2)}, the agents' own clients ${median(cl).toFixed(2)}x${range(cl, 2)}`);
  console.log("(ready ms: from start to every agent's first successful call; CPU per call from /proc, utime+stime over the timed calls; RSS right after them)");
  if ([...daemon, ...stdio].some((r) => r.errors > 0)) process.exitCode = 1;
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
