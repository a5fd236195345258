// What the sandbox costs a stdio server, side by side in one run:
//   npx tsx bench/sandbox.ts [--starts 11] [--batches 30] [--calls 200] [--only echo|memory]
// For each server (test/fixtures/echo.mjs under node; server-memory through `npx -y`, as in the
// example config) and each mode (sandbox: off, bubblewrap with network none, with network full),
// through the gateway's own code path (downstream/session.ts: the sandbox plan, spawn,
// initialize, tools/list):
//  - start: spawn to the first answer (from asking for the session to tools/list answered),
//    STARTS times per mode, the modes taking turns in a rotating order;
//  - CPU/call: one session per mode open at once; BATCHES batches of CALLS sequential
//    tools/call requests, the modes taking turns batch by batch, so a change of load hits all of
//    them alike. CPU is the server's whole process tree (bubblewrap and its init included), from
//    /proc per-thread schedstat (ns); "total" adds the calling process's CPU.
// Ratios are the median of the per-turn ratios to sandbox: off (the turn's own baseline), values
// are medians. Both sides get the same minimal environment (what a sandbox lets through), so the
// env filter is not counted as sandbox cost or gain (an inherited NODE_EXTRA_CA_CERTS alone costs
// node tens of ms at start). Also timed: bubblewrap's trial sandbox, paid once per gateway process
// before its first sandboxed start (not in the starts above). Linux with a working bubblewrap.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerConfig } from "../src/config/schema.js";
import { openSession, type Session } from "../src/downstream/session.js";
import { bubblewrap } from "../src/sandbox/index.js";
import { forgetBwrapChecks } from "../src/sandbox/bwrap-support.js";
import { ROOT, isolatedEnv, numberFlag } from "./setup.js";

const STARTS = numberFlag("starts", 11);
const BATCHES = numberFlag("batches", 30);
const CALLS = numberFlag("calls", 200);
/** --only WORD: just the servers whose label contains WORD (more starts in the same time). */
const ONLY = ((i) => (i >= 0 ? process.argv[i + 1] : undefined))(process.argv.indexOf("--only"));

interface Server {
  label: string;
  cfg: Omit<ServerConfig, "sandbox">;
  tool: string;
  args: Record<string, unknown>;
}

const SERVERS: Server[] = [
  { label: "echo.mjs (node)", cfg: { command: process.execPath, args: [join(ROOT, "test/fixtures/echo.mjs")], enabled: true }, tool: "echo", args: { message: "hi" } },
  {
    label: "server-memory (npx -y)",
    cfg: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], cwd: ROOT, env: { MEMORY_FILE_PATH: "/tmp/bench-sandbox-memory.jsonl" }, enabled: true },
    tool: "read_graph",
    args: {},
  },
];

const MODES: { label: string; sandbox: ServerConfig["sandbox"] }[] = [
  { label: "off", sandbox: false },
  { label: "bwrap, network none", sandbox: { network: "none" } },
  { label: "bwrap, network full", sandbox: { network: "full" } },
];

/**
 * CPU ns of every live process in the group: the sum of its threads' run time from
 * /proc/PID/task/TID/schedstat (nanoseconds; the stat file's ticks are 10 ms, too coarse here).
 */
function groupCpuNs(pgid: number): number {
  let ns = 0;
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      // Fields after "(comm)": state ppid pgrp ...
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) !== pgid) continue;
      for (const t of readdirSync(`/proc/${e}/task`)) ns += Number(readFileSync(`/proc/${e}/task/${t}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // exited meanwhile
    }
  }
  return ns;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

function open(server: Server, sandbox: ServerConfig["sandbox"], env: NodeJS.ProcessEnv): Promise<Session> {
  const cfg = { ...server.cfg, sandbox } as ServerConfig;
  return openSession({ name: "bench", cfg, allServers: { bench: cfg }, clientInfo: { name: "bench", version: "0" }, timeoutMs: 60_000, parentEnv: env });
}

/** Start times per mode, the modes taking turns; each turn's ratio to its own `off`. */
async function starts(server: Server, env: NodeJS.ProcessEnv): Promise<{ ms: number[][]; ratios: number[][] }> {
  const ms: number[][] = MODES.map(() => []);
  const ratios: number[][] = MODES.map(() => []);
  for (const m of MODES) await (await open(server, m.sandbox, env)).close(); // npx's and the page cache's first run
  for (let r = 0; r < STARTS; r++) {
    const turn: number[] = [];
    for (let k = 0; k < MODES.length; k++) {
      const i = (r + k) % MODES.length;
      const t0 = performance.now();
      const s = await open(server, (MODES[i] as (typeof MODES)[number]).sandbox, env);
      turn[i] = performance.now() - t0;
      await s.close();
    }
    turn.forEach((v, i) => {
      ms[i]?.push(v);
      ratios[i]?.push(v / (turn[0] as number));
    });
  }
  return { ms, ratios };
}

/** CPU per call per mode, batch by batch with every mode's session open at once. */
async function cpu(server: Server, env: NodeJS.ProcessEnv) {
  const sessions = await Promise.all(MODES.map((m) => open(server, m.sandbox, env)));
  const per = MODES.map(() => ({ server: [] as number[], total: [] as number[], serverRatio: [] as number[], totalRatio: [] as number[] }));
  try {
    const batch = async (s: Session) => {
      const pid = s.stdio?.pid as number;
      const g0 = groupCpuNs(pid);
      const c0 = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) await s.client.callTool({ name: server.tool, arguments: server.args });
      const c = process.cpuUsage(c0);
      const serverUs = (groupCpuNs(pid) - g0) / 1000 / CALLS;
      return { serverUs, totalUs: serverUs + (c.user + c.system) / CALLS };
    };
    for (const s of sessions) await batch(s); // warm every path
    for (let b = 0; b < BATCHES; b++) {
      const turn: { serverUs: number; totalUs: number }[] = [];
      for (let k = 0; k < MODES.length; k++) {
        const i = (b + k) % MODES.length;
        turn[i] = await batch(sessions[i] as Session);
      }
      const base = turn[0] as { serverUs: number; totalUs: number };
      turn.forEach((t, i) => {
        const p = per[i];
        if (!p) return;
        p.server.push(t.serverUs);
        p.total.push(t.totalUs);
        p.serverRatio.push(t.serverUs / base.serverUs);
        p.totalRatio.push(t.totalUs / base.totalUs);
      });
    }
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
  }
  return per;
}

async function main(): Promise<void> {
  if (process.platform !== "linux") throw new Error("bench/sandbox.ts needs Linux with bubblewrap");
  const home = mkdtempSync(join(tmpdir(), "mcphub-bench-sandbox-"));
  const base = isolatedEnv(home);
  const env: NodeJS.ProcessEnv = { PATH: base.PATH, HOME: base.HOME, LANG: base.LANG ?? "C.UTF-8", MCPHUB_DATA_DIR: base.MCPHUB_DATA_DIR, MCPHUB_KEYCHAIN: "off", npm_config_cache: join(process.env.HOME ?? "/root", ".npm") };
  const load0 = readFileSync("/proc/loadavg", "utf8").trim();
  try {
    const trials: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      forgetBwrapChecks();
      const t = performance.now();
      await bubblewrap(env);
      trials.push(performance.now() - t);
    }
    const info = await bubblewrap(env);
    const rows: string[][] = [["server", "sandbox", "start ms", "× off", "server CPU/call µs", "× off", "total CPU/call µs", "× off"]];
    // The target: ≤ 1.2× of sandbox: off, on spawn-to-first-answer and on CPU per call.
    const worst = { start: 0, cpu: 0 };
    for (const server of SERVERS.filter((s) => ONLY === undefined || s.label.includes(ONLY))) {
      const st = await starts(server, env);
      const c = await cpu(server, env);
      MODES.forEach((m, i) => {
        const p = c[i];
        if (i > 0) {
          worst.start = Math.max(worst.start, median(st.ratios[i] ?? []));
          worst.cpu = Math.max(worst.cpu, median(p?.serverRatio ?? []), median(p?.totalRatio ?? []));
        }
        rows.push([
          server.label,
          m.label,
          median(st.ms[i] ?? []).toFixed(0),
          median(st.ratios[i] ?? []).toFixed(2),
          median(p?.server ?? []).toFixed(0),
          median(p?.serverRatio ?? []).toFixed(2),
          median(p?.total ?? []).toFixed(0),
          median(p?.totalRatio ?? []).toFixed(2),
        ]);
      });
    }
    const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
    console.log(`bubblewrap ${info.version}; ${STARTS} starts and ${BATCHES} batches × ${CALLS} sequential calls per mode, modes taking turns; medians; load before: ${load0}, after: ${readFileSync("/proc/loadavg", "utf8").trim()}`);
    for (const r of rows) console.log(r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  "));
    console.log(`once per gateway process, before its first sandboxed start: bwrap's trial sandbox ${median(trials).toFixed(1)} ms (median of ${STARTS})`);
    const verdict = (x: number) => `${x.toFixed(2)}× ${x <= 1.2 ? "(holds)" : "(MISSED)"}`;
    console.log(`target ≤ 1.20× of off: worst start ${verdict(worst.start)}, worst CPU per call ${verdict(worst.cpu)}`);
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync("/tmp/bench-sandbox-memory.jsonl", { force: true });
  }
}

await main();
