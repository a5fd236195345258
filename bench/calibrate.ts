// Calibration of resolve_tool's `confident` rules: the precision/share curve of the assessment's
// thresholds (src/catalog/search/assess.ts, ASSESS_RULES), swept on the TUNE half of our natural
// requests. The rules are chosen from the tune columns alone; `--check` adds the check half's
// columns for the report (look at them once, after choosing: they are not for tuning).
//
//   npx tsx bench/calibrate.ts            # tune half only
//   npx tsx bench/calibrate.ts --check    # also the check half (reporting only)
//
// Each row: the server-agreement minimum, the other-server and sibling gaps; per set, confident
// precision (right / confident) and confident share (confident / all requests of the half,
// including requests nothing serves: a confident answer to those is wrong). The row marked * is
// the shipped ASSESS_RULES. Selection rule, fixed before the check half was looked at: the largest
// tune share on natural requests over LiveMCPBench whose tune precision is at least 0.95 and whose
// share is at least 0.25.
import { join } from "node:path";
import { ASSESS_RULES, assessRoute, type AssessRules } from "../src/catalog/search/assess.js";
import type { SearchIndex } from "../src/catalog/search/index.js";
import type { CatalogEntry } from "../src/catalog/types.js";
import { truncateUtf8 } from "../src/util/text.js";
import { BENCH_DATA, distractors, indexEntries, loadCatalog, loadEverydayRequests, loadExampleCatalog, loadRequests, uniqueEntries, type Half, type RequestLine } from "./bench-data.js";

const DEPTH = 12; // resolve's assessment depth (responses.ts ASSESS_DEPTH)
const MAX_QUERY_BYTES = 2048;

interface Ranked {
  expected: string[];
  half: Half;
  termCount: number;
  total: number;
  matches: ReturnType<SearchIndex["rank"]>["matches"];
}

interface Cell {
  right: number;
  confident: number;
  n: number;
}

function measure(ranked: Ranked[], half: Half, rules: Partial<AssessRules>): Cell {
  let right = 0;
  let confident = 0;
  let n = 0;
  for (const r of ranked) {
    if (r.half !== half) continue;
    n++;
    const a = assessRoute(r.matches, Math.max(r.termCount, 1), r.total, { rules });
    if (a.status !== "confident") continue;
    confident++;
    if (r.expected.includes(r.matches[0]?.entry.namespaced ?? "")) right++;
  }
  return { right, confident, n };
}

const cell = (c: Cell): string => `${(c.confident ? c.right / c.confident : 0).toFixed(3)} (${c.right}/${c.confident})  ${(c.confident / Math.max(1, c.n)).toFixed(3)}`;

function main(): void {
  const withCheck = process.argv.includes("--check");
  const live = loadCatalog(join(BENCH_DATA, "livemcpbench", "catalog.jsonl"));
  const zero = loadCatalog(join(BENCH_DATA, "mcp-zero", "catalog.jsonl"));
  const liveEntries = uniqueEntries(live);
  const withZero = [...liveEntries, ...distractors(live, zero)];
  const requests = loadRequests();
  const example = uniqueEntries(loadExampleCatalog());
  const sets: { name: string; entries: CatalogEntry[]; queries: RequestLine[] }[] = [
    { name: "natural, LiveMCPBench", entries: liveEntries, queries: requests.filter((r) => r.catalog === "live") },
    { name: "natural, + MCP-Zero", entries: withZero, queries: requests.filter((r) => r.catalog === "live") },
    // The example config's two sets pooled (issue 23's 99 everyday requests and the earlier 38):
    // alone each half has 15-25 confident answers, where one answer moves precision by 4-7 points.
    { name: "example config (both sets)", entries: example, queries: [...loadEverydayRequests(), ...requests.filter((r) => r.catalog === "example")] },
  ];
  const halves: Half[] = withCheck ? ["tune", "check"] : ["tune"];
  const rankedSets = sets.map((s) => {
    const idx = indexEntries(s.entries);
    return s.queries
      .filter((q) => halves.includes(q.half))
      .map((q): Ranked => {
        const query = truncateUtf8(q.query, MAX_QUERY_BYTES);
        const { matches, total } = idx.rank(query, { limit: DEPTH, explain: true });
        return { expected: q.expected, half: q.half, termCount: idx.termCount(query), total, matches };
      });
  });

  const grid: Partial<AssessRules>[] = [];
  for (const serverMeta of [false, true])
  for (const siblingOwn of [false, true])
  for (const knownOnly of [false, true])
    for (const toolWord of [0, 1])
      for (const coverage of [0.5, 0.6, 0.67])
        for (const serverHeldMin of [0, 1])
          for (const otherServerGap of [0.3, 0.4, 0.5])
            for (const siblingGap of [0.15, 0.2, 0.25, 0.3, 0.35]) grid.push({ serverMeta, siblingOwn, knownOnly, toolWord, coverage, serverHeldMin, otherServerGap, siblingGap });

  const header = ["server by", "sibling by", "known", "tool", "cover", "server", "other", "sibling", ...sets.flatMap((s) => halves.map((h) => `${s.name}, ${h}: prec (right/conf)  share`))];
  const rows = grid.map((g) => {
    const shipped = g.serverMeta === ASSESS_RULES.serverMeta && g.siblingOwn === ASSESS_RULES.siblingOwn && g.knownOnly === ASSESS_RULES.knownOnly && g.toolWord === ASSESS_RULES.toolWord && g.coverage === ASSESS_RULES.coverage && g.serverHeldMin === ASSESS_RULES.serverHeldMin && g.otherServerGap === ASSESS_RULES.otherServerGap && g.siblingGap === ASSESS_RULES.siblingGap;
    return [`${shipped ? "*" : " "}${g.serverMeta ? "meta" : "text"}`, g.siblingOwn ? "own" : "score", g.knownOnly ? "known" : "all", String(g.toolWord), String(g.coverage), String(g.serverHeldMin), String(g.otherServerGap), String(g.siblingGap), ...rankedSets.flatMap((r) => halves.map((h) => cell(measure(r, h, g))))];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  console.log(`Weak score ${ASSESS_RULES.weakScore}; * = shipped. Halves shown: ${halves.join(", ")}.`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
}

main();
