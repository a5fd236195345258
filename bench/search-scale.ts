// How discovery scales: index build time, memory and search latency at 527 tools
// (LiveMCPBench), 2,797 (MCP-Zero) and ~11,000 (MCP-Zero four times under different server
// names), side by side with MiniSearch (the library) on the same queries; what hybrid ranking adds
// on top of lexical (dense scan + fusion, 768-dimensional vectors, the endpoint's time excluded);
// and a warm restart that reads 11k cached vectors. Each measurement runs in a fresh child
// process so memory numbers do not mix.
//
//   npx tsx bench/search-scale.ts
import { execFileSync } from "node:child_process";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import MiniSearch from "minisearch";
import { contentHash, VectorCache } from "../src/catalog/embeddings/cache.js";
import { normalise } from "../src/catalog/embeddings/client.js";
import { SemanticSearch, toolText } from "../src/catalog/embeddings/service.js";
import { DenseIndex } from "../src/catalog/search/dense.js";
import { inputFieldNames } from "../src/catalog/search/fields.js";
import { HybridRanker } from "../src/catalog/search/fusion.js";
import { SearchIndex } from "../src/catalog/search/index.js";
import { stem } from "../src/catalog/search/text/stem.js";
import { tokenize } from "../src/catalog/search/text/tokenize.js";
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
  /** The first round: every query's words are new to the variant caches (WordNet, prefixes, typos). */
  firstRoundP99: number;
  miniBuildMs: number;
  miniP50: number;
  miniP99: number;
  /** Hybrid rank time minus lexical rank time, per query (dense scan + fusion; no endpoint). */
  hybridExtraP50: number;
  hybridExtraP99: number;
  /** Mean CPU ms per query: hybrid rank minus lexical rank (robust to waiting for a CPU). */
  hybridExtraCpu: number;
  /** Share of the exact dense top 10 that the dense index returns. */
  denseRecall10: number;
}

const DIMS = 768;

/** A deterministic pseudo-random unit vector (xorshift seeded by a string). */
function pseudoVector(seed: string, dims = DIMS): Float32Array {
  let x = 2166136261;
  for (let i = 0; i < seed.length; i++) x = Math.imul(x ^ seed.charCodeAt(i), 16777619) >>> 0;
  const v = new Array<number>(dims);
  for (let d = 0; d < dims; d++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    v[d] = ((x >>> 0) / 4294967296) - 0.5;
  }
  return normalise(v);
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

  const firstRound: number[] = [];
  for (const q of all) {
    const f0 = performance.now();
    idx.search(q, { maxHits: 20 }); // also the warm-up
    firstRound.push(performance.now() - f0);
  }
  firstRound.sort((a, b) => a - b);
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

  // MiniSearch over the same entries, with our tokeniser and stemmer, prefix and fuzzy matching.
  const m0 = performance.now();
  const ms = new MiniSearch<{ id: number; name: string; title: string; fields: string; description: string; server: string }>({
    fields: ["name", "title", "fields", "description", "server"],
    tokenize: (text) => tokenize(text),
    processTerm: (term) => stem(term),
    searchOptions: { boost: { name: 3, title: 2, fields: 1.5, server: 1.5 }, prefix: true, fuzzy: 0.2, combineWith: "OR" },
  });
  ms.addAll(entries.map((e, id) => ({ id, name: e.tool, title: e.title ?? "", fields: inputFieldNames(e).join(" "), description: e.description, server: `${e.server} ${e.serverDescription ?? ""}` })));
  const miniBuildMs = performance.now() - m0;
  for (const q of all) ms.search(q); // warm-up
  const mini: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const q of all) {
      const s0 = performance.now();
      ms.search(q).slice(0, 20);
      mini.push(performance.now() - s0);
    }
  }
  mini.sort((a, b) => a - b);

  // Hybrid: the same lexical index plus a dense index of 768-d vectors, fused per query.
  const dense = new DenseIndex();
  for (const [server, list] of byServer) dense.setServer(server, list.map((entry) => ({ entry, vector: pseudoVector(entry.namespaced) })));
  const vectors = new Map(all.map((q) => [q, pseudoVector(`q:${q}`)] as const));
  const hybrid = new HybridRanker(idx, dense, vectors);
  for (const q of all) hybrid.rank(q, { limit: 20 }); // warm-up (packs the dense matrix)
  const hybridExtra: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const q of all) {
      const h0 = performance.now();
      hybrid.rank(q, { limit: 20 });
      const h1 = performance.now();
      idx.rank(q, { limit: 20 });
      const h2 = performance.now();
      hybridExtra.push(h1 - h0 - (h2 - h1));
    }
  }
  hybridExtra.sort((a, b) => a - b);
  const cpuOf = (f: () => void): number => {
    const c0 = process.cpuUsage();
    for (let round = 0; round < ROUNDS; round++) f();
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000 / (ROUNDS * all.length);
  };
  const hybridCpu = cpuOf(() => {
    for (const q of all) hybrid.rank(q, { limit: 20 });
  });
  const lexicalCpu = cpuOf(() => {
    for (const q of all) idx.rank(q, { limit: 20 });
  });
  let found = 0;
  for (const q of all) {
    const v = vectors.get(q) as Float32Array;
    const exact = new Set(dense.searchExact(v, 10).map((m) => m.entry.namespaced));
    found += dense.search(v, 10).filter((m) => exact.has(m.entry.namespaced)).length;
  }
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
    firstRoundP99: percentile(firstRound, 99),
    miniBuildMs,
    miniP50: percentile(mini, 50),
    miniP99: percentile(mini, 99),
    hybridExtraP50: percentile(hybridExtra, 50),
    hybridExtraP99: percentile(hybridExtra, 99),
    hybridExtraCpu: hybridCpu - lexicalCpu,
    denseRecall10: found / (all.length * 10),
  };
}

interface Restart {
  vectors: number;
  cacheMb: number;
  /** Open the cache, index every server from it (no endpoint call), first hybrid search. */
  restartMs: number;
  restartCpuMs: number;
  endpointRequests: number;
}

/** Writes 11k cached vectors, then (in this fresh process) measures a warm restart from them. */
async function measureRestart(): Promise<Restart> {
  const entries = entriesFor("zero4");
  const byServer = new Map<string, CatalogEntry[]>();
  for (const e of entries) byServer.set(e.server, [...(byServer.get(e.server) ?? []), e]);
  const dir = mkdtempSync(join(tmpdir(), "mcphub-restart-"));
  // Nothing listens on port 9: a request to the endpoint would fail, so a restart that works
  // proves every vector came from the cache.
  const config = { url: "http://127.0.0.1:9/v1", model: "bench-768" };
  try {
    const seed = await VectorCache.open(dir, { url: config.url, model: config.model, dimensions: undefined });
    for (const e of entries) seed.set(contentHash(toolText(e)), pseudoVector(e.namespaced));
    await seed.save();
    const { size } = await import("node:fs/promises").then((fs) => fs.stat(seed.file));
    globalThis.gc?.();
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const semantic = new SemanticSearch({ config, dataDir: dir });
    for (const [server, list] of byServer) semantic.updateServer(server, list);
    await semantic.whenIdle();
    semantic.dense.search(pseudoVector("first query"), 20);
    const restartMs = performance.now() - t0;
    const cu = process.cpuUsage(c0);
    const restartCpuMs = (cu.user + cu.system) / 1000;
    const st = semantic.status();
    await semantic.close();
    return { vectors: st.vectors, cacheMb: size / 2 ** 20, restartMs, restartCpuMs, endpointRequests: st.computed };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const i = process.argv.indexOf("--size");
  if (i >= 0) {
    process.stdout.write(JSON.stringify(measure(process.argv[i + 1] as Size)));
    return;
  }
  if (process.argv.includes("--restart")) {
    process.stdout.write(JSON.stringify(await measureRestart()));
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

  console.log("");
  console.log("Side by side on the same queries: MiniSearch (our tokeniser/stemmer, prefix + fuzzy), and what hybrid adds to lexical.");
  const h2 = ["tools", "mcphub search p50 ms", "mcphub search p99 ms", "first-round p99 ms", "MiniSearch build ms", "MiniSearch p50 ms", "MiniSearch p99 ms", "hybrid extra p50 ms", "hybrid extra p99 ms", "hybrid extra CPU ms (mean)", "dense recall@10"];
  const c2 = rows.map((r) => [String(r.tools), r.searchP50.toFixed(2), r.searchP99.toFixed(2), r.firstRoundP99.toFixed(2), r.miniBuildMs.toFixed(0), r.miniP50.toFixed(2), r.miniP99.toFixed(2), r.hybridExtraP50.toFixed(2), r.hybridExtraP99.toFixed(2), r.hybridExtraCpu.toFixed(2), r.denseRecall10.toFixed(3)]);
  const w2 = h2.map((h, c) => Math.max(h.length, ...c2.map((r) => (r[c] ?? "").length)));
  const l2 = (cs: string[]): string => cs.map((x, c) => x.padStart(w2[c] ?? 0)).join("  ");
  console.log(l2(h2));
  console.log(w2.map((w) => "-".repeat(w)).join("  "));
  for (const r of c2) console.log(l2(r));

  const restarts: Restart[] = [];
  for (let k = 0; k < 3; k++) {
    restarts.push(JSON.parse(execFileSync(process.execPath, ["--expose-gc", "--import", "tsx", self, "--restart"], { encoding: "utf8", maxBuffer: 1 << 20 })) as Restart);
  }
  const times = restarts.map((r) => r.restartMs).sort((a, b) => a - b);
  const cpuTimes = restarts.map((r) => r.restartCpuMs).sort((a, b) => a - b);
  const r0 = restarts[0] as Restart;
  console.log("");
  console.log(
    `Warm restart (3 fresh processes): ${r0.vectors} cached ${DIMS}-d vectors (${r0.cacheMb.toFixed(1)} MB), ${r0.endpointRequests} embedded; ` +
      `open cache + index every server + first search: median ${(times[1] ?? 0).toFixed(0)} ms wall, ${(cpuTimes[1] ?? 0).toFixed(0)} ms CPU (runs: ${times.map((t) => t.toFixed(0)).join(", ")} ms)`,
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
