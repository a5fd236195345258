// Proxy overhead and advertised bytes, side by side in one run.
//   npx tsx bench/proxy.ts [--calls 8000] [--rounds 8] [--warmup 3000] [--concurrency 16] [--base DIR]
// One echo tool is called sequentially and with N calls in flight: (a) directly, (b) through a
// bare SDK pass-through forwarder, (c) through mcphub in lazy mode (mcphub_call_tool) and in
// expose-all mode (the mounted tool). What keeps the comparison fair:
//  - a warm-up round per row and mode (--warmup calls, discarded) at the measured concurrency:
//    V8 compiles the hot path over the first few thousand calls (its compiler threads show in
//    every process's CPU), and 100 calls left that compilation inside the first measured rounds;
//  - the calls of each row are split into rounds and the rows take turns round by round, the
//    order rotated each round and reversed every other round: each row takes every place equally
//    often and follows a different row each time, so drifting load (the machine is shared) and
//    what one row leaves behind do not fall on the same row every round;
//  - a 40 ms pause after each round, so work a process does after its last answer (a telemetry
//    batch, a collection) runs before the next row starts; its CPU is read after the pause and
//    is billed to its own round;
//  - per row, the median (min-max) over rounds; ratios are the median (min-max) of per-round
//    ratios (the rows of one round ran back to back, under the same load), and the whole-run
//    ratio beside them.
// CPU per call is the middle process's own (utime + stime from /proc, all its threads), which
// load changes far less than latency; "main run" and "main wait" are its JavaScript thread's
// time on a CPU and time runnable but waiting for one (/proc/PID/task/PID/schedstat): the wait is
// what a loaded machine adds to latency without adding CPU. Then the JSON size of tools/list in
// lazy mode and in expose all over the LiveMCPBench catalogue, twice each, to show byte-identity.
// --base DIR adds (d) rows: the same two gateway paths run by another built checkout (DIR/bin/
// mcphub.js, e.g. main before a change), measured in the same rounds, and a (c)/(d) ratio table.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import YAML from "yaml";
import { BIN, ROOT, isolatedEnv, numberFlag } from "./setup.js";

const ECHO = join(ROOT, "test/fixtures/echo.mjs");
const FORWARDER = join(ROOT, "bench/forwarder.mjs");
const CATALOG_SERVER = join(ROOT, "test/fixtures/catalog-server.mjs");
const LIVEMCPBENCH = resolve(ROOT, "bench/data/livemcpbench/catalog.jsonl");

const argv = process.argv.slice(2);
const CALLS = numberFlag("calls", 8000);
const CONCURRENCY = numberFlag("concurrency", 16);
const ROUNDS = Math.max(1, numberFlag("rounds", 8));
const WARMUP = Math.max(0, numberFlag("warmup", 3000));
const baseAt = argv.indexOf("--base");
const BASE_BIN = baseAt >= 0 && argv[baseAt + 1] ? join(resolve(argv[baseAt + 1] as string), "bin/mcphub.js") : undefined;

const home = mkdtempSync(join(tmpdir(), "mcphub-bench-"));
const env = isolatedEnv(home);

function writeConfig(name: string, cfg: unknown): string {
  const p = join(home, name);
  writeFileSync(p, YAML.stringify(cfg));
  return p;
}

/** The child each client talks to, by client: the process whose CPU a row measures. */
const pids = new WeakMap<Client, number>();

async function connect(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  const transport = new StdioClientTransport({ command, args, env });
  await client.connect(transport);
  if (transport.pid !== null) pids.set(client, transport.pid);
  return client;
}

/** CPU time (user + system, ms) a process has used so far, all its threads; undefined off Linux. */
function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name: state is 3rd, utime the 14th, stime the 15th (clock ticks).
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/** USER_HZ: 100 on every Linux we run on. */
const CLOCK_TICKS = 100;

/**
 * The main (JavaScript) thread's time on a CPU and time runnable but waiting for one, in ms
 * (/proc/PID/task/PID/schedstat, nanoseconds; Linux only). The wait is what a loaded machine adds
 * to a process's latency without adding to its CPU.
 */
function mainThread(pid: number | undefined): { run: number; wait: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").trim().split(" ").map(Number);
    return { run: (run as number) / 1e6, wait: (wait as number) / 1e6 };
  } catch {
    return undefined;
  }
}

interface Target {
  label: string;
  client: Client;
  call: (i: number) => Promise<unknown>;
}

/** One round of one row. */
interface Round {
  p50: number;
  rate: number;
  /** µs per call: the middle process's CPU (all threads), its main thread's run and run-queue wait. */
  cpu: number | undefined;
  run: number | undefined;
  wait: number | undefined;
}

interface Result {
  label: string;
  mode: string;
  /** Whole run: every measured call's latency, and calls over the measured time. */
  p50: number;
  p99: number;
  rate: number;
  /** µs of the middle process's CPU per call, whole run (undefined for the direct row or off Linux). */
  cpuPerCall: number | undefined;
  rounds: Round[];
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

interface Tally {
  lat: number[];
  ms: number;
  cpu: number | undefined;
  rounds: Round[];
}

/** Idle time after each round, so work a process does once its calls are answered (a telemetry batch, a collection) lands in its own round, not in the next row's. */
const SETTLE_MS = 40;

/** One round of one row: `calls` calls, `concurrency` at a time; without a tally it is a warm-up. */
async function round(t: Target, tally: Tally | undefined, calls: number, concurrency: number, direct: boolean): Promise<void> {
  const lat: number[] = [];
  let next = 0;
  const pid = direct ? undefined : pids.get(t.client);
  const cpu0 = cpuMs(pid);
  const th0 = mainThread(pid);
  const start = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= calls) return;
      const s = performance.now();
      await t.call(i);
      lat.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ms = performance.now() - start;
  // The process's CPU is read after the settle time: what it does after its last answer is its own.
  await new Promise((res) => setTimeout(res, SETTLE_MS));
  if (!tally) return;
  const cpu1 = cpuMs(pid);
  const th1 = mainThread(pid);
  tally.ms += ms;
  tally.lat.push(...lat);
  tally.cpu = cpu0 === undefined || cpu1 === undefined ? undefined : (tally.cpu ?? 0) + (cpu1 - cpu0);
  lat.sort((a, b) => a - b);
  const per = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : ((b - a) * 1000) / calls);
  tally.rounds.push({
    p50: quantile(lat, 0.5),
    rate: (calls / ms) * 1000,
    cpu: per(cpu0, cpu1),
    run: per(th0?.run, th1?.run),
    wait: per(th0?.wait, th1?.wait),
  });
}

/**
 * The order of the rows in round `r`: rotated by r, and reversed in every other round. Over the
 * rounds each row takes every place equally often and follows a different row each time, so
 * neither drifting load nor what one row leaves behind (its process still finishing work, the
 * client's garbage) falls on the same row every round.
 */
function roundOrder(rows: number, r: number): number[] {
  const order = Array.from({ length: rows }, (_, k) => (k + r) % rows);
  return r % 2 === 1 ? order.reverse() : order;
}

/**
 * Every row, CALLS calls each, in ROUNDS rounds taken in turn. First a warm-up round of WARMUP
 * calls per row at the same concurrency, in the same alternation, discarded: V8 compiles the hot
 * path over the first few thousand calls (its compiler threads show in every process's CPU), and
 * a round that catches that would measure the compiler.
 */
async function measure(rows: Target[], concurrency: number): Promise<Result[]> {
  for (const j of roundOrder(rows.length, 0)) {
    const t = rows[j] as Target;
    await round(t, undefined, WARMUP, concurrency, true);
  }
  const tallies = rows.map((): Tally => ({ lat: [], ms: 0, cpu: undefined, rounds: [] }));
  const per = Math.ceil(CALLS / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    for (const j of roundOrder(rows.length, r)) {
      const t = rows[j] as Target;
      await round(t, tallies[j] as Tally, per, concurrency, t.label.startsWith("(a)"));
    }
  }
  return rows.map((t, j) => {
    const tally = tallies[j] as Tally;
    tally.lat.sort((a, b) => a - b);
    return {
      label: t.label,
      mode: concurrency === 1 ? "sequential" : `${concurrency} in flight`,
      p50: quantile(tally.lat, 0.5),
      p99: quantile(tally.lat, 0.99),
      rate: (tally.lat.length / tally.ms) * 1000,
      cpuPerCall: tally.cpu === undefined ? undefined : (tally.cpu * 1000) / tally.lat.length,
      rounds: tally.rounds,
    };
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** "median (min-max)" of the rounds' values, or "-" when there are none. */
function spread(xs: (number | undefined)[], digits: number): string {
  const v = xs.filter((x): x is number => x !== undefined && Number.isFinite(x));
  if (v.length === 0) return "-";
  return `${median(v).toFixed(digits)} (${Math.min(...v).toFixed(digits)}-${Math.max(...v).toFixed(digits)})`;
}

/** Median over rounds of c's value over b's in the same round, and the range. */
function perRound(c: Result, b: Result, pick: (r: Round) => number | undefined): string {
  return spread(
    c.rounds.map((r, i) => {
      const x = pick(r);
      const y = pick(b.rounds[i] as Round);
      return x === undefined || y === undefined ? undefined : x / y;
    }),
    2,
  );
}

async function waitForEcho(client: Client, tool: string, args: (i: number) => Record<string, unknown>) {
  for (let i = 0; i < 400; i++) {
    const r = (await client.callTool({ name: tool, arguments: args(0) })) as { isError?: boolean; structuredContent?: { error?: string } };
    if (!r.isError && !r.structuredContent?.error) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`${tool} never became callable`);
}

async function proxyOverhead(): Promise<Result[]> {
  const lazyCfg = writeConfig("lazy.yaml", {
    expose: "lazy",
    servers: { bench: { command: process.execPath, args: [ECHO] } },
  });
  const allCfg = writeConfig("all.yaml", {
    expose: "all",
    servers: { bench: { command: process.execPath, args: [ECHO] } },
  });
  const direct = await connect(process.execPath, [ECHO]);
  const forwarder = await connect(process.execPath, [FORWARDER, process.execPath, ECHO]);
  const lazy = await connect(process.execPath, [BIN, "--config", lazyCfg, "mcp", "serve"]);
  const all = await connect(process.execPath, [BIN, "--config", allCfg, "mcp", "serve"]);
  const msg = (i: number) => ({ message: `hello ${i}` });
  await waitForEcho(lazy, "mcphub_call_tool", (i) => ({ tool: "bench__echo", arguments: msg(i) }));
  await waitForEcho(all, "bench__echo", msg);
  const base: Target[] = [];
  if (BASE_BIN) {
    const baseLazy = await connect(process.execPath, [BASE_BIN, "--config", lazyCfg, "mcp", "serve"]);
    const baseAll = await connect(process.execPath, [BASE_BIN, "--config", allCfg, "mcp", "serve"]);
    await waitForEcho(baseLazy, "mcphub_call_tool", (i) => ({ tool: "bench__echo", arguments: msg(i) }));
    await waitForEcho(baseAll, "bench__echo", msg);
    base.push(
      {
        label: "(d) base lazy call_tool",
        client: baseLazy,
        call: (i) => baseLazy.callTool({ name: "mcphub_call_tool", arguments: { tool: "bench__echo", arguments: msg(i) } }),
      },
      { label: "(d) base expose all", client: baseAll, call: (i) => baseAll.callTool({ name: "bench__echo", arguments: msg(i) }) },
    );
  }
  const targets: Target[] = [
    { label: "(a) direct", client: direct, call: (i) => direct.callTool({ name: "echo", arguments: msg(i) }) },
    { label: "(b) bare forwarder", client: forwarder, call: (i) => forwarder.callTool({ name: "echo", arguments: msg(i) }) },
    {
      label: "(c) mcphub lazy call_tool",
      client: lazy,
      call: (i) => lazy.callTool({ name: "mcphub_call_tool", arguments: { tool: "bench__echo", arguments: msg(i) } }),
    },
    { label: "(c) mcphub expose all", client: all, call: (i) => all.callTool({ name: "bench__echo", arguments: msg(i) }) },
  ];
  const results: Result[] = [];
  const rows = [...targets, ...base];
  for (const concurrency of [1, CONCURRENCY]) results.push(...(await measure(rows, concurrency)));
  await Promise.all([...targets, ...base].map((t) => t.client.close()));
  return results;
}

async function advertisedBytes(): Promise<{ label: string; runs: number[] }[]> {
  const lazyCfg = writeConfig("ad-lazy.yaml", {
    expose: "lazy",
    servers: { live: { command: process.execPath, args: [CATALOG_SERVER, "--catalog", LIVEMCPBENCH] } },
  });
  const allCfg = writeConfig("ad-all.yaml", {
    expose: "all",
    servers: { live: { command: process.execPath, args: [CATALOG_SERVER, "--catalog", LIVEMCPBENCH] } },
  });
  const out: { label: string; runs: number[] }[] = [];
  for (const [label, cfg, settle] of [
    ["lazy (no pins)", lazyCfg, false],
    ["expose all, LiveMCPBench 527 tools", allCfg, true],
  ] as const) {
    const runs: number[] = [];
    const texts: string[] = [];
    for (let run = 0; run < 2; run++) {
      const client = await connect(process.execPath, [BIN, "--config", cfg, "mcp", "serve"]);
      // Wait for the catalogue so the listing is complete, then measure tools/list.
      for (let i = 0; i < 400; i++) {
        const r = (await client.callTool({ name: "mcphub_list_servers", arguments: {} })) as { structuredContent?: { total_tools?: number } };
        if ((r.structuredContent?.total_tools ?? 0) > 0) break;
        await new Promise((res) => setTimeout(res, 25));
      }
      const listed = await client.listTools();
      const text = JSON.stringify(listed);
      texts.push(text);
      runs.push(Buffer.byteLength(text));
      await client.close();
      if (!settle && listed.tools.length !== 8) throw new Error(`lazy mode listed ${listed.tools.length} tools`);
    }
    out.push({ label: `${label}${texts[0] === texts[1] ? " (identical)" : " (DIFFERENT)"}`, runs });
  }
  return out;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

async function main() {
  console.log(
    `proxy overhead: ${CALLS} echo calls per row in ${ROUNDS} rounds after ${WARMUP} warm-up calls, node ${process.version}, ${new Date().toISOString()}, load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`,
  );
  const results = await proxyOverhead();
  console.log(`\nper row: the median (min-max) over the ${ROUNDS} rounds; p99 and CPU over the whole run; main thread = the middle process's JS thread, on a CPU and waiting for one`);
  console.log(
    `${pad("path", 28)}${pad("mode", 14)}${pad("p50 ms", 22)}${pad("calls/s", 20)}${pad("p99 ms", 9)}${pad("CPU µs/call", 13)}${pad("main run µs", 18)}main wait µs`,
  );
  for (const r of results) {
    const cpu = r.cpuPerCall === undefined ? "-" : r.cpuPerCall.toFixed(0);
    console.log(
      `${pad(r.label, 28)}${pad(r.mode, 14)}${pad(spread(r.rounds.map((x) => x.p50), 3), 22)}${pad(spread(r.rounds.map((x) => x.rate), 0), 20)}${pad(r.p99.toFixed(2), 9)}${pad(cpu, 13)}${pad(spread(r.rounds.map((x) => x.run), 0), 18)}${spread(r.rounds.map((x) => x.wait), 0)}`,
    );
  }
  const ratioTable = (title: string, pairs: [string, string, Result, Result][]) => {
    console.log(`\n${pad(title, 28)}${pad("mode", 14)}${pad("p50 per round", 18)}${pad("whole", 7)}${pad("thru per round", 18)}${pad("whole", 7)}${pad("CPU", 6)}main run per round`);
    for (const [label, mode, c, b] of pairs) {
      const cpu = c.cpuPerCall !== undefined && b.cpuPerCall ? (c.cpuPerCall / b.cpuPerCall).toFixed(2) : "-";
      console.log(
        `${pad(label, 28)}${pad(mode, 14)}${pad(perRound(c, b, (r) => r.p50), 18)}${pad((c.p50 / b.p50).toFixed(2), 7)}${pad(perRound(c, b, (r) => r.rate), 18)}${pad((c.rate / b.rate).toFixed(2), 7)}${pad(cpu, 6)}${perRound(c, b, (r) => r.run)}`,
      );
    }
  };
  console.log(`\nratios: the median (min-max) of the ${ROUNDS} per-round ratios (each round's rows ran back to back), and the whole-run ratio`);
  const vsForwarder: [string, string, Result, Result][] = [];
  for (const mode of [...new Set(results.map((r) => r.mode))]) {
    const b = results.find((r) => r.mode === mode && r.label.startsWith("(b)"));
    if (!b) continue;
    for (const c of results.filter((r) => r.mode === mode && (r.label.startsWith("(c)") || r.label.startsWith("(d)")))) vsForwarder.push([c.label, mode, c, b]);
  }
  ratioTable("vs (b) bare forwarder", vsForwarder);
  if (BASE_BIN) {
    const vsBase: [string, string, Result, Result][] = [];
    for (const mode of [...new Set(results.map((r) => r.mode))]) {
      for (const kind of ["lazy call_tool", "expose all"]) {
        const c = results.find((r) => r.mode === mode && r.label === `(c) mcphub ${kind}`);
        const d = results.find((r) => r.mode === mode && r.label === `(d) base ${kind}`);
        if (c && d) vsBase.push([kind, mode, c, d]);
      }
    }
    ratioTable("this build (c) vs base (d)", vsBase);
  }
  const ads = await advertisedBytes();
  console.log(`\n${pad("tools/list JSON bytes", 52)}${pad("run 1", 10)}run 2`);
  for (const a of ads) console.log(`${pad(a.label, 52)}${pad(String(a.runs[0]), 10)}${a.runs[1]}`);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(home, { recursive: true, force: true }));
