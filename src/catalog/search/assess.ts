// Route assessment for resolve_tool: how sure the ranking is about its top match. The rules are
// the Go `assessRoute` rules (reference §3.6); the absolute floors are re-derived for this
// scorer's scale (ten points per unit of IDF-weighted evidence, see index.ts):
//   weak   = top score < WEAK_SCORE, or (T ≥ 4 and fewer than 2 terms matched)
//   low    = T ≥ 8 and matched fraction < 0.25
//   tie    = more than one match and gap == 0
//   close  = more than one match and gap ≤ max(CLOSE_FLOOR, top/10)
// Any of these → ambiguous/low. Otherwise confident: high when mf ≥ 0.6 and (single match or
// gap ≥ max(HIGH_GAP_FLOOR, top/4)), else medium.
import type { RankedMatch } from "./index.js";

/** Below this, the top match rests on less than one solid hit (a moderately rare term in a description). */
export const WEAK_SCORE = 15;
/** Half a unit of evidence: a gap this small is noise on this scale. */
export const CLOSE_FLOOR = 5;
/** Two units of evidence: a lead this large is a real margin. */
export const HIGH_GAP_FLOOR = 20;

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
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export interface RouteAssessment {
  status: RouteStatus;
  confidence: Confidence;
  reasonCodes: ReasonCode[];
  matchedFraction: number;
  scoreGap: number;
}

/** `matches` is the ranking's head (at least two when there are two); `total` counts all matches. */
export function assessRoute(matches: readonly RankedMatch[], termCount: number, total = matches.length): RouteAssessment {
  const top = matches[0];
  if (!top) return { status: "no_match", confidence: "none", reasonCodes: ["no_lexical_overlap"], matchedFraction: 0, scoreGap: 0 };
  const reasons: ReasonCode[] = [];
  const single = total === 1;
  const matched = top.matchedTerms.length;
  const mf = termCount > 0 ? matched / termCount : 0;
  let gap: number;
  if (single) {
    gap = top.score;
    reasons.push("single_candidate");
  } else {
    gap = top.score - (matches[1]?.score ?? 0);
  }
  const weak = top.score < WEAK_SCORE || (termCount >= 4 && matched < 2);
  const low = termCount >= 8 && mf < 0.25;
  const tie = !single && gap === 0;
  const close = !single && gap <= Math.max(CLOSE_FLOOR, Math.trunc(top.score / 10));

  if (tie) reasons.push("score_tie");
  else if (close) reasons.push("close_scores");
  if (weak) reasons.push("weak_coverage");
  if (low) reasons.push("low_matched_fraction");

  const matchedFraction = Math.round(mf * 1000) / 1000;
  if (weak || low || tie || close) {
    return { status: "ambiguous", confidence: "low", reasonCodes: reasons, matchedFraction, scoreGap: gap };
  }
  if (mf >= 0.6 && (single || gap >= Math.max(HIGH_GAP_FLOOR, Math.trunc(top.score / 4)))) {
    reasons.push("strong_coverage_and_margin");
    return { status: "confident", confidence: "high", reasonCodes: reasons, matchedFraction, scoreGap: gap };
  }
  reasons.push("clear_margin");
  return { status: "confident", confidence: "medium", reasonCodes: reasons, matchedFraction, scoreGap: gap };
}
