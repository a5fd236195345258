// Hybrid ranking: the lexical ranking and the dense (embedding) ranking fused by reciprocal rank
// (RRF: each list contributes 1 / (k + rank) for every tool it ranks). RRF needs no score
// calibration between two unrelated scales (BM25F points, cosine similarity), which is why it was
// chosen over normalised-score fusion; docs/discovery.md has the measurement.
//
// Resolve's assessment stays lexical (it needs the evidence of which words a tool holds): the
// answer is confident only when the fused top is the lexical top and the lexical assessment is
// confident (responses.ts reads `assessmentRanking`).
import type { CatalogEntry } from "../types.js";
import type { DenseIndex } from "./dense.js";
import type { RankedMatch, Ranking, SearchIndex } from "./index.js";
import type { Ranker } from "./responses.js";

export const FUSION = {
  /** RRF's constant: larger flattens the difference between ranks (60 is the usual choice). */
  k: 60,
  /** How deep each list is taken before fusing. */
  depth: 50,
  /** Fused scores are reported as integer points: this many per unit of RRF score. */
  points: 10_000,
} as const;

type RankOpts = { limit: number; filter?: (e: CatalogEntry) => boolean; explain?: boolean };

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

  /** The lexical ranking, whose evidence resolve's assessment reads. */
  assessmentRanking(query: string, opts: RankOpts): Ranking {
    return this.lexical.rank(query, { ...opts, explain: true });
  }

  rank(query: string, opts: RankOpts): Ranking {
    const vector = this.vectors.get(query);
    if (!vector || this.dense.size() === 0) return this.lexical.rank(query, opts);
    const depth = Number.isFinite(opts.limit) ? Math.max(opts.limit, FUSION.depth) : Math.max(FUSION.depth, 200);
    const filter = opts.filter ? { filter: opts.filter } : {};
    const lex = this.lexical.rank(query, { limit: depth, ...filter, ...(opts.explain ? { explain: true } : {}) });
    const den = this.dense.search(vector, depth, opts.filter);
    const fused = new Map<string, { match: RankedMatch; rrf: number; lexical: number }>();
    lex.matches.forEach((m, r) => fused.set(m.entry.namespaced, { match: m, rrf: 1 / (FUSION.k + r + 1), lexical: m.score }));
    let denseOnly = 0;
    den.forEach((d, r) => {
      const add = 1 / (FUSION.k + r + 1);
      const prev = fused.get(d.entry.namespaced);
      if (prev) prev.rrf += add;
      else {
        denseOnly++;
        const match: RankedMatch = { entry: d.entry, score: 0, matchedTerms: [] };
        if (opts.explain) match.evidence = this.lexical.explainEntry(d.entry, query);
        fused.set(d.entry.namespaced, { match, rrf: add, lexical: 0 });
      }
    });
    const ordered = [...fused.values()].sort(
      (a, b) => b.rrf - a.rrf || b.lexical - a.lexical || (a.match.entry.namespaced < b.match.entry.namespaced ? -1 : 1),
    );
    const limit = Number.isFinite(opts.limit) ? opts.limit : ordered.length;
    const matches = ordered.slice(0, limit).map((x) => ({ ...x.match, score: Math.round(x.rrf * FUSION.points) }));
    return { matches, total: lex.total + denseOnly };
  }
}
