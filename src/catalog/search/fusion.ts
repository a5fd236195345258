// Hybrid ranking: the lexical ranking and the dense (embedding) ranking fused by a convex
// combination of normalised scores: each list's top 50 is min-max normalised to [0, 1] and a tool's
// fused score is LEXICAL_WEIGHT × its lexical share + (1 − LEXICAL_WEIGHT) × its dense share.
// Measured against reciprocal-rank fusion on the benchmark (docs/discovery.md): RRF gives a weak
// dense list as much say as a strong lexical one and lost 0.1 hit@1 there, where score fusion
// keeps the lexical ranking's margins (as Bruch et al., "An Analysis of Fusion Functions for
// Hybrid Retrieval", 2023, also found). The weight 0.5 is not fitted: no real model runs here.
//
// Resolve's assessment stays lexical (it needs the evidence of which words a tool holds): the
// answer is confident only when the fused top is the lexical top and the lexical assessment is
// confident (responses.ts reads `assessmentRanking`).
import type { DenseIndex } from "./dense.js";
import type { RankedMatch, Ranking, RankOptions, SearchIndex } from "./index.js";
import type { Ranker } from "./responses.js";

export const FUSION = {
  /** The lexical share of the fused score (the dense share is the rest). */
  lexicalWeight: 0.5,
  /** How deep each list is taken (and normalised) before fusing. */
  depth: 50,
  /** Fused scores are reported as integer points: this many for a perfect score in both lists. */
  points: 1000,
} as const;

type RankOpts = RankOptions;

export class HybridRanker implements Ranker {
  /**
   * `vectors` holds the query vectors fetched for this request (by query text); a query without
   * one is ranked lexically.
   */
  constructor(
    private readonly lexical: SearchIndex,
    private readonly dense: DenseIndex,
    private readonly vectors: ReadonlyMap<string, Float32Array>,
  ) {}

  termCount(query: string): number {
    return this.lexical.termCount(query);
  }

  /** The tools indexed (the lexical index's: the assessment reads lexical scores). */
  size(): number {
    return this.lexical.size();
  }

  /** The lexical ranking, whose evidence resolve's assessment reads. */
  assessmentRanking(query: string, opts: RankOpts): Ranking {
    return this.lexical.rank(query, { ...opts, explain: true });
  }

  rank(query: string, opts: RankOpts): Ranking {
    const vector = this.vectors.get(query);
    if (!vector || this.dense.size() === 0) return this.lexical.rank(query, opts);
    const depth = Number.isFinite(opts.limit) ? Math.max(opts.limit, FUSION.depth) : Math.max(FUSION.depth, 200);
    const filter = opts.filter ? { filter: opts.filter } : {};
    const lex = this.lexical.rank(query, { limit: depth, ...filter, ...(opts.prefer ? { prefer: opts.prefer } : {}), ...(opts.explain ? { explain: true } : {}) });
    const den = this.dense.search(vector, depth, opts.filter);
    const lexShare = normaliser(lex.matches.map((m) => m.score));
    const denseShare = normaliser(den.map((d) => d.similarity));
    const fused = new Map<string, { match: RankedMatch; score: number; lexical: number }>();
    for (const m of lex.matches) fused.set(m.entry.namespaced, { match: m, score: FUSION.lexicalWeight * lexShare(m.score), lexical: m.score });
    let denseOnly = 0;
    for (const d of den) {
      const add = (1 - FUSION.lexicalWeight) * denseShare(d.similarity);
      const prev = fused.get(d.entry.namespaced);
      if (prev) prev.score += add;
      else {
        denseOnly++;
        const match: RankedMatch = { entry: d.entry, score: 0, matchedTerms: [] };
        if (opts.explain) match.evidence = this.lexical.explainEntry(d.entry, query);
        fused.set(d.entry.namespaced, { match, score: add, lexical: 0 });
      }
    }
    const preferred = (x: { match: RankedMatch }): number => (opts.prefer?.(x.match.entry) ? 1 : 0);
    const ordered = [...fused.values()].sort(
      (a, b) => b.score - a.score || b.lexical - a.lexical || preferred(b) - preferred(a) || (a.match.entry.namespaced < b.match.entry.namespaced ? -1 : 1),
    );
    const limit = Number.isFinite(opts.limit) ? opts.limit : ordered.length;
    const matches = ordered.slice(0, limit).map((x) => ({ ...x.match, score: Math.round(x.score * FUSION.points) }));
    return { matches, total: lex.total + denseOnly };
  }
}

/** Min-max normalisation over one list's scores (a list of equal scores maps to 1). */
function normaliser(scores: readonly number[]): (x: number) => number {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const x of scores) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return (x) => (hi > lo ? (x - lo) / (hi - lo) : 1);
}
