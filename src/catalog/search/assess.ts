// Route assessment for resolve_tool: may a client run the top match without asking? A client such
// as local-agent runs a `confident` recommendation on its own, so a wrong `confident` is the most
// expensive answer the gateway can give (product decision 10: its precision on unseen requests is
// what we optimise, not the share of confident answers). The shape of the answer is the Go
// `assessRoute` contract (reference §3.6); the evidence rules are ours, designed on the tune half
// of bench/data (docs/discovery.md, "Calibrated confidence"):
//
//   covered   the query's content words (generic.ts drops words such as find/get/list/show that
//             say "return something" without saying what) are found in the recommended tool's own
//             text or its server's, as the word itself or a synonym, for at least COVERAGE of them
//   margin    the best tool of any other server scores at most (1 − OTHER_SERVER_GAP) × top
//   sibling   the next tool of the same server scores at most (1 − SIBLING_GAP) × top
//   settled   no server in scope is still starting (its tools could outrank this one)
//   whole     the query was not cut to fit the byte limit
//
// All of them → confident (high when every content word is covered and the margin is wide),
// otherwise ambiguous with a reason code per failed rule. The Go rules' weak-score, tie and
// low-matched-fraction checks stay as further reasons to be ambiguous.
import { isGenericStem } from "./generic.js";
import type { ConceptEvidence, RankedMatch } from "./index.js";

/** Below this, the top match rests on less than one solid hit (a moderately rare term in a description). */
export const WEAK_SCORE = 15;
/** Share of the query's content words that the recommended tool (or its server) must hold. */
export const COVERAGE = 0.5;
/** A word counts as held when its best variant weighs at least this (the word or a synonym, not a prefix or typo). */
export const HELD_WEIGHT = 0.6;
/** Lead over the best tool of another server, as a share of the top score. */
export const OTHER_SERVER_GAP = 0.3;
/** Lead over the next tool of the same server, as a share of the top score. */
export const SIBLING_GAP = 0.15;
/** A lead this wide, with every content word held, is `high` confidence. */
export const HIGH_GAP = 0.5;

export type RouteStatus = "confident" | "ambiguous" | "no_match";
export type Confidence = "high" | "medium" | "low" | "none";

export const REASON_CODES = [
  "single_candidate",
  "score_tie",
  "close_scores",
  "weak_coverage",
  "low_matched_fraction",
  "strong_coverage_and_margin",
  "clear_margin",
  "no_lexical_overlap",
  "query_too_generic",
  "query_truncated",
  "servers_pending",
  "rankings_disagree",
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export interface RouteAssessment {
  status: RouteStatus;
  confidence: Confidence;
  reasonCodes: ReasonCode[];
  matchedFraction: number;
  scoreGap: number;
}

/** What the ranking alone does not know. */
export interface AssessOptions {
  /** How many in-scope servers are still starting (their tools are not ranked yet). */
  pendingServers?: number;
  /** The query was cut to the byte limit before ranking. */
  queryTruncated?: boolean;
}

/** The share of the query's content words the match holds, and whether it holds them all. */
export function contentCoverage(evidence: readonly ConceptEvidence[] | undefined): { share: number; content: number; generic: boolean } {
  if (!evidence || evidence.length === 0) return { share: 0, content: 0, generic: false };
  const content = evidence.filter((e) => !isGenericStem(e.stem));
  if (content.length === 0) return { share: 0, content: 0, generic: true };
  const held = content.filter((e) => Math.max(e.tool, e.server) >= HELD_WEIGHT).length;
  return { share: held / content.length, content: content.length, generic: false };
}

/**
 * `matches` is the ranking's head, explained (rank with `explain: true`), at least a few deep so
 * the next tool of the top's server and of another server are seen; `total` counts all matches.
 */
export function assessRoute(matches: readonly RankedMatch[], termCount: number, total = matches.length, opts: AssessOptions = {}): RouteAssessment {
  const top = matches[0];
  if (!top) {
    const reasons: ReasonCode[] = ["no_lexical_overlap"];
    if ((opts.pendingServers ?? 0) > 0) reasons.push("servers_pending");
    return { status: "no_match", confidence: "none", reasonCodes: reasons, matchedFraction: 0, scoreGap: 0 };
  }
  const reasons: ReasonCode[] = [];
  const single = total === 1;
  const matched = top.matchedTerms.length;
  const mf = termCount > 0 ? matched / termCount : 0;
  const gap = single ? top.score : top.score - (matches[1]?.score ?? 0);
  if (single) reasons.push("single_candidate");

  const server = top.entry.server;
  const otherBest = matches.find((m) => m.entry.server !== server)?.score ?? 0;
  const siblingBest = matches.find((m, i) => i > 0 && m.entry.server === server)?.score ?? 0;
  const otherLead = top.score > 0 ? (top.score - otherBest) / top.score : 0;
  const siblingLead = top.score > 0 ? (top.score - siblingBest) / top.score : 0;
  const coverage = contentCoverage(top.evidence);

  const tie = !single && gap === 0;
  const close = !tie && (otherLead < OTHER_SERVER_GAP || siblingLead < SIBLING_GAP);
  const weak = top.score < WEAK_SCORE || coverage.share < COVERAGE;
  const low = termCount >= 8 && mf < 0.25;
  const pending = (opts.pendingServers ?? 0) > 0;
  const truncated = opts.queryTruncated === true;

  if (tie) reasons.push("score_tie");
  else if (close) reasons.push("close_scores");
  if (coverage.generic) reasons.push("query_too_generic");
  else if (weak) reasons.push("weak_coverage");
  if (low) reasons.push("low_matched_fraction");
  if (pending) reasons.push("servers_pending");
  if (truncated) reasons.push("query_truncated");

  const matchedFraction = Math.round(mf * 1000) / 1000;
  if (tie || close || weak || low || pending || truncated) {
    return { status: "ambiguous", confidence: "low", reasonCodes: reasons, matchedFraction, scoreGap: gap };
  }
  if (coverage.share >= 1 && otherLead >= HIGH_GAP) {
    reasons.push("strong_coverage_and_margin");
    return { status: "confident", confidence: "high", reasonCodes: reasons, matchedFraction, scoreGap: gap };
  }
  reasons.push("clear_margin");
  return { status: "confident", confidence: "medium", reasonCodes: reasons, matchedFraction, scoreGap: gap };
}
