// What the sandbox costs a stdio server, side by side in one run:
//   npx tsx bench/sandbox.ts [--rounds 7] [--calls 1000]
// For each server (test/fixtures/echo.mjs under node; server-memory through `npx -y`, as in the
// example config) and each mode (sandbox: off, bubblewrap with network none, with network full),
// the same gateway code path opens the session (downstream/session.ts: the sandbox plan, spawn,
// initialize, tools/list) and then makes CALLS sequential tools/call requests. Reported, as
// medians over ROUNDS rounds whose mode order rotates (so load drifts hit every mode alike):
//  - start: spawn to the first answer, i.e. from asking for the session to tools/list answered;
//  - CPU/call: CPU time of the server's whole process tree (bwrap and its init included), from
//    /proc (per-thread schedstat, in ns), divided by the calls; and the same with the calling
//    process's CPU added.
// Plus, once per gateway process, the trial sandbox run before the first sandboxed start
// (bwrap --version and one `true` in a full sandbox), which the rounds above do not include.
// Ratios are against sandbox: off in the same round. Both sides get the same minimal environment
// (what a sandbox lets through), so the env filter does not count as sandbox cost or gain.
// Linux with a working bubblewrap only.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerConfig } from "../src/config/schema.js";
import { openSession } from "../src/downstream/session.js";
import { bubblewrap } from "../src/sandbox/index.js";
import { forgetBwrapChecks } from "../src/sandbox/bwrap-support.js";
import { ROOT, isolatedEnv, numberFlag } from "./setup.js";

const ROUNDS = numberFlag("rounds", 7);
const CALLS = numberFlag("calls", 1000);

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
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

interface Sample {
  startMs: number;
  serverCpuUs: number;
  totalCpuUs: number;
}

async function sample(server: Server, sandbox: ServerConfig["sandbox"], env: NodeJS.ProcessEnv): Promise<Sample> {
  const cfg = { ...server.cfg, sandbox } as ServerConfig;
  const t0 = performance.now();
  const session = await openSession({ name: "bench", cfg, allServers: { bench: cfg }, clientInfo: { name: "bench", version: "0" }, timeoutMs: 60_000, parentEnv: env });
  const startMs = performance.now() - t0;
  try {
    const pid = session.stdio?.pid;
    if (pid === undefined) throw new Error("no process");
    await session.client.callTool({ name: server.tool, arguments: server.args }); // warm the path
    const s0 = groupCpuNs(pid);
    const c0 = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) await session.client.callTool({ name: server.tool, arguments: server.args });
    const c = process.cpuUsage(c0);
    const serverNs = groupCpuNs(pid) - s0;
    return { startMs, serverCpuUs: serverNs / 1000 / CALLS, totalCpuUs: (serverNs / 1000 + c.user + c.system) / CALLS };
  } finally {
    await session.close();
  }
}

async function main(): Promise<void> {
  if (process.platform !== "linux") throw new Error("bench/sandbox.ts needs Linux with bubblewrap");
  const home = mkdtempSync(join(tmpdir(), "mcphub-bench-sandbox-"));
  // Only variables the sandbox lets through, so both sides start from the same environment and
  // the difference measured is the sandbox's, not the env filter's (an inherited
  // NODE_EXTRA_CA_CERTS alone costs node tens of ms at start; npm_* from `npx tsx` change npx).
  const base = isolatedEnv(home);
  const env: NodeJS.ProcessEnv = { PATH: base.PATH, HOME: base.HOME, LANG: base.LANG ?? "C.UTF-8", MCPHUB_DATA_DIR: base.MCPHUB_DATA_DIR, MCPHUB_KEYCHAIN: "off", npm_config_cache: join(process.env.HOME ?? "/root", ".npm") };
  try {
    const trials: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      forgetBwrapChecks();
      const t = performance.now();
      await bubblewrap(env);
      trials.push(performance.now() - t);
    }
    const info = await bubblewrap(env);
    const results = new Map<string, Sample[]>();
    for (const server of SERVERS) {
      // One unmeasured start per mode: npx's and the page cache's first run, bwrap's trial.
      for (const m of MODES) await sample(server, m.sandbox, env);
      for (let r = 0; r < ROUNDS; r++) {
        for (let k = 0; k < MODES.length; k++) {
          const m = MODES[(r + k) % MODES.length] as (typeof MODES)[number];
          const key = `${server.label}|${m.label}`;
          const list = results.get(key) ?? [];
          list.push(await sample(server, m.sandbox, env));
          results.set(key, list);
        }
      }
    }
    const rows: string[][] = [["server", "sandbox", "start ms", "× off", "server CPU/call µs", "× off", "total CPU/call µs", "× off"]];
    for (const server of SERVERS) {
      const off = results.get(`${server.label}|off`) ?? [];
      const base = { start: median(off.map((s) => s.startMs)), server: median(off.map((s) => s.serverCpuUs)), total: median(off.map((s) => s.totalCpuUs)) };
      for (const m of MODES) {
        const xs = results.get(`${server.label}|${m.label}`) ?? [];
        const start = median(xs.map((s) => s.startMs));
        const cpu = median(xs.map((s) => s.serverCpuUs));
        const total = median(xs.map((s) => s.totalCpuUs));
        rows.push([server.label, m.label, start.toFixed(0), (start / base.start).toFixed(2), cpu.toFixed(0), (cpu / base.server).toFixed(2), total.toFixed(0), (total / base.total).toFixed(2)]);
      }
    }
    const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
    console.log(`bubblewrap ${info.version}; ${ROUNDS} rounds × ${CALLS} sequential calls per mode; medians; load: ${readFileSync("/proc/loadavg", "utf8").trim()}`);
    for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  "));
    console.log(`once per gateway process, before its first sandboxed start: bwrap's trial sandbox ${median(trials).toFixed(1)} ms (median of ${ROUNDS})`);
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync("/tmp/bench-sandbox-memory.jsonl", { force: true });
  }
}

await main();
