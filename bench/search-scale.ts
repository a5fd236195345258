// How discovery scales: index build time, memory and search latency at 527 tools
// (LiveMCPBench), 2,797 (MCP-Zero) and ~11,000 (MCP-Zero four times under different server
// names). Each size runs in a fresh child process so memory numbers do not mix.
//
//   npx tsx bench/search-scale.ts
import { execFileSync } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { SearchIndex } from "../src/catalog/search/index.js";
import { buildSearchResponse } from "../src/catalog/search/responses.js";
import { truncateUtf8 } from "../src/util/text.js";
import type { CatalogEntry } from "../src/catalog/types.js";
import { BENCH_DATA, loadCatalog, loadQueries, toEntry } from "./bench-data.js";

type Size = "live" | "zero" | "zero4";
const SIZES: Size[] = ["live", "zero", "zero4"];
const ROUNDS = 5;

function entriesFor(size: Size): CatalogEntry[] {
  if (size === "live") return loadCatalog(join(BENCH_DATA, "livemcpbench", "catalog.jsonl")).map((l) => toEntry(l));
  const zero = loadCatalog(join(BENCH_DATA, "mcp-zero", "catalog.jsonl"));
  const copies = size === "zero" ? 1 : 4;
  const out: CatalogEntry[] = [];
  for (let c = 0; c < copies; c++) for (const l of zero) out.push(toEntry(l, c === 0 ? l.server : `${l.server}-copy${c}`));
  return out;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

interface Row {
  tools: number;
  servers: number;
  buildMs: number;
  buildCpuMs: number;
  reindexMs: number;
  rssMb: number;
  heapMb: number;
  searchP50: number;
  searchP99: number;
  searchCpuMean: number;
  /** The slowest query's best time over the rounds: its own cost, without scheduling noise. */
  slowestBest: number;
  responseP50: number;
  responseP99: number;
}

function measure(size: Size): Row {
  const entries = entriesFor(size);
  const byServer = new Map<string, CatalogEntry[]>();
  for (const e of entries) byServer.set(e.server, [...(byServer.get(e.server) ?? []), e]);
  const queries = loadQueries(join(BENCH_DATA, "livemcpbench", "queries.jsonl")).map((q) => truncateUtf8(q.query, 2048));
  const extra = ["fetch webpage", "github__create_issue", "send email", "", "descargar una página web", "list files in a directory"];
  const all = [...queries, ...extra];

  globalThis.gc?.();
  const rss0 = process.memoryUsage().rss;
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const idx = new SearchIndex();
  for (const [server, list] of byServer) idx.setServer(server, list);
  const buildMs = performance.now() - t0;
  const bc = process.cpuUsage(c0);
  const buildCpuMs = (bc.user + bc.system) / 1000;
  globalThis.gc?.();
  const rssMb = (process.memoryUsage().rss - rss0) / 2 ** 20;
  const heapMb = (process.memoryUsage().heapUsed - heap0) / 2 ** 20;

  // Re-index the largest server (a tools/list_changed on one downstream).
  const [bigServer, bigList] = [...byServer].sort((a, b) => b[1].length - a[1].length)[0] ?? ["", []];
  const r0 = performance.now();
  idx.setServer(bigServer, bigList);
  const reindexMs = performance.now() - r0;

  for (const q of all) idx.search(q, { maxHits: 20 }); // warm-up
  const search: number[] = [];
  const response: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let round = 0; round < ROUNDS; round++) {
    for (const q of all) {
      const s0 = performance.now();
      idx.search(q, { maxHits: 20 });
      search.push(performance.now() - s0);
    }
  }
  const cpu = process.cpuUsage(cpu0);
  let slowestBest = 0;
  for (let q = 0; q < all.length; q++) {
    let bestMs = Number.POSITIVE_INFINITY;
    for (let round = 0; round < ROUNDS; round++) bestMs = Math.min(bestMs, search[round * all.length + q] ?? Number.POSITIVE_INFINITY);
    slowestBest = Math.max(slowestBest, bestMs);
  }
  const searchCpuMean = (cpu.user + cpu.system) / 1000 / search.length;
  for (let round = 0; round < ROUNDS; round++) {
    for (const q of all) {
      const s1 = performance.now();
      buildSearchResponse(idx, { query: q }, { revision: "catalog-v1-000000000000000000000000", all: entries });
      response.push(performance.now() - s1);
    }
  }
  search.sort((a, b) => a - b);
  response.sort((a, b) => a - b);
  return {
    tools: idx.size(),
    servers: byServer.size,
    buildMs,
    buildCpuMs,
    reindexMs,
    rssMb,
    heapMb,
    searchP50: percentile(search, 50),
    searchP99: percentile(search, 99),
    searchCpuMean,
    slowestBest,
    responseP50: percentile(response, 50),
    responseP99: percentile(response, 99),
  };
}

function main(): void {
  const i = process.argv.indexOf("--size");
  if (i >= 0) {
    process.stdout.write(JSON.stringify(measure(process.argv[i + 1] as Size)));
    return;
  }
  const self = fileURLToPath(import.meta.url);
  const rows: Row[] = SIZES.map(
    (size) =>
      JSON.parse(
        execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", self, "--size", size], { encoding: "utf8", maxBuffer: 1 << 20 }),
      ) as Row,
  );
  const header = ["tools", "servers", "build ms", "build CPU ms", "reindex 1 server ms", "index RSS MB", "heap MB", "search p50 ms", "search p99 ms", "search CPU ms (mean)", "slowest query ms (best of 5)", "response p50 ms", "response p99 ms"];
  const cells = rows.map((r) => [
    String(r.tools), String(r.servers), r.buildMs.toFixed(0), r.buildCpuMs.toFixed(0), r.reindexMs.toFixed(1), r.rssMb.toFixed(1), r.heapMb.toFixed(1),
    r.searchP50.toFixed(2), r.searchP99.toFixed(2), r.searchCpuMean.toFixed(2), r.slowestBest.toFixed(2), r.responseP50.toFixed(2), r.responseP99.toFixed(2),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...cells.map((r) => (r[c] ?? "").length)));
  const line = (cs: string[]): string => cs.map((x, c) => x.padStart(widths[c] ?? 0)).join("  ");
  console.log(`Load average while measuring: ${loadavg().map((x) => x.toFixed(1)).join(" ")} on ${cpus().length} CPUs (wall-clock latency includes waiting for a CPU).`);
  console.log(`Search latency over ${ROUNDS} rounds of the 95 LiveMCPBench tasks + 6 short queries (maxHits 20).`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of cells) console.log(line(r));
}

main();
