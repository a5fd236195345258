// Retrieval quality of discovery, side by side in one run: plain BM25 (implemented here, the
// baseline), MiniSearch (the library, with our tokeniser), the lexical ranker (SearchIndex, with
// resolve_tool's assessment), and hybrid (lexical + dense through the real embeddings client
// against the local fixture endpoint: plumbing only, the fixture is not a language model), with
// normalised-score fusion (what search uses) and, for comparison, reciprocal-rank fusion.
//
//   npx tsx bench/retrieval.ts                 # every set, every method
//   npx tsx bench/retrieval.ts --via-gateway   # also mcphub_search_tools through a real gateway
//   npx tsx bench/retrieval.ts --tune --method lexical   # the tune half of one method (for tuning)
//   npx tsx bench/retrieval.ts --set everyday --method lexical   # only the sets named so
//
// Sets: LiveMCPBench's 95 tasks (long, multi-step) and our own short natural requests
// (bench/data/requests), over LiveMCPBench's catalogue, over LiveMCPBench + MCP-Zero distractors,
// and the README example config's catalogue (the earlier example requests and the four everyday
// sets). Every set is split into a tune half and a check half by a hash of the query id
// (bench-data.ts halfOf), fixed before any tuning.
//
// Metrics (per query; a group is a set of tools any of which counts):
//   hit@1, hit@5   the first relevant tool is ranked first / in the top 5
//   recall@5       groups found in the top 5 / groups
//   MRR            1 / rank of the first relevant tool (top 100)
//   conf share     resolve_tool answered `confident` (over every query of the half, including
//                  requests that no tool in the catalogue serves)
//   conf prec      confident answers whose recommendation is a relevant tool (a confident answer
//                  to a request nothing serves is wrong)
//   unserved conf  confident answers to the requests nothing serves, of how many there are
// Queries are clipped to the 2,048-byte limit a client must respect.
import { join } from "node:path";
import MiniSearch from "minisearch";
import { inputFieldNames } from "../src/catalog/search/fields.js";
import { buildResolveResponse } from "../src/catalog/search/responses.js";
import { tokenize } from "../src/catalog/search/text/tokenize.js";
import { stem } from "../src/catalog/search/text/stem.js";
import type { CatalogEntry } from "../src/catalog/types.js";
import { truncateUtf8 } from "../src/util/text.js";
import {
  BENCH_DATA,
  distractors,
  groupsOf,
  indexEntries,
  halfOf,
  loadCatalog,
  loadExampleCatalog,
  loadQueries,
  loadEverydayRequests,
  loadEverydayRequests2,
  loadEverydayRequests3,
  loadEverydayRequests4,
  loadEverydayRequests5,
  loadEverydayRequests6,
  loadEverydayRequests7,
  loadEverydayRequests8,
  loadEverydayRequests9,
  loadEverydayRequests10,
  loadEverydayRequests11,
  loadRequests,
  uniqueEntries,
  type Half,
  type RequestLine,
} from "./bench-data.js";
import { gatewaySearcher } from "./gateway-search.js";
import { hybridMethod, rrfMethod } from "./hybrid-fixture.js";

const DEPTH = 100;
const MAX_QUERY_BYTES = 2048;
const REVISION = "catalog-v1-000000000000000000000000";

/** One query's answer: the ranked names, and resolve's recommendation when it was confident. */
export interface Answer {
  ranked: string[];
  /** undefined = the method has no resolve; null = not confident; else the confident recommendation. */
  confident?: string | null;
}
export type Searcher = (query: string) => Promise<Answer> | Answer;
export interface Method {
  name: string;
  build(entries: CatalogEntry[]): Promise<Searcher> | Searcher;
  close?(): Promise<void>;
}

interface Labelled {
  id: string;
  query: string;
  half: Half;
  /** Empty = nothing in the catalogue serves this request. */
  groups: string[][];
}

// ---------------------------------------------------------------------------------------------
// Baseline: Okapi BM25 (k1 = 1.2, b = 0.75) over "server__tool description", lowercase
// alphanumeric tokens, no stemming, no stopwords, no synonyms.
function simpleTokens(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter((t) => t.length > 0);
}

const bm25: Method = {
  name: "plain BM25",
  build(entries) {
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
      return { ranked: scored.slice(0, DEPTH).map((s) => s.name) };
    };
  },
};

// MiniSearch (the library) with our tokeniser and stemmer, field boosts in the spirit of ours,
// prefix and fuzzy matching: the side-by-side that decides whether our own index earns its place.
const minisearch: Method = {
  name: "MiniSearch",
  build(entries) {
    const ms = new MiniSearch<{ id: number; name: string; title: string; fields: string; description: string; server: string }>({
      fields: ["name", "title", "fields", "description", "server"],
      tokenize: (text) => tokenize(text),
      processTerm: (term) => stem(term),
      searchOptions: { boost: { name: 3, title: 2, fields: 1.5, server: 1.5 }, prefix: true, fuzzy: 0.2, combineWith: "OR" },
    });
    ms.addAll(
      entries.map((e, id) => ({
        id,
        name: e.tool,
        title: e.title ?? "",
        fields: inputFieldNames(e).join(" "),
        description: e.description,
        server: `${e.server} ${e.serverDescription ?? ""} ${e.useWhen.join(" ")} ${e.tags.join(" ")}`,
      })),
    );
    return (query) => ({
      ranked: ms
        .search(query)
        .slice(0, DEPTH)
        .map((r) => (entries[r.id as number] as CatalogEntry).namespaced),
    });
  },
};

const lexical: Method = {
  name: "lexical ranker",
  build(entries) {
    const idx = indexEntries(entries);
    return (query) => {
      const ranked = idx.search(query, { maxHits: DEPTH }).map((m) => m.entry.namespaced);
      const doc = buildResolveResponse(idx, { query }, { revision: REVISION });
      const rec = doc["recommendation"] as { namespaced?: string } | null;
      return { ranked, confident: doc["status"] === "confident" ? (rec?.namespaced ?? null) : null };
    };
  },
};

// ---------------------------------------------------------------------------------------------
interface Metrics {
  n: number;
  hit1: number;
  hit5: number;
  r5: number;
  mrr: number;
  confShare?: number;
  confPrecision?: number;
  confident: number;
  /** Confident answers to requests nothing in the catalogue serves. */
  unserved: number;
}

async function evaluate(search: Searcher, queries: Labelled[]): Promise<Metrics> {
  let n = 0;
  let hit1 = 0;
  let hit5 = 0;
  let r5 = 0;
  let mrr = 0;
  let confident = 0;
  let confRight = 0;
  let unserved = 0;
  let hasResolve = false;
  for (const q of queries) {
    const answer = await search(truncateUtf8(q.query, MAX_QUERY_BYTES));
    const relevant = new Set(q.groups.flat());
    if (answer.confident !== undefined) {
      hasResolve = true;
      if (answer.confident !== null) {
        confident++;
        if (relevant.has(answer.confident)) confRight++;
        if (q.groups.length === 0) unserved++;
      }
    }
    if (q.groups.length === 0) continue;
    n++;
    const ranks = q.groups.map((g) => {
      const r = answer.ranked.findIndex((name) => g.includes(name));
      return r < 0 ? Infinity : r;
    });
    const first = Math.min(...ranks);
    if (first < 1) hit1++;
    if (first < 5) hit5++;
    r5 += ranks.filter((r) => r < 5).length / q.groups.length;
    mrr += Number.isFinite(first) ? 1 / (first + 1) : 0;
  }
  const d = Math.max(1, n);
  return {
    n,
    hit1: hit1 / d,
    hit5: hit5 / d,
    r5: r5 / d,
    mrr: mrr / d,
    confident,
    unserved,
    ...(hasResolve ? { confShare: confident / Math.max(1, queries.length), ...(confident > 0 ? { confPrecision: confRight / confident } : {}) } : {}),
  };
}

const f3 = (x: number | undefined): string => (x === undefined ? "—" : x.toFixed(3));

interface Setup {
  set: string;
  catalogue: string;
  entries: CatalogEntry[];
  queries: Labelled[];
  /** Only these methods (by name prefix); all when absent. */
  methods?: string[];
}

/**
 * A stand-in for the held-out generated-task set over MCP-Zero (which the developers do not have):
 * each MCP-Zero tool's first description sentence as the query, that tool as the answer, over the
 * 2,797 tools. Much easier than generated tasks (the words are the tool's own), so it guards
 * against regressions in matching a tool's own wording, not against paraphrase.
 */
function descriptionQueries(entries: CatalogEntry[]): Labelled[] {
  const out: Labelled[] = [];
  for (const e of entries) {
    const first = e.description.split(/(?<=[.!?])\s/u)[0] ?? "";
    if (first.split(/\s+/u).length < 3) continue;
    out.push({ id: e.namespaced, query: first.slice(0, 300), half: halfOf(e.namespaced), groups: [[e.namespaced]] });
  }
  return out;
}

async function main(): Promise<void> {
  const viaGateway = process.argv.includes("--via-gateway");
  // --tune: the tune half only (what tuning may look at; the check half is for the report).
  const halves: Half[] = process.argv.includes("--tune") ? ["tune"] : ["tune", "check"];
  const only = process.argv.includes("--method") ? process.argv[process.argv.indexOf("--method") + 1] : undefined;
  const livePath = join(BENCH_DATA, "livemcpbench", "catalog.jsonl");
  const live = loadCatalog(livePath);
  const zero = loadCatalog(join(BENCH_DATA, "mcp-zero", "catalog.jsonl"));
  const liveEntries = uniqueEntries(live);
  const withDistractors = [...liveEntries, ...distractors(live, zero)];
  const exampleEntries = uniqueEntries(loadExampleCatalog());
  const zeroEntries = uniqueEntries(zero);

  const tasks: Labelled[] = loadQueries(join(BENCH_DATA, "livemcpbench", "queries.jsonl")).map((q) => ({
    id: q.id,
    query: q.query,
    half: halfOf(q.id),
    groups: groupsOf(q),
  }));
  const requests = loadRequests();
  const labelled = (r: RequestLine): Labelled => ({ id: r.id, query: r.query, half: r.half, groups: r.expected.length > 0 ? [r.expected] : [] });
  const natural = (catalog: "live" | "example"): Labelled[] => requests.filter((r) => r.catalog === catalog).map(labelled);

  const setups: Setup[] = [
    { set: "LiveMCPBench tasks", catalogue: "LiveMCPBench", entries: liveEntries, queries: tasks },
    { set: "LiveMCPBench tasks", catalogue: "+ MCP-Zero", entries: withDistractors, queries: tasks },
    { set: "natural requests", catalogue: "LiveMCPBench", entries: liveEntries, queries: natural("live") },
    { set: "natural requests", catalogue: "+ MCP-Zero", entries: withDistractors, queries: natural("live") },
    { set: "example requests", catalogue: "example config", entries: exampleEntries, queries: natural("example") },
    { set: "everyday requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests().map(labelled) },
    { set: "everyday-2 requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests2().map(labelled) },
    { set: "everyday-3 requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests3().map(labelled) },
    { set: "everyday-4 requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests4().map(labelled) },
    { set: "everyday-5 requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests5().map(labelled) },
    { set: "everyday-6 requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests6().map(labelled) },
    { set: "everyday-7 requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests7().map(labelled) },
    { set: "everyday-8 requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests8().map(labelled) },
    { set: "everyday-9 requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests9().map(labelled) },
    { set: "everyday-10 requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests10().map(labelled) },
    { set: "everyday-11 requests", catalogue: "example config", entries: exampleEntries, queries: loadEverydayRequests11().map(labelled) },
    { set: "MCP-Zero descriptions", catalogue: "MCP-Zero", entries: zeroEntries, queries: descriptionQueries(zeroEntries), methods: ["plain BM25", "lexical"] },
  ];
  const methods: Method[] = [bm25, minisearch, lexical, hybridMethod(), rrfMethod()].filter((m) => !only || m.name.startsWith(only));

  const header = ["set", "catalogue", "tools", "half", "n", "method", "hit@1", "hit@5", "recall@5", "MRR", "conf share", "conf prec", "unserved conf"];
  // --set NAME: only the sets whose name starts with NAME (for a quick look while tuning).
  const onlySet = process.argv.includes("--set") ? process.argv[process.argv.indexOf("--set") + 1] : undefined;
  const rows: string[][] = [];
  try {
    for (const s of setups.filter((x) => !onlySet || x.set.startsWith(onlySet))) {
      for (const m of methods.filter((x) => !s.methods || s.methods.some((p) => x.name.startsWith(p)))) {
        const search = await m.build(s.entries);
        for (const half of halves) {
          const qs = s.queries.filter((q) => q.half === half);
          const r = await evaluate(search, qs);
          rows.push([s.set, s.catalogue, String(s.entries.length), half, String(r.n), m.name, f3(r.hit1), f3(r.hit5), f3(r.r5), f3(r.mrr), f3(r.confShare), r.confShare === undefined ? "—" : `${f3(r.confPrecision)} (${r.confident})`, r.confShare === undefined ? "—" : `${r.unserved} of ${qs.length - r.n}`]);
        }
      }
    }
    if (viaGateway) {
      const gw = await gatewaySearcher(live, livePath, DEPTH);
      try {
        for (const s of setups.filter((x) => x.catalogue === "LiveMCPBench")) {
          for (const half of ["tune", "check"] as const) {
            const r = await evaluate(async (q) => ({ ranked: await gw.search(q) }), s.queries.filter((q) => q.half === half));
            rows.push([s.set, s.catalogue, String(s.entries.length), half, String(r.n), "search_tools via gateway", f3(r.hit1), f3(r.hit5), f3(r.r5), f3(r.mrr), "—", "—", "—"]);
          }
        }
      } finally {
        await gw.close();
      }
    }
  } finally {
    for (const m of methods) await m.close?.();
  }

  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i >= 6 || i === 2 || i === 4 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join("  ");
  console.log("Halves: tune = first byte of SHA-256(id) even, check = odd. conf prec: precision (confident count).");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : String(err));
  process.exit(1);
});
