// Pure builders of the search_tools and resolve_tool JSON documents (reference §2.2, §2.4, §3.5,
// §3.6). The gateway validates argument types; these functions apply the contract's bounds,
// defaults and shapes. Every query gets a contract-v1 document: an oversized query is cut to the
// byte limit (with reason code `query_truncated`), never refused and never echoed whole.
//
// The answers are read by a model on every discovery step, so they say each thing once: a match
// carries what is its own (compact.ts), its server's metadata and state sit once in `servers`,
// and the hint says the one next step. The contract-v1 fields local-agent reads (reference §12)
// are all kept.
import type { CatalogEntry, JsonObject } from "../types.js";
import { assessRoute, contentCoverage, WEAK_SCORE, WEAK_MATCH_COVERAGE, OTHER_SERVER_GAP, type ReasonCode, type RouteAssessment } from "./assess.js";
import { BOUNDS, boundedMatches, compactMatch, serversOf, type Presenter } from "./compact.js";
import type { RankedMatch, Ranking, RankOptions } from "./index.js";
import { argumentTemplate } from "./template.js";
import { truncateUtf8, utf8Bytes } from "../../util/text.js";

/** What the response builders rank with: the lexical index, or the hybrid ranker (fusion.ts). */
export interface Ranker {
  termCount(query: string): number;
  rank(query: string, opts: RankOptions): Ranking;
  /** The tools indexed, whose IDFs the scores are read against (the calibrated confidence reads it). */
  size?(): number;
  /**
   * The ranking resolve's assessment reads, when it is not the ranking itself (hybrid: the lexical
   * one, which carries the evidence of which words each tool holds).
   */
  assessmentRanking?(query: string, opts: Omit<RankOptions, "explain">): Ranking;
}

/** Why a server cannot serve now, and what fixes it (from the gateway's view of its servers). */
export interface ServerUnavailable {
  /** `failed`, `needs_auth`, `locked`, `disabled`, ... */
  state: string;
  reason?: string;
  /** What an operator or the user does about it (`mcphub auth login X`, ...). */
  fix?: string;
}

/** The servers that cannot serve now and whose tools are not in the main ranking. */
export interface OfflineServers {
  /** Their cached tools, and for a server whose tools are unknown a profile of its routing metadata. */
  ranker: Ranker;
  /** Whether an entry of `ranker` is a server profile, not a tool. */
  isProfile(entry: CatalogEntry): boolean;
}

/** Context shared by both builders. */
export interface ResponseContext {
  revision: string;
  filter?: (e: CatalogEntry) => boolean;
  /** In-scope servers still starting: resolve is never confident (or no_match) while any is. */
  pendingServers?: number;
  /** The in-scope servers' one-line capability hints (summary.ts capabilityHints), for weak and no-match answers. */
  capabilities?: { hints: Record<string, string>; more: number };
  /** How each match is shown to the agent asking (see compact.ts); ranking is not affected. */
  present?: Presenter;
  /** Entries that win ties (the agent's pins): never more than a tie. */
  prefer?: (e: CatalogEntry) => boolean;
  /** A server that cannot serve now: its state, reason and fix (undefined for a server that can). */
  unavailable?: (server: string) => ServerUnavailable | undefined;
  /** Unavailable servers whose tools are not in the main ranking, ranked on their own. */
  offline?: OfflineServers;
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

/** The capability hints embedded in a weak or no-match answer stay within this many bytes. */
export const CAPABILITIES_MAX_BYTES = 1024;

export const SERVER_UNAVAILABLE = "server_unavailable";
/** Tools of an unavailable server an answer shows (search) or names (resolve's `unavailable`). */
const OFFLINE_SHOWN = 3;

const HINTS = {
  tooGeneric: "say what you want done (the goal, activity or capability) in the query; capabilities lists what each server does",
  noOverlap: "no tool matched these words: rephrase with the capability words in capabilities, or browse with search_tools",
  ambiguous: "ambiguous: don't auto-run it; compare the alternatives, search more specifically, or ask the user",
  templateBounded: (ns: string) => `the template was bounded: call describe_tool for ${ns} before calling it`,
  ready: (ns: string) => `fill the placeholders of argument_template and call call_tool with tool ${ns}; describe_tool shows its full schema`,
  weak: "weak match: don't auto-run it; rephrase with what the servers do, or try search_tools",
  weakSearch: "weak matches: rephrase with what the servers do (servers, capabilities)",
  search: "describe_tool shows a tool's full description and schema; call_tool runs it",
} as const;

/**
 * What the hint says about a server that cannot serve now: its state and the fix (the reason is in
 * the answer's `servers` or `unavailable` entry for it, once).
 */
function unavailableText(server: string, u: ServerUnavailable): string {
  return `server ${server} is ${u.state.replace(/_/g, " ")}${u.fix ? `; fix: ${u.fix}` : ""}`;
}

/** Cuts a query to the byte limit (at a code-point boundary); `cut` says whether it was. */
export function boundQuery(query: string): { query: string; cut: boolean } {
  if (utf8Bytes(query) <= MAX_QUERY_BYTES) return { query, cut: false };
  return { query: truncateUtf8(query, MAX_QUERY_BYTES), cut: true };
}

/** Whether the top match's own text holds none of the request's content words that the catalogue knows. */
function strayTop(top: RankedMatch): boolean {
  const c = contentCoverage(top.evidence);
  return !c.generic && c.toolHeld === 0;
}

/** Whether a ranking's best match is weak: nothing, too little evidence, or too few content words held. */
function weakTop(top: RankedMatch | undefined): boolean {
  if (!top) return true;
  if (top.score < WEAK_SCORE) return true;
  const coverage = contentCoverage(top.evidence);
  return !coverage.generic && coverage.share < WEAK_MATCH_COVERAGE;
}

/**
 * The capability hints as answer fields (`capabilities`, and `capabilities_more` when some did not
 * fit), leaving out servers the answer's `servers` block already describes.
 */
function capabilityFields(ctx: ResponseContext, described: JsonObject = {}): JsonObject {
  const c = ctx.capabilities;
  if (!c) return {};
  const hints = Object.fromEntries(Object.entries(c.hints).filter(([name]) => !Object.prototype.hasOwnProperty.call(described, name)));
  if (Object.keys(hints).length + c.more === 0) return {};
  return { ...(Object.keys(hints).length > 0 ? { capabilities: hints } : {}), ...(c.more > 0 ? { capabilities_more: `${c.more} more servers: call list_servers` } : {}) };
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

function rankOptions(ctx: ResponseContext): Omit<RankOptions, "limit"> {
  return { ...(ctx.filter ? { filter: ctx.filter } : {}), ...(ctx.prefer ? { prefer: ctx.prefer } : {}) };
}

/**
 * The unavailable servers whose tools (or routing metadata) hold the query's content words as well
 * as the best available tool does (at least WEAK_MATCH_COVERAGE of them, and no fewer than the best available
 * tool unless that one is weak). Scores are not compared: the offline ranking is a separate index
 * over a handful of servers, whose IDF is not the catalogue's.
 */
function offlineMatches(ctx: ResponseContext, query: string, top: RankedMatch | undefined): { tools: RankedMatch[]; servers: string[] } {
  if (!ctx.offline) return { tools: [], servers: [] };
  const ranked = ctx.offline.ranker.rank(query, { limit: ASSESS_DEPTH, explain: true });
  const bar = top && !weakTop(top) ? contentCoverage(top.evidence).share : 0;
  // A word counts against an offline server only when some catalogue knows it: the offline
  // ranking's vocabulary is a few servers' text, and names and values ("Paris") are no capability.
  const knownMain = (top?.evidence ?? []).map((e) => e.known);
  const close = ranked.matches.filter((m) => {
    const evidence = (m.evidence ?? []).filter((e, i) => Math.max(e.tool, e.server) > 0 || e.known || knownMain[i] === true);
    const c = contentCoverage(evidence);
    return !c.generic && c.content > 0 && c.share >= WEAK_MATCH_COVERAGE && c.share >= bar;
  });
  const servers: string[] = [];
  for (const m of close) if (!servers.includes(m.entry.server)) servers.push(m.entry.server);
  return { tools: close.filter((m) => !ctx.offline?.isProfile(m.entry)), servers };
}

/** The `unavailable` list: each server that cannot serve now, with its state, reason, fix and matching tools. */
function unavailableList(ctx: ResponseContext, servers: readonly string[], tools: readonly RankedMatch[] = []): JsonObject[] {
  const out: JsonObject[] = [];
  for (const server of servers) {
    const u = ctx.unavailable?.(server);
    const names = tools.filter((m) => m.entry.server === server).slice(0, OFFLINE_SHOWN).map((m) => m.entry.namespaced);
    if (u) out.push({ server, state: u.state, ...(u.reason ? { reason: u.reason } : {}), ...(u.fix ? { fix: u.fix } : {}), ...(names.length > 0 ? { tools: names } : {}) });
  }
  return out;
}

function stateNote(ctx: ResponseContext): (server: string) => JsonObject | undefined {
  return (server) => {
    const u = ctx.unavailable?.(server);
    return u ? { state: u.state, ...(u.reason ? { reason: u.reason } : {}), ...(u.fix ? { fix: u.fix } : {}) } : undefined;
  };
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
  const opts = rankOptions(ctx);
  const hasIntent = (q: string): boolean => index.termCount(q) > 0 || index.rank(q, { limit: 1, ...opts }).total > 0;

  let ranked: RankedMatch[];
  let count: number;
  let weak = false;
  let offline: { tools: RankedMatch[]; servers: string[] } = { tools: [], servers: [] };
  if (!queries.some(hasIntent)) {
    // No intent at all (no query, empty, or only stopwords): list the in-scope catalogue by name, score 0.
    ranked = ctx.all
      .filter((e) => !filter || filter(e))
      .sort(byName)
      .map((entry) => ({ entry, score: 0, matchedTerms: [] }));
    count = ranked.length;
  } else if (queries.length === 1) {
    const query = queries[0] ?? "";
    const r = index.rank(query, { limit: maxHits, explain: true, ...opts });
    offline = offlineMatches(ctx, query, r.matches[0]);
    // Tools of a server that cannot serve now stay findable, marked in `servers`: up to three of
    // them close the list (their scores come from another index and are not comparable).
    const shownOffline = offline.tools.slice(0, Math.min(OFFLINE_SHOWN, maxHits));
    ranked = [...r.matches.slice(0, maxHits - shownOffline.length), ...shownOffline];
    count = r.total + offline.tools.length;
    weak = weakTop(r.matches[0]) && offline.tools.length === 0;
  } else {
    const rankings = queries.map((q) => index.rank(q, { limit: Number.POSITIVE_INFINITY, explain: false, ...opts }).matches);
    ranked = mergeRankings(rankings);
    count = ranked.length;
    weak = queries.every((q) => weakTop(index.rank(q, { limit: 1, explain: true, ...opts }).matches[0]));
  }
  const { items, kept: shown, byteLimited } = boundedMatches(ranked, maxHits, { withScore: true, present: ctx.present });
  const out: JsonObject = { contract_version: CONTRACT_VERSION, catalog_revision: ctx.revision };
  if (args.query !== undefined && (args.queries === undefined || args.queries.length === 0)) out["query"] = queries[0] ?? "";
  out["count"] = count;
  out["returned"] = items.length;
  out["truncated"] = items.length < count;
  out["byte_limited"] = byteLimited;
  out["matches"] = items;
  const servers = serversOf(
    shown.map((m) => m.entry),
    { withUseWhen: true, note: stateNote(ctx) },
  );
  if (Object.keys(servers).length > 0) out["servers"] = servers;
  const unavailable = unavailableList(
    ctx,
    offline.servers.filter((s) => !shown.some((m) => m.entry.server === s)),
  );
  if (unavailable.length > 0) out["unavailable"] = unavailable;
  if (reasons.length > 0) out["reason_codes"] = reasons;
  if (weak) {
    out["weak_match"] = true;
    Object.assign(out, capabilityFields(ctx, servers));
  }
  const first = unavailable[0];
  out["hint"] = first
    ? `${unavailableText(String(first["server"]), first as unknown as ServerUnavailable)}; it may hold what you asked for`
    : weak
      ? HINTS.weakSearch
      : HINTS.search;
  return out;
}

function noMatch(revision: string, query: string, reasons: ReasonCode[], ctx: ResponseContext, unavailable: JsonObject[]): JsonObject {
  const first = unavailable[0];
  return {
    contract_version: CONTRACT_VERSION,
    catalog_revision: revision,
    status: "no_match",
    confidence: "none",
    reason_codes: unavailable.length > 0 ? [...reasons, SERVER_UNAVAILABLE] : reasons,
    query,
    recommendation: null,
    ambiguous: false,
    alternatives: [],
    alternatives_truncated: false,
    ...(unavailable.length > 0 ? { unavailable } : {}),
    hint: first
      ? `no available tool matches, and ${unavailableText(String(first["server"]), first as unknown as ServerUnavailable)}: it may serve this; resolve again once it is fixed`
      : reasons[0] === "query_too_generic"
        ? HINTS.tooGeneric
        : HINTS.noOverlap,
    ...capabilityFields(ctx, Object.fromEntries(unavailable.map((u) => [String(u["server"]), u]))),
  };
}

/** Turns a confident assessment ambiguous for a stated reason (the reason codes keep their order). */
function notConfident(a: RouteAssessment, code: ReasonCode): RouteAssessment {
  if (a.reasonCodes.includes(code)) return a;
  const reasons = a.reasonCodes.filter((r) => r !== "strong_coverage_and_margin" && r !== "clear_margin");
  return { ...a, status: "ambiguous", confidence: "low", reasonCodes: [...reasons, code] };
}

export function buildResolveResponse(index: Ranker, args: { query: string; max_hits?: number }, ctx: ResponseContext): JsonObject {
  const { query, cut } = boundQuery(args.query);
  const maxHits = resolveMaxHits(args.max_hits);
  const termCount = index.termCount(query);
  const opts = rankOptions(ctx);
  // The top match, up to max_hits alternatives, and deep enough to see the top's nearest rivals.
  const { matches, total } = index.rank(query, { limit: Math.max(maxHits + 2, ASSESS_DEPTH), explain: true, ...opts });
  const extra: ReasonCode[] = [...(cut ? (["query_truncated"] as const) : []), ...((ctx.pendingServers ?? 0) > 0 ? (["servers_pending"] as const) : [])];
  const top = matches[0];
  const offline = offlineMatches(ctx, query, top);
  const offlineServers = unavailableList(ctx, offline.servers, offline.tools);
  if (termCount === 0 && matches.length === 0) return noMatch(ctx.revision, query, ["query_too_generic", ...extra], ctx, offlineServers);
  if (!top) return noMatch(ctx.revision, query, ["no_lexical_overlap", ...extra], ctx, offlineServers);

  const assessOpts = { ...(ctx.pendingServers !== undefined ? { pendingServers: ctx.pendingServers } : {}), queryTruncated: cut, catalogSize: index.size?.() ?? 0 };
  let assessment = assessRoute(matches, Math.max(termCount, 1), total, assessOpts);
  if (index.assessmentRanking) {
    // Hybrid: the evidence is lexical. Confident only when the fused top is the lexical top and the
    // lexical ranking alone would be confident about it.
    const lexical = index.assessmentRanking(query, { limit: Math.max(maxHits + 2, ASSESS_DEPTH), ...opts });
    const lexTop = lexical.matches[0];
    const agree = lexTop !== undefined && lexTop.entry.namespaced === top.entry.namespaced;
    const base = agree ? assessRoute(lexical.matches, Math.max(termCount, 1), lexical.total, assessOpts) : assessment;
    if (agree) assessment = { ...base, scoreGap: assessment.scoreGap };
    else assessment = notConfident(assessment, lexTop ? "rankings_disagree" : "no_lexical_overlap");
  }
  // A recommendation whose server cannot serve now, or an unavailable server that may serve the
  // request as well, is never confident: the hint names the server and the fix.
  const topDown = ctx.unavailable?.(top.entry.server);
  if (topDown || offlineServers.length > 0) assessment = notConfident(assessment, SERVER_UNAVAILABLE);

  const shownTop = ctx.present?.(top.entry);
  const compactTop = compactMatch(top, { withScore: true, present: ctx.present, descriptionBytes: BOUNDS.recommendation, firstSentence: true });
  const template = argumentTemplate((shownTop?.entry ?? top.entry).inputSchema);
  const recommendation: JsonObject = {
    server: top.entry.server,
    tool: top.entry.tool,
    namespaced: top.entry.namespaced,
    ...(compactTop["title"] !== undefined ? { title: compactTop["title"] } : {}),
    description: compactTop["description"] ?? "",
    ...(compactTop["tool_use_when"] !== undefined ? { tool_use_when: compactTop["tool_use_when"] } : {}),
    score: top.score,
    ...(compactTop["matched_terms"] !== undefined ? { matched_terms: compactTop["matched_terms"] } : {}),
    metadata_truncated: compactTop["metadata_truncated"] === true,
    required_fields: template.required_fields,
    argument_template: template.argument_template,
    ...(template.optional_fields.length > 0 ? { optional_fields: template.optional_fields } : {}),
    argument_template_truncated: template.truncated,
    ...shownTop?.fields,
  };
  const rest = matches.slice(1, maxHits + 2);
  const { items: alternatives, kept, byteLimited } = boundedMatches(rest, maxHits, {
    withScore: true,
    present: ctx.present,
    descriptionBytes: BOUNDS.alternative,
    firstSentence: true,
    brief: true,
    // The alternatives a model must weigh against the recommendation are the close ones (the
    // other-server margin of the assessment); those far behind are named, not described.
    describeFrom: (1 - OTHER_SERVER_GAP) * top.score,
  });
  const ambiguous = assessment.status === "ambiguous";
  const weak = assessment.reasonCodes.includes("weak_coverage");
  const firstOffline = offlineServers[0];
  const hint = topDown
    ? `do not call ${top.entry.namespaced} now: ${unavailableText(top.entry.server, topDown)}`
    : firstOffline
      ? `${unavailableText(String(firstOffline["server"]), firstOffline as unknown as ServerUnavailable)}, and it may serve this better: do not run the recommendation automatically; fix it and resolve again, or compare the alternatives`
      : weak
        ? HINTS.weak
        : ambiguous
          ? HINTS.ambiguous
          : template.truncated
            ? HINTS.templateBounded(top.entry.namespaced)
            : HINTS.ready(top.entry.namespaced);
  const servers = serversOf([top.entry, ...kept.map((m) => m.entry)], { withUseWhen: false, note: stateNote(ctx) });
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
    ...(Object.keys(servers).length > 0 ? { servers } : {}),
    ...(offlineServers.length > 0 ? { unavailable: offlineServers } : {}),
    hint,
    // What the other servers do, where the top's own text holds no word of the request that the
    // catalogue knows (the request may be another server's, or no one's: "book a flight to Rome").
    // A weak match that holds some of them needs no map of the rest: 200-odd bytes on most answers.
    ...(weak && strayTop(top) ? capabilityFields(ctx, servers) : {}),
  };
}

export { BOUNDS };
