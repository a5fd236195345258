// Stored results through the real gateway (`mcphub mcp serve`, SDK client over stdio).
//   npx tsx bench/results.ts [--sizes 50,200] [--runs 3] [--skip store,wire,find]
// 1. store: store and fully page a 50 MB and a 200 MB result; MB/s for storing (the downstream
//    call that ends in a receipt) and for reassembling (v1 pages), and the gateway's RSS, sampled
//    from /proc every 5 ms. Each size is stored `--runs` times, each in a fresh gateway, and the
//    peak RSS of every run is listed. Targets: paging grows RSS by < 64 MB; peak RSS while storing
//    <= 3x the result size on every run.
// 2. wire: bytes on the wire (JSON-RPC responses) to read a 1 MB text result fully, for three kinds
//    of text: v1 pages as sent before (two copies of each page), v1 pages now, and text pages.
//    Target: text pages <= 1.15x the text size.
// 3. find: time to find a needle on the last line of a 200 MB text result (literal and regex), and
//    to search it for a string that is not there; median of 5. Target: <= 3 s.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import YAML from "yaml";
import { BIN, ROOT, isolatedEnv } from "./setup.js";

const argv = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? (argv[i + 1] as string) : fallback;
};
const SIZES = arg("sizes", "50,200").split(",").map(Number);
const RUNS = Number(arg("runs", "3"));
const SKIP = new Set(arg("skip", "").split(",").filter(Boolean));
const MB = 1024 * 1024;

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

/** CPU seconds a process has used (user + system, all its threads), from /proc (100 ticks/s). */
function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Samples a process's RSS every 5 ms while `work` runs; returns the work's result and the peak. */
async function sampled<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; peak: number; ms: number }> {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, 5);
  const start = performance.now();
  try {
    const value = await work();
    return { value, peak: Math.max(peak, rssOf(pid)), ms: performance.now() - start };
  } finally {
    clearInterval(timer);
  }
}

type Call = (name: string, args: Record<string, unknown>) => Promise<CallToolResult>;

async function startGateway(home: string, cfg: string, ready: { tool: string; arguments: Record<string, unknown> }) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "--config", cfg, "mcp", "serve"],
    env: isolatedEnv(home),
  });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  let id = 0;
  const call: Call = async (name, args) => {
    id++;
    return (await client.callTool({ name, arguments: args }, undefined, { timeout: 30 * 60_000 })) as CallToolResult;
  };
  for (let i = 0; i < 400; i++) {
    const r = await call("mcphub_call_tool", ready);
    if (!r.isError && !(r.structuredContent as { error?: string } | undefined)?.error) break;
    await new Promise((res) => setTimeout(res, 25));
  }
  return { client, pid: transport.pid as number, call, calls: () => id };
}

/** Size of the JSON-RPC response that carried `result` (what crossed the wire). */
function wireBytes(result: CallToolResult, id: number): number {
  return Buffer.byteLength(JSON.stringify({ result, jsonrpc: "2.0", id }), "utf8");
}

function table(title: string, head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)) + 2);
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("").trimEnd();
  console.log(`\n${title}\n`);
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function storeBench(home: string): Promise<void> {
  const cfg = join(home, "store.yaml");
  writeFileSync(cfg, YAML.stringify({ expose: "lazy", call_timeout: "30m", servers: { rec: { command: process.execPath, args: [join(ROOT, "test/fixtures/recorder.mjs")] } } }));
  const rows: string[][] = [];
  const runs: string[][] = [];
  for (const size of SIZES) {
    const peaks: number[] = [];
    for (let run = 1; run <= RUNS; run++) {
      // A fresh gateway per run, so one run's heap does not colour the next.
      const { client, pid, call } = await startGateway(home, cfg, { tool: "rec__big", arguments: { bytes: 10 } });
      try {
        const bytes = size * MB;
        const before = rssOf(pid);
        const store = await sampled(pid, () => call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes } }));
        const receipt = store.value.structuredContent as { status: string; callId: string; originalBytes: number };
        if (receipt.status !== "stored") throw new Error(`expected a receipt, got ${JSON.stringify(store.value).slice(0, 200)}`);
        const orig = receipt.originalBytes;
        peaks.push(store.peak / orig);
        runs.push([`${size} MB`, String(run), (orig / MB / (store.ms / 1000)).toFixed(1), (before / MB).toFixed(0), (store.peak / MB).toFixed(0), (store.peak / orig).toFixed(2)]);
        if (run > 1) continue;
        const beforePaging = rssOf(pid);
        const paging = await sampled(pid, async () => {
          let cursor = 0;
          let total = 0;
          for (;;) {
            const page = (await call("mcphub_get_result", { callId: receipt.callId, cursor })).structuredContent as { data: string; nextCursor: number; done: boolean };
            total += Buffer.from(page.data, "base64").length;
            if (page.done) return total;
            cursor = page.nextCursor;
          }
        });
        if (paging.value !== orig) throw new Error("reassembled size differs");
        rows.push([
          `${size} MB`,
          String(orig),
          (orig / MB / (paging.ms / 1000)).toFixed(1),
          (beforePaging / MB).toFixed(0),
          (paging.peak / MB).toFixed(0),
          ((paging.peak - beforePaging) / MB).toFixed(1),
        ]);
      } finally {
        await client.close();
      }
    }
    runs.push([`${size} MB`, "max", "", "", "", Math.max(...peaks).toFixed(2)]);
  }
  table(`storing (node ${process.version}; every run in a fresh gateway)`, ["result", "run", "store MB/s", "RSS idle MB", "RSS peak store MB", "peak/size"], runs);
  table("paging with v1 pages of 8 KiB (first run of each size)", ["result", "bytes", "page MB/s", "RSS before paging MB", "RSS peak paging MB", "paging growth MB"], rows);
}

/** About 1 MiB of each kind of text, from this repository. */
function sampleTexts(dir: string): { name: string; path: string; bytes: number }[] {
  const collect = (root: string, ext: string): string[] => {
    const out: string[] = [];
    for (const name of readdirSync(root).sort()) {
      const p = join(root, name);
      if (statSync(p).isDirectory()) out.push(...collect(p, ext));
      else if (name.endsWith(ext)) out.push(p);
    }
    return out;
  };
  const fill = (parts: string[]): string => {
    let text = "";
    for (let i = 0; Buffer.byteLength(text) < MB; i++) text += parts[i % parts.length];
    return Buffer.from(text).subarray(0, MB).toString("utf8").toWellFormed();
  };
  const code = fill(collect(join(ROOT, "src"), ".ts").map((p) => readFileSync(p, "utf8")));
  const prose = fill([readFileSync(join(ROOT, "README.md"), "utf8"), ...collect(join(ROOT, "docs"), ".md").map((p) => readFileSync(p, "utf8"))]);
  const lines: string[] = [];
  for (let i = 0, n = 0; n < MB; i++) {
    const line = `2026-11-30T12:${String(i % 60).padStart(2, "0")}:00Z INFO request id=${i} path=/api/v1/items/${i % 977} status=200 latency_ms=${i % 113} user="u${i % 31}"`;
    lines.push(line);
    n += line.length + 1;
  }
  const log = fill([`${lines.join("\n")}\n`]);
  return Object.entries({ "TypeScript source": code, "Markdown docs": prose, "access log": log }).map(([name, text]) => {
    const path = join(dir, `${name.replace(/\W+/g, "-")}.txt`);
    writeFileSync(path, text);
    return { name, path, bytes: Buffer.byteLength(text) };
  });
}

async function wireBench(home: string): Promise<void> {
  const cfg = join(home, "wire.yaml");
  writeFileSync(cfg, YAML.stringify({ expose: "lazy", servers: { docs: { command: process.execPath, args: [join(ROOT, "test/fixtures/documents.mjs")] } } }));
  const { client, call, calls } = await startGateway(home, cfg, { tool: "docs__echo", arguments: { message: "ready" } });
  const rows: string[][] = [];
  try {
    for (const t of sampleTexts(home)) {
      const receipt = (await call("mcphub_call_tool", { tool: "docs__file", arguments: { path: t.path } })).structuredContent as { callId: string };
      const callId = receipt.callId;
      let v1Now = 0;
      let v1Before = 0;
      let v1Pages = 0;
      for (let cursor = 0; ; ) {
        const r = await call("mcphub_get_result", { callId, cursor });
        const doc = r.structuredContent as { nextCursor: number; done: boolean };
        v1Now += wireBytes(r, calls());
        // Before: the same document twice, as compact JSON text and as structuredContent.
        v1Before += wireBytes({ content: [{ type: "text", text: JSON.stringify(doc) }], structuredContent: doc }, calls());
        v1Pages++;
        if (doc.done) break;
        cursor = doc.nextCursor;
      }
      let textWire = 0;
      let textPages = 0;
      let back = "";
      for (let cursor = 0; ; ) {
        const r = await call("mcphub_get_result", { callId, format: "text", cursor });
        const doc = JSON.parse((r.content?.[0] as { text: string }).text) as { text: string; nextCursor: number; done: boolean };
        textWire += wireBytes(r, calls());
        back += doc.text;
        textPages++;
        if (doc.done) break;
        cursor = doc.nextCursor;
      }
      const original = readFileSync(t.path, "utf8");
      if (back !== original) throw new Error(`text pages of ${t.name} do not reassemble it`);
      const escaped = Buffer.byteLength(JSON.stringify(JSON.stringify(original)));
      const x = (n: number) => `${(n / t.bytes).toFixed(2)}x`;
      rows.push([t.name, String(t.bytes), `${v1Before} (${x(v1Before)})`, `${v1Now} (${x(v1Now)})`, `${textWire} (${x(textWire)})`, (textWire / escaped).toFixed(3), `${v1Pages}/${textPages}`]);
    }
  } finally {
    await client.close();
  }
  table(
    "bytes on the wire to read a 1 MiB text result fully (JSON-RPC responses)",
    ["text", "bytes", "v1 before (2 copies)", "v1 now", "text pages", "text / escaped text", "calls v1/text"],
    rows,
  );
  console.log("\n(escaped text: the text as a JSON string inside the JSON document in a text block, i.e. JSON escaping counted twice; what is left is the envelope)");
}

async function findBench(home: string): Promise<void> {
  const cfg = join(home, "find.yaml");
  writeFileSync(cfg, YAML.stringify({ expose: "lazy", call_timeout: "30m", find_timeout: "60s", servers: { docs: { command: process.execPath, args: [join(ROOT, "test/fixtures/documents.mjs")] } } }));
  const { client, call, pid } = await startGateway(home, cfg, { tool: "docs__echo", arguments: { message: "ready" } });
  const rows: string[][] = [];
  try {
    // Lines of the documents fixture are ~75 bytes: 200 MB is ~2.9 million lines, the needle on the last.
    const lines = Math.ceil((200 * MB) / 75);
    const receipt = (await call("mcphub_call_tool", { tool: "docs__log", arguments: { lines, needle: "NEEDLE-4242", needleAt: lines } })).structuredContent as {
      callId: string;
      originalBytes: number;
      totalLines: number;
      totalChars: number;
    };
    for (const [label, find] of [
      ["literal, on the last line", "NEEDLE-4242"],
      ["literal, not there", "no such text anywhere"],
      ["regex with a literal, on the last line", "/NEEDLE-\\d{4} you/"],
      ["regex without a literal, not there (decodes all)", "/\\d{8}/"],
    ] as const) {
      const times: number[] = [];
      const cpu: number[] = [];
      let found = 0;
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        const c0 = cpuOf(pid);
        const r = await call("mcphub_get_result", { callId: receipt.callId, find, context: 0 });
        times.push(performance.now() - t0);
        cpu.push(cpuOf(pid) - c0);
        const doc = JSON.parse((r.content?.[0] as { text: string }).text) as { status: string; matches: { line: number }[] };
        if (doc.status !== "ok") throw new Error(`find ${find}: ${doc.status}`);
        found = doc.matches.length;
        if (found > 0 && doc.matches[0]?.line !== lines) throw new Error(`needle found on line ${doc.matches[0]?.line}, expected ${lines}`);
      }
      const ms = median(times);
      rows.push([label, String(found), ms.toFixed(0), Math.min(...times).toFixed(0), (median(cpu) * 1000).toFixed(0), (receipt.originalBytes / MB / (ms / 1000)).toFixed(0)]);
    }
    console.log(`\nfind in a stored result of ${receipt.originalBytes} bytes, ${receipt.totalLines} lines, ${receipt.totalChars} characters (searches run on a worker thread, kept between searches)`);
  } finally {
    await client.close();
  }
  table("find (5 runs each; the first run of the first search starts the search thread)", ["search", "matches", "median ms", "min ms", "gateway CPU ms (median)", "MB/s (median)"], rows);
}

async function main() {
  const home = mkdtempSync(join(tmpdir(), "mcphub-bench-results-"));
  try {
    if (!SKIP.has("store")) await storeBench(home);
    if (!SKIP.has("wire")) await wireBench(home);
    if (!SKIP.has("find")) await findBench(home);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
