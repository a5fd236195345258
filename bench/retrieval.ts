// Retrieval quality of discovery: plain BM25 over name + description (the baseline, implemented
// here) against our search, on LiveMCPBench alone and with the MCP-Zero catalogue as distractors.
//
//   npx tsx bench/retrieval.ts                 # our search in-process (SearchIndex)
//   npx tsx bench/retrieval.ts --via-gateway   # our search through a real gateway + SDK client
//
// Metrics per task (groups = expectedGroups, else one group per expected tool; a group counts as
// found when any member is ranked): recall@k = groups found in the top k / groups; hit@5 = any
// group in the top 5; MRR = 1 / rank of the first relevant tool (top 100). Queries are clipped to
// the 2,048-byte limit a client must respect (one LiveMCPBench task embeds an 18 KB image).
import { join } from "node:path";
import { SearchIndex } from "../src/catalog/search/index.js";
import type { CatalogEntry } from "../src/catalog/types.js";
import { truncateUtf8 } from "../src/util/text.js";
import { BENCH_DATA, groupsOf, loadCatalog, loadQueries, toEntry, type CatalogLine, type QueryLine } from "./bench-data.js";
import { gatewaySearcher } from "./gateway-search.js";

const DEPTH = 100;
const MAX_QUERY_BYTES = 2048;

type Searcher = (query: string) => Promise<string[]> | string[];

// ---------------------------------------------------------------------------------------------
// Baseline: Okapi BM25 (k1 = 1.2, b = 0.75) over "server__tool description", lowercase
// alphanumeric tokens, no stemming, no stopwords, no synonyms.
function simpleTokens(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter((t) => t.length > 0);
}

function bm25Baseline(entries: CatalogEntry[]): Searcher {
  const k1 = 1.2;
  const b = 0.75;
  const docs = entries.map((e) => {
    const tokens = simpleTokens(`${e.namespaced} ${e.description}`);
    const tf = new Map<string, number>();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    return { name: e.namespaced, len: tokens.length, tf };
  });
  const avg = docs.reduce((s, d) => s + d.len, 0) / Math.max(1, docs.length);
  const df = new Map<string, number>();
  for (const d of docs) for (const t of d.tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const n = docs.length;
  return (query) => {
    const terms = [...new Set(simpleTokens(query))];
    const scored: { name: string; score: number }[] = [];
    for (const d of docs) {
      let score = 0;
      for (const t of terms) {
        const f = d.tf.get(t);
        if (!f) continue;
        const dft = df.get(t) ?? 0;
        const idf = Math.log(1 + (n - dft + 0.5) / (dft + 0.5));
        score += (idf * f * (k1 + 1)) / (f + k1 * (1 - b + (b * d.len) / avg));
      }
      if (score > 0) scored.push({ name: d.name, score });
    }
    scored.sort((a, b2) => b2.score - a.score || (a.name < b2.name ? -1 : 1));
    return scored.slice(0, DEPTH).map((s) => s.name);
  };
}

function ourSearch(entries: CatalogEntry[]): Searcher {
  const idx = new SearchIndex();
  const byServer = new Map<string, CatalogEntry[]>();
  for (const e of entries) byServer.set(e.server, [...(byServer.get(e.server) ?? []), e]);
  for (const [server, list] of byServer) idx.setServer(server, list);
  return (query) => idx.search(query, { maxHits: DEPTH }).map((m) => m.entry.namespaced);
}

// ---------------------------------------------------------------------------------------------
interface Metrics {
  r1: number;
  r5: number;
  hit5: number;
  mrr: number;
}

async function evaluate(search: Searcher, queries: QueryLine[]): Promise<Metrics> {
  let r1 = 0;
  let r5 = 0;
  let hit5 = 0;
  let mrr = 0;
  for (const q of queries) {
    const ranked = await search(truncateUtf8(q.query, MAX_QUERY_BYTES));
    const groups = groupsOf(q);
    const ranks = groups.map((g) => {
      const r = ranked.findIndex((name) => g.includes(name));
      return r < 0 ? Infinity : r;
    });
    r1 += ranks.filter((r) => r < 1).length / groups.length;
    const in5 = ranks.filter((r) => r < 5).length;
    r5 += in5 / groups.length;
    hit5 += in5 > 0 ? 1 : 0;
    const first = Math.min(...ranks);
    mrr += Number.isFinite(first) ? 1 / (first + 1) : 0;
  }
  const n = queries.length;
  return { r1: r1 / n, r5: r5 / n, hit5: hit5 / n, mrr: mrr / n };
}

/** MCP-Zero servers whose names also exist in LiveMCPBench are renamed, so neither replaces the other. */
function distractors(live: CatalogLine[], zero: CatalogLine[]): CatalogEntry[] {
  const liveServers = new Set(live.map((l) => l.server));
  const seen = new Set<string>();
  const out: CatalogEntry[] = [];
  for (const l of zero) {
    const server = liveServers.has(l.server) ? `${l.server}-zero` : l.server;
    const e = toEntry(l, server);
    if (seen.has(e.namespaced)) continue;
    seen.add(e.namespaced);
    out.push(e);
  }
  return out;
}

function uniqueEntries(lines: CatalogLine[]): CatalogEntry[] {
  const seen = new Set<string>();
  return lines.map((l) => toEntry(l)).filter((e) => !seen.has(e.namespaced) && (seen.add(e.namespaced), true));
}

const fmt = (x: number): string => x.toFixed(3);
const delta = (x: number): string => (x >= 0 ? "+" : "") + x.toFixed(3);

async function main(): Promise<void> {
  const viaGateway = process.argv.includes("--via-gateway");
  const livePath = join(BENCH_DATA, "livemcpbench", "catalog.jsonl");
  const live = loadCatalog(livePath);
  const queries = loadQueries(join(BENCH_DATA, "livemcpbench", "queries.jsonl"));
  const zero = loadCatalog(join(BENCH_DATA, "mcp-zero", "catalog.jsonl"));
  const liveEntries = uniqueEntries(live);
  const withDistractors = [...liveEntries, ...distractors(live, zero)];

  const rows: string[][] = [];
  const header = ["catalogue", "tools", "method", "recall@1", "recall@5", "hit@5", "MRR"];
  const addSetup = async (label: string, entries: CatalogEntry[], ours: Searcher, oursLabel: string): Promise<void> => {
    const base = await evaluate(bm25Baseline(entries), queries);
    const mine = await evaluate(ours, queries);
    const n = String(entries.length);
    rows.push([label, n, "plain BM25 (name+description)", fmt(base.r1), fmt(base.r5), fmt(base.hit5), fmt(base.mrr)]);
    rows.push([label, n, oursLabel, fmt(mine.r1), fmt(mine.r5), fmt(mine.hit5), fmt(mine.mrr)]);
    rows.push([label, n, "difference", delta(mine.r1 - base.r1), delta(mine.r5 - base.r5), delta(mine.hit5 - base.hit5), delta(mine.mrr - base.mrr)]);
  };

  await addSetup("LiveMCPBench", liveEntries, ourSearch(liveEntries), "mcphub search (in-process)");
  await addSetup("LiveMCPBench + MCP-Zero", withDistractors, ourSearch(withDistractors), "mcphub search (in-process)");
  if (viaGateway) {
    const gw = await gatewaySearcher(live, livePath, DEPTH);
    try {
      await addSetup("LiveMCPBench", liveEntries, gw.search, "mcphub_search_tools (gateway)");
    } finally {
      await gw.close();
    }
  }

  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i >= 3 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join("  ");
  console.log(`LiveMCPBench: ${queries.length} tasks. recall@k = needed tools found in the top k / needed tools.`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
