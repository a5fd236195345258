// Pure builders of the search_tools and resolve_tool JSON documents (reference §2.2, §2.4, §3.5,
// §3.6). The gateway validates argument types; these functions apply the contract's bounds,
// defaults and shapes. Every query gets a contract-v1 document: an oversized query is cut to the
// byte limit (with reason code `query_truncated`), never refused and never echoed whole.
import type { CatalogEntry, JsonObject, JsonValue } from "../types.js";
import { assessRoute, contentCoverage, WEAK_SCORE, COVERAGE, type ReasonCode } from "./assess.js";
import { BOUNDS, boundedMatches, compactMatch, type Presenter } from "./compact.js";
import type { RankedMatch, Ranking, RankOptions } from "./index.js";
import { argumentTemplate } from "./template.js";
import { clipUtf8, truncateUtf8, utf8Bytes } from "../../util/text.js";

/** What the response builders rank with: the lexical index, or the hybrid ranker (fusion.ts). */
export interface Ranker {
  termCount(query: string): number;
  rank(query: string, opts: RankOptions): Ranking;
  /**
   * The ranking resolve's assessment reads, when it is not the ranking itself (hybrid: the lexical
   * one, which carries the evidence of which words each tool holds).
   */
  assessmentRanking?(query: string, opts: Omit<RankOptions, "explain">): Ranking;
}

/** Context shared by both builders. */
export interface ResponseContext {
  revision: string;
  filter?: (e: CatalogEntry) => boolean;
  /** In-scope servers still starting: resolve is never confident (or no_match) while any is. */
  pendingServers?: number;
  /** The compact capability summary of the in-scope servers, shown when the best match is weak. */
  capabilities?: string;
  /** How each match is shown to the agent asking (see compact.ts); ranking is not affected. */
  present?: Presenter;
  /** Entries that win ties (the agent's pins): never more than a tie. */
  prefer?: (e: CatalogEntry) => boolean;
}

export const CONTRACT_VERSION = 1;
export const MAX_QUERY_BYTES = 2048;
export const MAX_QUERIES = 10;
export const SEARCH_DEFAULT_HITS = 20;
export const SEARCH_MAX_HITS = 100;
export const RESOLVE_DEFAULT_HITS = 5;
export const RESOLVE_MAX_HITS = 10;
/** How deep resolve ranks to find the top's nearest rival of another server and of its own. */
const ASSESS_DEPTH = 12;

/** The capability summary embedded in a weak answer stays within this many bytes. */
export const CAPABILITIES_MAX_BYTES = 1024;

const HINTS = {
  tooGeneric: "describe the goal, activity or capability you need in the query",
  noOverlap:
    "no tool matched these words — describe the capability differently, add use_when hints to the server, or browse with search_tools",
  ambiguous:
    "the recommendation is ambiguous — do not run it automatically; compare the alternatives, search with more specific intent or ask for direction, then read the full schema with describe_tool",
  templateBounded: (ns: string) => `the argument template was bounded — call describe_tool for ${ns} before calling it`,
  ready: "call call_tool with server + tool (or the namespaced name) and the argument_template filled in",
  weak: "the best match is weak — do not run it automatically; reformulate the query with the capability words of the servers in `capabilities`, or browse with search_tools",
  weakSearch: "the best match is weak — reformulate the query with the capability words of the servers in `capabilities`",
} as const;

/** Cuts a query to the byte limit (at a code-point boundary); `cut` says whether it was. */
export function boundQuery(query: string): { query: string; cut: boolean } {
  if (utf8Bytes(query) <= MAX_QUERY_BYTES) return { query, cut: false };
  return { query: truncateUtf8(query, MAX_QUERY_BYTES), cut: true };
}

/** Whether a ranking's best match is weak: nothing, too little evidence, or too few content words held. */
function weakTop(top: RankedMatch | undefined): boolean {
  if (!top) return true;
  if (top.score < WEAK_SCORE) return true;
  const coverage = contentCoverage(top.evidence);
  return !coverage.generic && coverage.share < COVERAGE;
}

function capabilitiesOf(ctx: ResponseContext): string | undefined {
  const text = ctx.capabilities?.trim();
  return text ? clipUtf8(text, CAPABILITIES_MAX_BYTES) : undefined;
}

function byName(a: CatalogEntry, b: CatalogEntry): number {
  return a.namespaced < b.namespaced ? -1 : a.namespaced > b.namespaced ? 1 : 0;
}

/** `max_hits` for search: missing, ≤ 0 or not an integer → 20; above 100 → 100. */
export function searchMaxHits(value: number | undefined): number {
  if (value === undefined || !Number.isFinite(value) || value <= 0) return SEARCH_DEFAULT_HITS;
  return Math.min(Math.floor(value), SEARCH_MAX_HITS);
}

/** `max_hits` for resolve: missing, ≤ 0 or above 10 → 5 (the Go rule: not clamped to 10). */
export function resolveMaxHits(value: number | undefined): number {
  if (value === undefined || !Number.isFinite(value) || value <= 0 || value > RESOLVE_MAX_HITS) return RESOLVE_DEFAULT_HITS;
  return Math.floor(value);
}

/**
 * Several queries are searched independently and merged round-robin by rank: an entry's place is
 * its best rank in any query, then its best score, then its name. Each query's top hit therefore
 * appears before any query's second hit, whatever the score scales of the queries.
 */
export function mergeRankings(rankings: readonly RankedMatch[][]): RankedMatch[] {
  const merged = new Map<string, { match: RankedMatch; rank: number }>();
  for (const ranking of rankings) {
    ranking.forEach((m, rank) => {
      const prev = merged.get(m.entry.namespaced);
      if (!prev) {
        merged.set(m.entry.namespaced, { match: { ...m, matchedTerms: [...m.matchedTerms] }, rank });
        return;
      }
      prev.rank = Math.min(prev.rank, rank);
      if (m.score > prev.match.score) prev.match.score = m.score;
      for (const t of m.matchedTerms) if (!prev.match.matchedTerms.includes(t)) prev.match.matchedTerms.push(t);
    });
  }
  return [...merged.values()]
    .sort((a, b) => a.rank - b.rank || b.match.score - a.match.score || byName(a.match.entry, b.match.entry))
    .map((x) => x.match);
}

export function buildSearchResponse(
  index: Ranker,
  args: { query?: string; queries?: string[]; max_hits?: number },
  ctx: ResponseContext & { all: CatalogEntry[] },
): JsonObject {
  const asked = [...(args.query !== undefined ? [args.query] : []), ...(args.queries ?? [])];
  const reasons: ("query_truncated" | "too_many_queries")[] = [];
  // More than MAX_QUERIES: the first ones are searched, and the answer says the rest were dropped.
  const kept = asked.slice(0, MAX_QUERIES).map(boundQuery);
  if (kept.some((q) => q.cut)) reasons.push("query_truncated");
  if (asked.length > MAX_QUERIES) reasons.push("too_many_queries");
  const queries = kept.map((q) => q.query);
  const maxHits = searchMaxHits(args.max_hits);
  const filter = ctx.filter;
  const opts = filter ? { filter } : {};
  const hasIntent = (q: string): boolean => index.termCount(q) > 0 || index.rank(q, { limit: 1, ...opts }).total > 0;

  let ranked: RankedMatch[];
  let count: number;
  let weak = false;
  if (!queries.some(hasIntent)) {
    // No intent at all (no query, empty, or only stopwords): list the in-scope catalogue by name, score 0.
    ranked = ctx.all
      .filter((e) => !filter || filter(e))
      .sort(byName)
      .map((entry) => ({ entry, score: 0, matchedTerms: [] }));
    count = ranked.length;
  } else if (queries.length === 1) {
    const r = index.rank(queries[0] ?? "", { limit: maxHits, explain: true, ...opts });
    ranked = r.matches;
    count = r.total;
    weak = weakTop(ranked[0]);
  } else {
    const rankings = queries.map((q) => index.rank(q, { limit: Number.POSITIVE_INFINITY, explain: false, ...opts }).matches);
    ranked = mergeRankings(rankings);
    count = ranked.length;
    weak = queries.every((q) => weakTop(index.rank(q, { limit: 1, explain: true, ...opts }).matches[0]));
  }
  const { items, byteLimited } = boundedMatches(ranked, maxHits, { withScore: true, present: ctx.present });
  const out: JsonObject = { contract_version: CONTRACT_VERSION, catalog_revision: ctx.revision };
  if (args.query !== undefined && (args.queries === undefined || args.queries.length === 0)) out["query"] = queries[0] ?? "";
  out["count"] = count;
  out["returned"] = items.length;
  out["truncated"] = items.length < count;
  out["byte_limited"] = byteLimited;
  out["matches"] = items;
  if (reasons.length > 0) out["reason_codes"] = reasons;
  if (weak) {
    out["weak_match"] = true;
    const capabilities = capabilitiesOf(ctx);
    if (capabilities) out["capabilities"] = capabilities;
    out["hint"] = HINTS.weakSearch;
  }
  return out;
}

function nullIfEmpty(list: JsonValue | undefined): JsonValue {
  return Array.isArray(list) && list.length > 0 ? list : null;
}

function noMatch(revision: string, query: string, reasons: ReasonCode[], capabilities: string | undefined): JsonObject {
  return {
    contract_version: CONTRACT_VERSION,
    catalog_revision: revision,
    status: "no_match",
    confidence: "none",
    reason_codes: reasons,
    query,
    recommendation: null,
    ambiguous: false,
    alternatives: [],
    alternatives_truncated: false,
    hint: reasons[0] === "query_too_generic" ? HINTS.tooGeneric : HINTS.noOverlap,
    ...(capabilities ? { capabilities } : {}),
  };
}

export function buildResolveResponse(index: Ranker, args: { query: string; max_hits?: number }, ctx: ResponseContext): JsonObject {
  const { query, cut } = boundQuery(args.query);
  const maxHits = resolveMaxHits(args.max_hits);
  const termCount = index.termCount(query);
  const capabilities = capabilitiesOf(ctx);
  // The top match, up to max_hits alternatives, and deep enough to see the top's nearest rivals.
  const { matches, total } = index.rank(query, { limit: Math.max(maxHits + 2, ASSESS_DEPTH), explain: true, ...(ctx.filter ? { filter: ctx.filter } : {}) });
  const extra: ReasonCode[] = [...(cut ? (["query_truncated"] as const) : []), ...((ctx.pendingServers ?? 0) > 0 ? (["servers_pending"] as const) : [])];
  if (termCount === 0 && matches.length === 0) return noMatch(ctx.revision, query, ["query_too_generic", ...extra], capabilities);
  const top = matches[0];
  if (!top) return noMatch(ctx.revision, query, ["no_lexical_overlap", ...extra], capabilities);

  const assessOpts = { ...(ctx.pendingServers !== undefined ? { pendingServers: ctx.pendingServers } : {}), queryTruncated: cut };
  let assessment = assessRoute(matches, Math.max(termCount, 1), total, assessOpts);
  if (index.assessmentRanking) {
    // Hybrid: the evidence is lexical. Confident only when the fused top is the lexical top and the
    // lexical ranking alone would be confident about it.
    const lexical = index.assessmentRanking(query, { limit: Math.max(maxHits + 2, ASSESS_DEPTH), ...(ctx.filter ? { filter: ctx.filter } : {}) });
    const lexTop = lexical.matches[0];
    const agree = lexTop !== undefined && lexTop.entry.namespaced === top.entry.namespaced;
    const base = agree ? assessRoute(lexical.matches, Math.max(termCount, 1), lexical.total, assessOpts) : assessment;
    if (agree) assessment = { ...base, scoreGap: assessment.scoreGap };
    else {
      const reasons = assessment.reasonCodes.filter((r) => r !== "strong_coverage_and_margin" && r !== "clear_margin");
      reasons.push(lexTop ? "rankings_disagree" : "no_lexical_overlap");
      assessment = { ...assessment, status: "ambiguous", confidence: "low", reasonCodes: reasons };
    }
  }
  const shownTop = ctx.present?.(top.entry);
  const compactTop = compactMatch(top, { withScore: true, present: ctx.present });
  const template = argumentTemplate((shownTop?.entry ?? top.entry).inputSchema);
  const recommendation: JsonObject = {
    server: top.entry.server,
    tool: top.entry.tool,
    namespaced: top.entry.namespaced,
    title: compactTop["title"] ?? "",
    description: compactTop["description"] ?? "",
    server_description: compactTop["server_description"] ?? "",
    use_when: nullIfEmpty(compactTop["use_when"]),
    tool_use_when: nullIfEmpty(compactTop["tool_use_when"]),
    score: top.score,
    matched_terms: nullIfEmpty(compactTop["matched_terms"]),
    metadata_truncated: compactTop["metadata_truncated"] === true,
    required_fields: template.required_fields,
    argument_template: template.argument_template,
    argument_template_truncated: template.truncated,
    ...shownTop?.fields,
  };
  const rest = matches.slice(1, maxHits + 2);
  const { items: alternatives, byteLimited } = boundedMatches(rest, maxHits, { withScore: true, present: ctx.present });
  const ambiguous = assessment.status === "ambiguous";
  const weak = assessment.reasonCodes.includes("weak_coverage");
  const hint = weak ? HINTS.weak : ambiguous ? HINTS.ambiguous : template.truncated ? HINTS.templateBounded(top.entry.namespaced) : HINTS.ready;
  return {
    contract_version: CONTRACT_VERSION,
    catalog_revision: ctx.revision,
    status: assessment.status,
    confidence: assessment.confidence,
    reason_codes: assessment.reasonCodes,
    matched_fraction: assessment.matchedFraction,
    score_gap: assessment.scoreGap,
    query,
    recommendation,
    ambiguous,
    alternatives,
    alternatives_truncated: byteLimited || alternatives.length < total - 1,
    hint,
    ...(weak && capabilities ? { capabilities } : {}),
  };
}

export { BOUNDS };
