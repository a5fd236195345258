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
//   server    the recommended tool's server text (its name, description, use_when, tags and the
//             names of its tools) holds at least SERVER_HELD_MIN of those content words too: the
//             tool's own text and its server's text agree that the request is in that server's
//             field, not one tool's wording alone (a feedback form's "email" for "type my email
//             into the form field"); a server with a single tool is exempt (its text is that
//             tool's: there is no second, independent field to agree)
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
/**
 * Content words (held as in HELD_WEIGHT) that the recommended tool's server text must hold as well.
 * Evidence from two fields written for different purposes (what the server is for, what the tool
 * does) agreeing is harder to get by coincidence than one tool's wording. Measured on the tune half
 * of the natural requests over LiveMCPBench: precision 0.906 → 0.939 at share 0.325 → 0.301
 * (docs/discovery.md, "Calibration"). Cost: queries in a script the servers' texts do not use
 * (CJK requests to English-described servers) are no longer confident. A server with a single tool
 * is exempt: its tool names are that tool's name and its description usually that tool's, so the
 * rule would only ask the same text twice (and the risk it guards against, one tool among many
 * sharing a word by chance, needs many tools).
 */
export const SERVER_HELD_MIN = 1;
/**
 * Lead over the next tool of the same server, as a share of the top score. Calibrated on the tune
 * half to a precision target of 0.95 (a margin of 5 points over the 0.90 the check half must
 * reach; the tune → check drop was 2–6 points in the previous round) with at least a quarter of
 * requests confident: the loosest value that reaches it with SERVER_HELD_MIN (0.15 gives 0.939).
 */
export const SIBLING_GAP = 0.2;
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
  "server_unavailable",
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export interface RouteAssessment {
  status: RouteStatus;
  confidence: Confidence;
  reasonCodes: ReasonCode[];
  matchedFraction: number;
  scoreGap: number;
}

/** The thresholds of the rules above, by name (the benchmarks' calibration sweeps them). */
export interface AssessRules {
  weakScore: number;
  coverage: number;
  serverHeldMin: number;
  otherServerGap: number;
  siblingGap: number;
  /** Count coverage over the words the catalogue holds somewhere only (names and values left out). */
  knownOnly: boolean;
  /** The tool's own text must hold a content word at least this well (0 = no such rule). */
  toolWord: number;
  /** The sibling lead compares the tools' own evidence (RankedMatch.own), not their whole scores. */
  siblingOwn: boolean;
  /** The server rule reads the server's own metadata only, not the names of its tools. */
  serverMeta: boolean;
}
export const ASSESS_RULES: Readonly<AssessRules> = {
  weakScore: WEAK_SCORE,
  coverage: COVERAGE,
  serverHeldMin: SERVER_HELD_MIN,
  otherServerGap: OTHER_SERVER_GAP,
  siblingGap: SIBLING_GAP,
  knownOnly: false,
  toolWord: 0,
  siblingOwn: false,
  serverMeta: false,
};

/** What the ranking alone does not know. */
export interface AssessOptions {
  /** Thresholds other than ASSESS_RULES (calibration sweeps only; the gateway uses the defaults). */
  rules?: Partial<AssessRules>;
  /** How many in-scope servers are still starting (their tools are not ranked yet). */
  pendingServers?: number;
  /** The query was cut to the byte limit before ranking. */
  queryTruncated?: boolean;
}

function lead(top: number, next: number): number {
  return top > 0 ? (top - next) / top : 0;
}

/** The share of the query's content words the match holds, and whether it holds them all. */
export function contentCoverage(
  evidence: readonly ConceptEvidence[] | undefined,
  knownOnly = false,
  serverMeta = false,
): { share: number; content: number; generic: boolean; serverHeld: number; toolBest: number } {
  if (!evidence || evidence.length === 0) return { share: 0, content: 0, generic: false, serverHeld: 0, toolBest: 0 };
  const all = evidence.filter((e) => !isGenericStem(e.stem));
  if (all.length === 0) return { share: 0, content: 0, generic: true, serverHeld: 0, toolBest: 0 };
  const known = knownOnly ? all.filter((e) => e.known) : all;
  const content = known.length > 0 ? known : all;
  const held = content.filter((e) => Math.max(e.tool, e.server) >= HELD_WEIGHT).length;
  const serverHeld = content.filter((e) => (serverMeta ? e.meta : e.server) >= HELD_WEIGHT).length;
  const toolBest = Math.max(0, ...content.map((e) => e.tool));
  return { share: held / content.length, content: content.length, generic: false, serverHeld, toolBest };
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
  const rules = { ...ASSESS_RULES, ...opts.rules };
  const reasons: ReasonCode[] = [];
  const single = total === 1;
  const matched = top.matchedTerms.length;
  const mf = termCount > 0 ? matched / termCount : 0;
  const gap = single ? top.score : top.score - (matches[1]?.score ?? 0);
  if (single) reasons.push("single_candidate");

  const server = top.entry.server;
  const otherBest = matches.find((m) => m.entry.server !== server)?.score ?? 0;
  const sibling = matches.find((m, i) => i > 0 && m.entry.server === server);
  const otherLead = top.score > 0 ? (top.score - otherBest) / top.score : 0;
  const siblingLead = rules.siblingOwn && top.own !== undefined ? lead(top.own, sibling?.own ?? 0) : lead(top.score, sibling?.score ?? 0);
  const coverage = contentCoverage(top.evidence, rules.knownOnly, rules.serverMeta);

  const tie = !single && gap === 0;
  const close = !tie && (otherLead < rules.otherServerGap || siblingLead < rules.siblingGap);
  // A server that holds none of the request's content words is weak evidence for its tool however
  // well the tool's own words match: the same reason code (reformulate with capability words).
  const serverDisagrees = top.serverTools !== 1 && coverage.serverHeld < rules.serverHeldMin;
  const toolSilent = rules.toolWord > 0 && coverage.toolBest < rules.toolWord;
  const weak = top.score < rules.weakScore || coverage.share < rules.coverage || serverDisagrees || toolSilent;
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
