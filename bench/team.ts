// Team mode's cost, side by side in one run.
//   npx tsx bench/team.ts [--calls 1500] [--rounds 3] [--concurrency 16] [--sessions 6] [--warmup 1500]
//                         [--store-rounds 5] [--receipt-rounds 3] [--size-mb 10] [--only calls,store]
// PostgreSQL: a private server started like the tests start one (test/helpers/postgres.ts: initdb on
// a temp dir, fsync off), or an existing database named by MCPHUB_BENCH_PG (postgres://...; its
// server's CPU is then not measured). HAProxy: Debian's haproxy in the foreground, the config
// docs/team.md shows (test/helpers/haproxy.ts).
//
// Calls: one `echo` tool (test/fixtures/echo.mjs over stdio, connected at start) behind each row,
// called as a mounted tool with an agent's bearer token, from SESSIONS SDK streamable-HTTP
// sessions in this process, sequentially and with CONCURRENCY calls in flight:
//   files      one `mcphub up` on the data directory's files
//   pg         one `mcphub up` on PostgreSQL (replica A, addressed directly)
//   pg x2      HAProxy (affinity on Mcp-Session-Id) over replicas A and B
//   pg x3      HAProxy over replicas A, B and C
// A call stores nothing (its result is under the budget); what PostgreSQL costs it is the call
// record (batched appends) and nothing on the hot path (tokens and pins are read from memory).
// Every row first gets WARMUP calls; each round then drives every row in turn, the order reversed
// every other round. calls/s, p50, and CPU per call from /proc (utime + stime): the replicas of
// the row together, PostgreSQL's server processes, HAProxy. Medians over rounds, with the range.
// Then receipts through the gateway, files vs PostgreSQL (one replica each): a tool result of
// SIZE-MB stored (the call answers with its receipt), then paged with get_result to the end.
//
// Store: a SIZE-MB result stored, then read back in 64 KiB pages, on both stores, alternating,
// median of STORE_ROUNDS: (1) through the vault (ResultStore: sealed chunks, the text-view index,
// the page API the gateway's get_result uses), (2) the store alone (blob writes of 64 KiB, reads
// of 64 KiB + 28 B: the sealed chunk size), as in the first measurement in docs/team.md.
import { spawn, type ChildProcess } from "node:child_process";
import { setMaxListeners } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { randomBytes } from "node:crypto";
import YAML from "yaml";
import { openStore, type Store } from "../src/store/index.js";
import { ResultStore } from "../src/vault/results.js";
import { haproxyConfig, haproxyMissing } from "../test/helpers/haproxy.js";
import { startPostgres, type Postgres } from "../test/helpers/postgres.js";
import { freePort } from "../test/helpers/servers.js";
import { descendants } from "./proc.js";
import { BIN, ROOT, isolatedEnv, numberFlag, stringFlag } from "./setup.js";

const ECHO = join(ROOT, "test/fixtures/echo.mjs");
const RECORDER = join(ROOT, "test/fixtures/recorder.mjs");
const CALLS = numberFlag("calls", 1500);
const ROUNDS = numberFlag("rounds", 3);
const CONCURRENCY = numberFlag("concurrency", 16);
const SESSIONS = numberFlag("sessions", 6);
const WARMUP = numberFlag("warmup", 1500);
const STORE_ROUNDS = numberFlag("store-rounds", 5);
const RECEIPT_ROUNDS = numberFlag("receipt-rounds", 3);
const SIZE = Math.round(numberFlag("size-mb", 10) * 1_000_000);
const ONLY = stringFlag("only")?.split(",");
const PASSPHRASE = "bench-team-passphrase-not-a-secret";
const CLK_TCK = 100;
const PAGE = 64 * 1024;

// The SDK's HTTP client hands one AbortSignal to every fetch (see bench/daemon.ts): not a leak.
setMaxListeners(0);

const home = mkdtempSync(join(tmpdir(), "mcphub-bench-team-"));
const children = new Set<ChildProcess>();
let pg: Postgres | undefined;
const cleanup = () => {
  for (const c of children) c.kill("SIGKILL");
  pg?.destroy();
  pg = undefined;
  rmSync(home, { recursive: true, force: true });
};
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    cleanup();
    process.exit(130);
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const pad = (s: string, n: number) => (s.length >= n ? `${s} ` : s + " ".repeat(n - s.length));
const fmt = (xs: number[], digits = 0) => {
  if (xs.length === 0 || xs.some((x) => !Number.isFinite(x))) return "n/a";
  const m = median(xs).toFixed(digits);
  return xs.length > 1 ? `${m} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})` : m;
};
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** utime + stime of each process, in seconds (one that is gone is left out). */
function cpuTimes(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(pid, (Number(f[11]) + Number(f[12])) / CLK_TCK);
    } catch {
      // exited
    }
  }
  return out;
}

/** CPU seconds used between two readings, by the processes present in both. */
function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let s = 0;
  for (const [pid, t] of after) {
    const t0 = before.get(pid);
    if (t0 !== undefined) s += t - t0;
  }
  return s;
}

/** The private PostgreSQL's processes (the postmaster, found by its port, and its backends). */
function postgresPids(port: number): number[] {
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
      if (cmd[0]?.endsWith("postgres") && cmd.includes(`port=${port}`)) return [Number(p), ...descendants(Number(p))];
    } catch {
      // gone
    }
  }
  return [];
}

function launch(args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; out: () => string }> {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let out = "";
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`${args.join(" ")} not ready after 60 s:\n${out}`)), 60_000);
    const take = (d: Buffer) => {
      out += d.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        res({ child, out: () => out });
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

function run(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.once("exit", (code) => (code === 0 ? res(out) : rej(new Error(`${args.join(" ")} exited ${code}: ${err}`))));
  });
}

interface Replica {
  pid: number;
  port: number;
}

async function replica(name: string, cfg: string, env: Record<string, string>): Promise<Replica> {
  const { child, out } = await launch([BIN, "--config", cfg, "up", "--listen", "127.0.0.1:0"], env, /bench: ready/);
  const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(out())?.[1]);
  if (!port) throw new Error(`${name}: no port in its output:\n${out()}`);
  return { pid: child.pid as number, port };
}

async function balancer(replicas: Replica[], port: number): Promise<number> {
  const dir = join(home, `haproxy-${port}`);
  mkdirSync(dir, { recursive: true });
  const cfg = join(dir, "haproxy.cfg");
  writeFileSync(cfg, haproxyConfig(port, replicas.map((r) => r.port)));
  const child = spawn("haproxy", ["-db", "-f", cfg], { stdio: ["ignore", "ignore", "pipe"] });
  children.add(child);
  // Up when a request gets through it.
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) return child.pid as number;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`haproxy on ${port} never answered`);
}

interface Row {
  key: string;
  label: string;
  /** The replicas whose CPU the row counts. */
  pids: number[];
  haproxy?: number;
  clients: Client[];
}

interface Sample {
  rate: number;
  p50: number;
  cpuUs: number;
  pgUs: number;
  lbUs: number;
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "bench-team", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

async function drive(row: Row, calls: number, concurrency: number, lat?: number[]): Promise<number> {
  let next = 0;
  let wrong = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (;;) {
        const i = next++;
        if (i >= calls) return;
        // Calls spread over the row's sessions (so a balancer has sessions to place).
        const client = row.clients[(concurrency === 1 ? i : w) % row.clients.length] as Client;
        const s = performance.now();
        const r = (await client.callTool({ name: "bench__echo", arguments: { message: `m${i}` } })) as { isError?: boolean; content?: { text?: string }[] };
        lat?.push(performance.now() - s);
        if (r.isError || r.content?.[0]?.text !== `Echo: m${i}`) wrong++;
      }
    }),
  );
  if (wrong > 0) throw new Error(`${row.label}: ${wrong} wrong answers`);
  return performance.now() - start;
}

async function measure(row: Row, concurrency: number, pgPids: () => number[]): Promise<Sample> {
  const lat: number[] = [];
  const pgs = pgPids();
  const cpu0 = cpuTimes(row.pids);
  const pg0 = cpuTimes(pgs);
  const lb0 = cpuTimes(row.haproxy ? [row.haproxy] : []);
  const ms = await drive(row, CALLS, concurrency, lat);
  const cpu = cpuDelta(cpu0, cpuTimes(row.pids));
  // Backends that started or ended meanwhile are not counted; the pools keep their connections.
  const pgCpu = cpuDelta(pg0, cpuTimes(pgs));
  const lbCpu = row.haproxy ? cpuDelta(lb0, cpuTimes([row.haproxy])) : NaN;
  lat.sort((a, b) => a - b);
  return {
    rate: (CALLS / ms) * 1000,
    p50: quantile(lat, 0.5),
    cpuUs: (cpu / CALLS) * 1e6,
    pgUs: pgs.length > 0 ? (pgCpu / CALLS) * 1e6 : NaN,
    lbUs: (lbCpu / CALLS) * 1e6,
  };
}

async function callsBench(pgUrl: string, pgPids: () => number[]): Promise<Map<string, Sample[]>> {
  if (haproxyMissing()) throw new Error(haproxyMissing());
  const lb2 = await freePort();
  const lb3 = await freePort();
  const config = (store: string | undefined) => ({
    expose: "all",
    ...(store ? { store } : {}),
    allowed_hosts: [`127.0.0.1:${lb2}`, `127.0.0.1:${lb3}`],
    agents: { bench: {} },
    servers: { bench: { command: process.execPath, args: [ECHO], start: "eager" }, rec: { command: process.execPath, args: [RECORDER], start: "eager" } },
  });
  const machine = (name: string, store: string | undefined) => {
    const dir = join(home, name);
    mkdirSync(dir, { recursive: true });
    const cfg = join(dir, "mcphub.yaml");
    writeFileSync(cfg, YAML.stringify(config(store)));
    return { cfg, env: { ...isolatedEnv(dir), MCPHUB_VAULT_PASSPHRASE: PASSPHRASE } };
  };
  const files = machine("files", undefined);
  const pgMachines = ["a", "b", "c"].map((n) => machine(`pg-${n}`, pgUrl));
  const tokenOf = async (m: { cfg: string; env: Record<string, string> }) =>
    String((JSON.parse(await run([BIN, "--config", m.cfg, "token", "create", "bench", "--json"], m.env)) as { token: string }).token);
  const filesToken = await tokenOf(files);
  const pgToken = await tokenOf(pgMachines[0] as (typeof pgMachines)[number]);
  const fileReplica = await replica("files", files.cfg, files.env);
  const [a, b, c] = await Promise.all(pgMachines.map((m, i) => replica(`pg-${i}`, m.cfg, m.env)));
  const rA = a as Replica;
  const rB = b as Replica;
  const rC = c as Replica;
  const h2 = await balancer([rA, rB], lb2);
  const h3 = await balancer([rA, rB, rC], lb3);
  const sessions = async (url: string, token: string) => Promise.all(Array.from({ length: SESSIONS }, () => connect(url, token)));
  const rows: Row[] = [
    { key: "files", label: "1 replica, file store", pids: [fileReplica.pid], clients: await sessions(`http://127.0.0.1:${fileReplica.port}/mcp`, filesToken) },
    { key: "pg", label: "1 replica, PostgreSQL", pids: [rA.pid], clients: await sessions(`http://127.0.0.1:${rA.port}/mcp`, pgToken) },
    { key: "pg2", label: "2 replicas, PG, HAProxy", pids: [rA.pid, rB.pid], haproxy: h2, clients: await sessions(`http://127.0.0.1:${lb2}/mcp`, pgToken) },
    { key: "pg3", label: "3 replicas, PG, HAProxy", pids: [rA.pid, rB.pid, rC.pid], haproxy: h3, clients: await sessions(`http://127.0.0.1:${lb3}/mcp`, pgToken) },
  ];
  // Warm every replica's hot path (the balanced rows reach B and C), before any timing.
  for (const row of rows) await drive(row, WARMUP, CONCURRENCY);
  process.stderr.write(`calls: warmed up (${WARMUP} calls per row)\n`);
  const samples = new Map<string, Sample[]>();
  const modes = [1, CONCURRENCY];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? rows : [...rows].reverse();
    for (const row of order) {
      for (const m of modes) {
        const s = await measure(row, m, row.key === "files" ? () => [] : pgPids);
        const k = `${row.key}/${m}`;
        samples.set(k, [...(samples.get(k) ?? []), s]);
      }
    }
    process.stderr.write(`calls: round ${round + 1}/${ROUNDS} done (load ${load()})\n`);
  }
  console.log(`\nCalls (${CALLS} echo calls per row and round, ${SESSIONS} sessions, ${ROUNDS} rounds; medians, range in brackets; CPU in µs per call)`);
  console.log(`${pad("row", 26)}${pad("in flight", 10)}${pad("calls/s", 19)}${pad("p50 ms", 22)}${pad("replicas CPU", 19)}${pad("PostgreSQL CPU", 17)}HAProxy CPU`);
  for (const row of rows) {
    for (const m of modes) {
      const s = samples.get(`${row.key}/${m}`) ?? [];
      console.log(
        `${pad(row.label, 26)}${pad(String(m), 10)}${pad(fmt(s.map((x) => x.rate)), 19)}${pad(fmt(s.map((x) => x.p50), 2), 22)}${pad(fmt(s.map((x) => x.cpuUs)), 19)}${pad(row.key === "files" ? "-" : fmt(s.map((x) => x.pgUs)), 17)}${row.haproxy ? fmt(s.map((x) => x.lbUs)) : "-"}`,
      );
    }
  }
  await receiptBench(rows.slice(0, 2));
  for (const row of rows) for (const cl of row.clients) await cl.close().catch(() => undefined);
  return samples;
}

/**
 * Through the gateway: a tool returns SIZE bytes, the replica stores them (the receipt comes back),
 * and the client pages them with get_result from cursor 0 to done (v1 pages of up to 8 KiB, as
 * local-agent reads them). One replica on the files vs one on PostgreSQL, alternating.
 */
async function receiptBench(rows: Row[]): Promise<void> {
  const times = new Map<string, StoreTimes[]>();
  for (let round = -1; round < RECEIPT_ROUNDS; round++) {
    const order = round % 2 === 0 ? rows : [...rows].reverse();
    for (const row of order) {
      const client = row.clients[0] as Client;
      const t0 = performance.now();
      const receipt = (await client.callTool({ name: "rec__big", arguments: { bytes: SIZE } })) as { structuredContent?: { status?: string; callId?: string } };
      const t1 = performance.now();
      const callId = receipt.structuredContent?.callId;
      if (receipt.structuredContent?.status !== "stored" || !callId) throw new Error(`${row.label}: no receipt for ${SIZE} bytes`);
      let cursor = 0;
      let got = 0;
      for (;;) {
        const page = (await client.callTool({ name: "mcphub_get_result", arguments: { callId, cursor } })) as { structuredContent?: { data?: string; nextCursor?: number; done?: boolean } };
        const doc = page.structuredContent;
        if (typeof doc?.nextCursor !== "number" || typeof doc.data !== "string") throw new Error(`${row.label}: not a page at ${cursor}`);
        got += Buffer.from(doc.data, "base64").length;
        cursor = doc.nextCursor;
        if (doc.done) break;
      }
      const t2 = performance.now();
      if (got !== cursor) throw new Error(`${row.label}: paged ${got} bytes, cursor at ${cursor}`);
      // The first round warms both paths up and is not counted.
      if (round >= 0) times.set(row.key, [...(times.get(row.key) ?? []), { writeMs: t1 - t0, readMs: t2 - t1 }]);
    }
  }
  console.log(`
Receipts through the gateway (a ${(SIZE / 1e6).toFixed(0)} MB tool result stored, then paged with get_result in 8 KiB pages; median of ${RECEIPT_ROUNDS})`);
  console.log(`${pad("row", 26)}${pad("call + store ms", 22)}${pad("paging ms", 22)}${pad("total ms", 22)}total vs files`);
  const base = median((times.get("files") ?? []).map((t) => t.writeMs + t.readMs));
  for (const row of rows) {
    const ts = times.get(row.key) ?? [];
    console.log(
      `${pad(row.label, 26)}${pad(fmt(ts.map((t) => t.writeMs)), 22)}${pad(fmt(ts.map((t) => t.readMs)), 22)}${pad(fmt(ts.map((t) => t.writeMs + t.readMs)), 22)}${(median(ts.map((t) => t.writeMs + t.readMs)) / base).toFixed(2)}`,
    );
  }
  receiptRatio = median((times.get("pg") ?? []).map((t) => t.writeMs + t.readMs)) / base;
}

let receiptRatio: number | undefined;

interface StoreTimes {
  writeMs: number;
  readMs: number;
}

/** A tool result of about SIZE bytes: numbered lines of text in one text block, as JSON. */
function payload(): string {
  const lines: string[] = [];
  let n = 0;
  for (let i = 0; n < SIZE - 64; i++) {
    const line = `${String(i).padStart(7, "0")} lorem ipsum dolor sit amet, value=${(i * 7919) % 100_003} ünï 😀\n`;
    lines.push(line);
    n += Buffer.byteLength(line);
  }
  return JSON.stringify({ content: [{ type: "text", text: lines.join("") }] });
}

async function vaultOnce(results: ResultStore, store: Store, body: string, k: number): Promise<StoreTimes> {
  const t0 = performance.now();
  const meta = await results.put({ server: "bench", tool: "big", namespaced: "bench__big", agent: "bench", callId: `bench_${k}_${Date.now()}` }, body);
  const t1 = performance.now();
  let got = 0;
  for (let at = 0; at < meta.totalBytes; at += PAGE) got += (await results.read(meta.callId, at, PAGE)).data.length;
  const t2 = performance.now();
  if (got !== meta.totalBytes) throw new Error(`paged ${got} of ${meta.totalBytes} bytes`);
  // Not left behind (MCPHUB_BENCH_PG may name a database that is kept).
  await store.blobs("results").remove(meta.callId);
  return { writeMs: t1 - t0, readMs: t2 - t1 };
}

async function blobOnce(store: Store, data: Buffer, k: number): Promise<StoreTimes> {
  const blobs = store.blobs("results");
  const key = `bench_blob_${k}_${Date.now()}`;
  const t0 = performance.now();
  const w = await blobs.create(key);
  for (let at = 0; at < data.length; at += PAGE) await w.write([data.subarray(at, at + PAGE)]);
  await w.commit();
  const t1 = performance.now();
  const into = Buffer.alloc(PAGE + 28);
  for (let at = 0; at < data.length; at += into.length) {
    // A reader per page, as the vault opens one for every get_result page.
    const r = await blobs.open(key);
    const part = at + into.length <= data.length ? into : into.subarray(0, data.length - at);
    await r?.read(part, at);
    if (part[7] !== data[at + 7]) throw new Error("wrong bytes read back");
    await r?.close();
  }
  const t2 = performance.now();
  await blobs.remove(key);
  return { writeMs: t1 - t0, readMs: t2 - t1 };
}

async function storeBench(pgUrl: string): Promise<Map<string, StoreTimes[]>> {
  const env = { ...process.env, MCPHUB_VAULT_PASSPHRASE: PASSPHRASE, MCPHUB_KEYCHAIN: "off" };
  const filesDir = join(home, "store-files");
  const pgDir = join(home, "store-pg");
  mkdirSync(filesDir, { recursive: true });
  mkdirSync(pgDir, { recursive: true });
  const stores: Record<string, Store> = { files: await openStore({ dataDir: filesDir }), pg: await openStore({ dataDir: pgDir, url: pgUrl }) };
  const retentionMs = 3_600_000;
  const results: Record<string, ResultStore> = {
    files: await ResultStore.open({ dataDir: filesDir, store: stores.files, retentionMs, env }),
    pg: await ResultStore.open({ dataDir: pgDir, store: stores.pg, retentionMs, env }),
  };
  const body = payload();
  // Sealed bytes look random: so do these (compressible data would flatter a compressing store).
  const data = randomBytes(SIZE);
  const out = new Map<string, StoreTimes[]>();
  const add = (k: string, t: StoreTimes) => out.set(k, [...(out.get(k) ?? []), t]);
  // One untimed pass each: first-use costs (JIT, the first connections) are not the store's.
  for (const k of ["files", "pg"] as const) {
    await vaultOnce(results[k] as ResultStore, stores[k] as Store, body, -1);
    await blobOnce(stores[k] as Store, data, -1);
  }
  for (let round = 0; round < STORE_ROUNDS; round++) {
    const order = round % 2 === 0 ? (["files", "pg"] as const) : (["pg", "files"] as const);
    for (const k of order) add(`vault/${k}`, await vaultOnce(results[k] as ResultStore, stores[k] as Store, body, round));
    for (const k of order) add(`blob/${k}`, await blobOnce(stores[k] as Store, data, round));
  }
  for (const s of Object.values(stores)) await s.close();
  const mb = (SIZE / 1e6).toFixed(0);
  console.log(`\nStore (a ${mb} MB result written, then read back in 64 KiB pages; median of ${STORE_ROUNDS}, range in brackets)`);
  console.log(`${pad("path", 34)}${pad("store", 12)}${pad("write ms", 18)}${pad("page read ms", 18)}${pad("total ms", 18)}${pad("write MB/s", 12)}${pad("read MB/s", 12)}total vs files`);
  const labels: Record<string, string> = { vault: "vault (sealed, indexed, paged)", blob: "store alone (blobs)" };
  for (const path of ["vault", "blob"]) {
    const base = median((out.get(`${path}/files`) ?? []).map((t) => t.writeMs + t.readMs));
    for (const k of ["files", "pg"]) {
      const ts = out.get(`${path}/${k}`) ?? [];
      const total = median(ts.map((t) => t.writeMs + t.readMs));
      console.log(
        `${pad(labels[path] as string, 34)}${pad(k === "pg" ? "PostgreSQL" : "files", 12)}${pad(fmt(ts.map((t) => t.writeMs)), 18)}${pad(fmt(ts.map((t) => t.readMs)), 18)}${pad(fmt(ts.map((t) => t.writeMs + t.readMs)), 18)}${pad((SIZE / 1e3 / median(ts.map((t) => t.writeMs))).toFixed(0), 12)}${pad((SIZE / 1e3 / median(ts.map((t) => t.readMs))).toFixed(0), 12)}${(total / base).toFixed(2)}`,
      );
    }
  }
  return out;
}

async function main(): Promise<void> {
  console.log(`team benchmark: node ${process.version}, load ${load()}, ${new Date().toISOString()}`);
  let pgUrl = process.env.MCPHUB_BENCH_PG;
  let pgPids: () => number[] = () => [];
  if (pgUrl) console.log(`PostgreSQL: ${pgUrl.replace(/:[^:@/]*@/, "@")} (MCPHUB_BENCH_PG; its server CPU is not measured)`);
  else {
    const started = await startPostgres();
    if ("skip" in started) throw new Error(`${started.skip} (or name an existing database in MCPHUB_BENCH_PG)`);
    pg = started;
    pgUrl = started.url;
    const port = started.port;
    pgPids = () => postgresPids(port);
    console.log(`PostgreSQL: a private server on 127.0.0.1:${port} (test/helpers/postgres.ts: fsync off), ${postgresVersion()}`);
  }
  const want = (k: string) => !ONLY || ONLY.includes(k);
  const calls = want("calls") ? await callsBench(pgUrl, pgPids) : undefined;
  for (const c of children) c.kill("SIGTERM");
  children.clear();
  const stored = want("store") ? await storeBench(pgUrl) : undefined;

  console.log(`\nTargets (medians)`);
  const row = (what: string, value: number, target: string, ok: boolean) => console.log(`  ${pad(what, 80)}${pad(value.toFixed(2), 8)}${pad(target, 9)}${ok ? "met" : "NOT MET"}`);
  if (calls) {
    for (const m of [1, CONCURRENCY]) {
      const cpu = (k: string) => median((calls.get(`${k}/${m}`) ?? []).map((s) => s.cpuUs));
      const r = cpu("pg") / cpu("files");
      row(`a call that stores nothing, replica CPU, PostgreSQL vs files, ${m} in flight`, r, "≤ 1.20", r <= 1.2);
    }
    for (const m of [1, CONCURRENCY]) {
      const s = calls.get(`pg/${m}`) ?? [];
      const withPg = median(s.map((x) => x.cpuUs + (Number.isFinite(x.pgUs) ? x.pgUs : 0))) / median((calls.get(`files/${m}`) ?? []).map((x) => x.cpuUs));
      console.log(`  ${pad(`  the same with PostgreSQL's own CPU added, ${m} in flight`, 80)}${withPg.toFixed(2)}`);
    }
  }
  if (receiptRatio !== undefined) row(`storing and paging ${(SIZE / 1e6).toFixed(0)} MB, PostgreSQL vs files, through the gateway`, receiptRatio, "≤ 2.00", receiptRatio <= 2);
  if (stored) {
    for (const path of ["vault", "blob"]) {
      const total = (k: string) => median((stored.get(`${path}/${k}`) ?? []).map((t) => t.writeMs + t.readMs));
      const r = total("pg") / total("files");
      row(`storing and paging ${(SIZE / 1e6).toFixed(0)} MB, PostgreSQL vs files, ${path === "vault" ? "through the vault" : "the store alone"}`, r, "≤ 2.00", r <= 2);
    }
  }
  console.log(`\nload at the end: ${load()}`);
}

function postgresVersion(): string {
  const root = "/usr/lib/postgresql";
  try {
    return `PostgreSQL ${readdirSync(root).sort((x, y) => Number(y) - Number(x))[0] ?? "?"}`;
  } catch {
    return "PostgreSQL";
  }
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  })
  .finally(cleanup);
