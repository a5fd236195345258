// Pure builders of the search_tools and resolve_tool JSON documents (reference §2.2, §2.4, §3.5,
// §3.6). The gateway validates argument types; these functions apply the contract's bounds,
// defaults and shapes, and never echo an oversized query.
import type { CatalogEntry, JsonObject, JsonValue } from "../types.js";
import { assessRoute } from "./assess.js";
import { BOUNDS, boundedMatches, compactMatch } from "./compact.js";
import type { RankedMatch, SearchIndex } from "./index.js";
import { argumentTemplate } from "./template.js";
import { utf8Bytes } from "../../util/text.js";

export const CONTRACT_VERSION = 1;
export const MAX_QUERY_BYTES = 2048;
export const MAX_QUERIES = 10;
export const SEARCH_DEFAULT_HITS = 20;
export const SEARCH_MAX_HITS = 100;
export const RESOLVE_DEFAULT_HITS = 5;
export const RESOLVE_MAX_HITS = 10;

const OVERSIZE: JsonObject = { error: `query exceeds ${MAX_QUERY_BYTES} bytes`, max_query_bytes: MAX_QUERY_BYTES };

const HINTS = {
  tooGeneric: "describe the goal, activity or capability you need in the query",
  noOverlap:
    "no tool matched these words — describe the capability differently, add use_when hints to the server, or browse with search_tools",
  ambiguous:
    "the recommendation is ambiguous — do not run it automatically; compare the alternatives, search with more specific intent or ask for direction, then read the full schema with describe_tool",
  templateBounded: (ns: string) => `the argument template was bounded — call describe_tool for ${ns} before calling it`,
  ready: "call call_tool with server + tool (or the namespaced name) and the argument_template filled in",
} as const;

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
  index: SearchIndex,
  args: { query?: string; queries?: string[]; max_hits?: number },
  ctx: { revision: string; filter?: (e: CatalogEntry) => boolean; all: CatalogEntry[] },
): JsonObject {
  const queries = [...(args.query !== undefined ? [args.query] : []), ...(args.queries ?? [])];
  if (queries.some((q) => utf8Bytes(q) > MAX_QUERY_BYTES)) return { ...OVERSIZE };
  if (queries.length > MAX_QUERIES) {
    return { error: `at most ${MAX_QUERIES} queries per search`, max_queries: MAX_QUERIES };
  }
  const maxHits = searchMaxHits(args.max_hits);
  const filter = ctx.filter;
  const opts = filter ? { filter } : {};
  const hasIntent = (q: string): boolean => index.termCount(q) > 0 || index.rank(q, { limit: 1, ...opts }).total > 0;

  let ranked: RankedMatch[];
  let count: number;
  if (!queries.some(hasIntent)) {
    // No intent at all (no query, empty, or only stopwords): list the in-scope catalogue by name, score 0.
    ranked = ctx.all
      .filter((e) => !filter || filter(e))
      .sort(byName)
      .map((entry) => ({ entry, score: 0, matchedTerms: [] }));
    count = ranked.length;
  } else if (queries.length === 1) {
    const r = index.rank(queries[0] ?? "", { limit: maxHits, ...opts });
    ranked = r.matches;
    count = r.total;
  } else {
    ranked = mergeRankings(queries.map((q) => index.search(q, opts)));
    count = ranked.length;
  }
  const { items, byteLimited } = boundedMatches(ranked, maxHits, { withScore: true });
  const out: JsonObject = { contract_version: CONTRACT_VERSION, catalog_revision: ctx.revision };
  if (args.query !== undefined && (args.queries === undefined || args.queries.length === 0)) out["query"] = args.query;
  out["count"] = count;
  out["returned"] = items.length;
  out["truncated"] = items.length < count;
  out["byte_limited"] = byteLimited;
  out["matches"] = items;
  return out;
}

function nullIfEmpty(list: JsonValue | undefined): JsonValue {
  return Array.isArray(list) && list.length > 0 ? list : null;
}

function noMatch(revision: string, query: string, reason: "query_too_generic" | "no_lexical_overlap"): JsonObject {
  return {
    contract_version: CONTRACT_VERSION,
    catalog_revision: revision,
    status: "no_match",
    confidence: "none",
    reason_codes: [reason],
    query,
    recommendation: null,
    ambiguous: false,
    alternatives: [],
    alternatives_truncated: false,
    hint: reason === "query_too_generic" ? HINTS.tooGeneric : HINTS.noOverlap,
  };
}

export function buildResolveResponse(
  index: SearchIndex,
  args: { query: string; max_hits?: number },
  ctx: { revision: string; filter?: (e: CatalogEntry) => boolean },
): JsonObject {
  const query = args.query;
  if (utf8Bytes(query) > MAX_QUERY_BYTES) return { ...OVERSIZE };
  const maxHits = resolveMaxHits(args.max_hits);
  const termCount = index.termCount(query);
  // The top match, up to max_hits alternatives, and one more to know whether any were left out.
  const { matches, total } = index.rank(query, { limit: maxHits + 2, ...(ctx.filter ? { filter: ctx.filter } : {}) });
  if (termCount === 0 && matches.length === 0) return noMatch(ctx.revision, query, "query_too_generic");
  const top = matches[0];
  if (!top) return noMatch(ctx.revision, query, "no_lexical_overlap");

  const assessment = assessRoute(matches, Math.max(termCount, 1), total);
  const compactTop = compactMatch(top, { withScore: true });
  const template = argumentTemplate(top.entry.inputSchema);
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
  };
  const rest = matches.slice(1);
  const { items: alternatives, byteLimited } = boundedMatches(rest, maxHits, { withScore: true });
  const ambiguous = assessment.status === "ambiguous";
  const hint = ambiguous ? HINTS.ambiguous : template.truncated ? HINTS.templateBounded(top.entry.namespaced) : HINTS.ready;
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
  };
}

export { BOUNDS };
