// Route assessment for resolve_tool: may a client run the top match without asking? A client such
// as local-agent runs a `confident` recommendation on its own, so a wrong `confident` is the most
// expensive answer the gateway can give (product decision 10: its precision on unseen requests is
// what we optimise, not the share of confident answers). The shape of the answer is the Go
// `assessRoute` contract (reference §3.6); the evidence rules are ours, designed on the tune half
// of bench/data (docs/discovery.md, "Calibrated confidence"):
//
//   covered   the query's content words (generic.ts drops words such as find/get/list/show that
//             say "return something" without saying what; a file's name and a quoted word are
//             values: FILE_NAME_WORDS, QUOTED_WORDS) are found in the recommended tool's own
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
import { isGenericStem } from "./text/generic.js";
import { PAYLOAD } from "./text/tokenize.js";
import { CONFIDENCE_MODEL, type ConceptEvidence, type RankedMatch } from "./index.js";

/** Below this, the top match rests on less than one solid hit (a moderately rare term in a description). */
export const WEAK_SCORE = 15;
/**
 * Share of the query's content words that the recommended tool (or its server) must hold for a
 * confident answer. Third calibration round (issue 23, bench/calibrate.ts): 0.6, chosen with the
 * sibling lead below by the selection rule fixed before the check half was looked at.
 */
export const COVERAGE = 0.6;
/** Below this share a best match is a weak one (search's weak_match, unavailable servers' bar). */
export const WEAK_MATCH_COVERAGE = 0.5;
/** A word counts as held when its best variant weighs at least this (the word or a synonym, not a prefix or typo). */
export const HELD_WEIGHT = 0.6;
/** Lead over the best tool of another server, as a share of the top score. */
export const OTHER_SERVER_GAP = 0.3;
/**
 * Content words (held as in HELD_WEIGHT) that the recommended tool's server text must hold as well.
 * Evidence from two fields written for different purposes (what the server is for, what the tool
 * does) agreeing is harder to get by coincidence than one tool's wording. The second round kept it
 * at 1 (precision 0.906 → 0.939 at share 0.325 → 0.301 on LiveMCPBench's tune half); the third,
 * with the tool-level ranking and a wider sibling lead, selected 0 (off): with coverage 0.6 and
 * the 0.35 sibling lead it removed no wrong answer on either tune set (docs/discovery.md,
 * "Calibration, third round"). The eighth round's selection, over every example-config tune half
 * pooled (the blind everyday-3 and -4 among them) and with no confident answer to an unservable
 * request on any tune half, turned it on again with the 0.25 sibling lead below: it is what keeps
 * "git diff" from being confidently `edit_file` ("returns a git-style diff"). A server with a
 * single tool is exempt when it is on.
 */
export const SERVER_HELD_MIN = 1;
/**
 * Lead over the next tool of the same server, as a share of the top score. Tools of one server
 * share its text, so on a small config (the example's 3 servers) the runner-up is usually a
 * sibling: the third round's selection (tune precision ≥ 0.95 on the example config and on
 * LiveMCPBench, largest example share) gave 0.35 (the second round's 0.2 let three wrong sibling
 * answers through on the example config's tune half). The eighth round's (tool-level signals that
 * separate siblings further, the server rule on) gave 0.25, at coverage 0.6: the rows at coverage
 * 0.5 ranked above it on the tune halves, and they made a two-word request with one word held
 * confident ("what time is it in Sydney" → get_file_info, in the e2e list of unservable
 * requests), so the selection keeps coverage at 0.6 or more (bench/calibrate.ts).
 */
export const SIBLING_GAP = 0.25;
/**
 * "Server-level text picks the server; the tool's own text decides within it": a confident tool
 * holds some of the request's object itself, not only its verb with the object in its server's
 * text ("run the unit tests" → a tool that runs a long operation, on a server tagged *testing*).
 * On: the tune halves could not tell it from off (it changes no tune answer), so the selection
 * rule's tie-break would have left it off; it is on as a safety rule (a confident answer to a
 * request nothing serves is the worst answer), see docs/discovery.md, "Calibration, third round".
 */
export const TOOL_OBJECT = true;
/**
 * Never confident for a request no configured tool serves (issue 23): such a request shares at
 * most a word or two with some tool, by coincidence, usually through a server's text or a word the
 * catalogue does not know. Positive evidence in the tool's own text is required (AssessRules).
 */
export const TOOL_EVIDENCE = true;
/**
 * The request's leading verb, when the catalogue knows it, must be held by the tool or agree with
 * its action (AssessRules.verbAgrees). Off. Meant for the requests nothing serves that come
 * closest (a served object with an action no tool takes); the tune halves hold none of them
 * confident, and on them the rule costs one right answer ("detect the beats in track.wav"). The
 * fifth round turned it on as a safety rule and measured it on the check halves (aggregates): one
 * right everyday answer fewer, and the one confident answer to an unservable example request
 * stayed; so it is off again (docs/discovery.md, "Fifth round").
 */
export const VERB_AGREES = false;
/**
 * Whether the words that only name a file ("draft" and "final" in "rename draft.md to final.md")
 * count as content words the tool must hold. No: what the request acts on is the file, and the
 * "file" concept a file reference adds (text/tokenize.ts searchTerms) stands for it; its name is a
 * value no tool's text can hold. Other values still count: with a person's name left out too,
 * "Text Tom that the standup moved to 4" (nothing serves it) was confidently move_file. Counted,
 * they kept "rename draft.md to final.md", "mkdir -p src/utils/helpers" and "when was index.html
 * created" below the coverage bar. Not counted: confident answers on the example config's tune
 * halves 105 → 132 at precision 0.971 → 0.955 (no unservable request confident), on its check
 * halves (the example requests, everyday to -6) 107 → 125 at 0.897 → 0.912; LiveMCPBench's
 * natural check half 46 → 50 at 0.978 → 0.980 (docs/discovery.md, "Ranking,
 * twelfth round"). A switch for tests and benches.
 */
export const FILE_NAME_WORDS = { counted: false };

/**
 * Whether a quoted word the catalogue does not know counts as a content word the tool must hold:
 * no, it is the literal the request gives ("save this as notes/ideas.md: '- dark mode - export to
 * csv'", "echo back 'testing 123'"), not a word about the tool. Ranking still reads it (leaving
 * quoted words out of the ranking cost MCP-Zero's descriptions 2 hit@1 on the check half).
 * Twelfth round: confident answers on the example config's tune halves 132 → 137 at precision
 * 0.955 → 0.956, on its check halves (the example requests, everyday to -6) 125 → 131 at 0.912 →
 * 0.916. Numbers and file extensions treated alike added as many wrong answers as right and are
 * counted. A switch for tests and benches.
 */
export const QUOTED_WORDS = { counted: false };

/**
 * Whether a word naming the tool's server ("delete Carol *from memory*", "anything *in memory*
 * about Lisbon") is left out of the request's object (TOOL_OBJECT) when the tool's own text does
 * not hold it: it says where the thing is, and the thing (Carol) is a name no tool holds. A
 * server name the tool holds stays its object ("find all the .ts *files*"). Fourteenth round of
 * issue 23: one right confident answer more on the example config's tune halves, none lost.
 */
export const SERVER_NAME_PLACE = { on: true };

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
  /**
   * The tool's own text must hold the request's object: a content word other than its leading verb,
   * when the request has one the catalogue knows (names and values it never mentions do not count).
   */
  toolObject: boolean;
  /**
   * Positive evidence: the tool's own text (name, title, description, fields, per-tool hints) holds
   * at least one content word of the request that the catalogue knows. Server text alone, or
   * words no tool mentions, never make an answer confident.
   */
  toolEvidence: boolean;
  /**
   * The request's leading verb, when the catalogue knows it, is held by the tool's own text or
   * agrees with the tool's action (signals/action.ts): "play some jazz" is not confidently a tool
   * whose only link to the request is its object.
   */
  verbAgrees: boolean;
  /**
   * Where the margin or coverage rules fall short, an answer is still confident when the calibrated
   * model (CONFIDENCE_MODEL in index.ts) gives it at least this probability of being right; above 1 = off.
   */
  modelThreshold: number;
}
export const ASSESS_RULES: Readonly<AssessRules> = {
  weakScore: WEAK_SCORE,
  coverage: COVERAGE,
  serverHeldMin: SERVER_HELD_MIN,
  otherServerGap: OTHER_SERVER_GAP,
  siblingGap: SIBLING_GAP,
  toolObject: TOOL_OBJECT,
  toolEvidence: TOOL_EVIDENCE,
  verbAgrees: VERB_AGREES,
  modelThreshold: CONFIDENCE_MODEL.threshold,
};

/** The calibrated model's inputs for one explained ranking head (see CONFIDENCE_MODEL). */
export interface ConfidenceFeatures {
  minLead: number;
  otherLead: number;
  toolShare: number;
  actionSeparates: number;
  logScore: number;
  /**
   * ln(1 + the number of tools indexed): scores and leads are read against IDFs of one catalogue,
   * and the same lead means less among 3,000 tools (many near-namesakes) than among 40.
   */
  logTools: number;
}

/** `catalogSize`: the tools in the index the ranking came from (SearchIndex.size()); 0 = unknown. */
export function confidenceFeatures(matches: readonly RankedMatch[], catalogSize = 0): ConfidenceFeatures | undefined {
  const top = matches[0];
  if (!top) return undefined;
  const server = top.entry.server;
  const other = lead(top.score, matches.find((m) => m.entry.server !== server)?.score ?? 0);
  const sibling = matches.find((m, i) => i > 0 && m.entry.server === server);
  const siblingLead = lead(top.score, sibling?.score ?? 0);
  const action = top.action ?? 0;
  return {
    minLead: Math.log(0.02 + Math.min(other, siblingLead)),
    otherLead: Math.log(0.02 + other),
    toolShare: contentCoverage(top.evidence).toolShare,
    actionSeparates: action > 0 && (sibling?.action ?? 0) < action ? 1 : 0,
    logScore: Math.log(1 + top.score),
    logTools: Math.log(1 + catalogSize),
  };
}

/** The model's probability that the top match is right (coefficients as CONFIDENCE_MODEL unless given). */
export function confidenceOf(f: ConfidenceFeatures, model: ConfidenceCoefficients = CONFIDENCE_MODEL): number {
  const z = model.bias + model.minLead * f.minLead + model.otherLead * f.otherLead + model.toolShare * f.toolShare + model.actionSeparates * f.actionSeparates + model.logScore * f.logScore + model.logTools * f.logTools;
  return 1 / (1 + Math.exp(-z));
}

/**
 * Whether the model may speak for this answer at all: positive evidence in the tool's own text,
 * the request's object held by the tool, its leading verb held or agreeing, no tie, above the weak
 * bar (the hard rules of assessRoute).
 */
export function modelEligible(matches: readonly RankedMatch[], rules: Readonly<AssessRules> = ASSESS_RULES): boolean {
  const top = matches[0];
  if (!top) return false;
  const c = contentCoverage(top.evidence);
  const gap = top.score - (matches[1]?.score ?? 0);
  const verbOk = !rules.verbAgrees || !c.verbMissing || (top.action ?? 0) > 0;
  return !c.generic && c.toolHeld > 0 && (!rules.toolObject || c.objectHeld) && verbOk && top.score >= rules.weakScore && gap > 0;
}

/** What the ranking alone does not know. */
export interface AssessOptions {
  /** Thresholds other than ASSESS_RULES (calibration sweeps only; the gateway uses the defaults). */
  rules?: Partial<AssessRules>;
  /** How many in-scope servers are still starting (their tools are not ranked yet). */
  pendingServers?: number;
  /** The query was cut to the byte limit before ranking. */
  queryTruncated?: boolean;
  /** Coefficients other than CONFIDENCE_MODEL (bench/calibrate.ts --fit only). */
  model?: ConfidenceCoefficients;
  /**
   * The tools in the index the ranking came from. The calibrated model reads it (its logTools
   * feature); without it (0 or absent) the model does not vouch: its probability was fitted with it.
   */
  catalogSize?: number;
}

export type ConfidenceCoefficients = Omit<typeof CONFIDENCE_MODEL, "threshold">;

function lead(top: number, next: number): number {
  return top > 0 ? (top - next) / top : 0;
}

/** The share of the query's content words the match holds, and whether it holds them all. */
export function contentCoverage(evidence: readonly ConceptEvidence[] | undefined): {
  share: number;
  content: number;
  generic: boolean;
  serverHeld: number;
  /** Whether the tool's own text holds the request's object (or it has none the catalogue knows). */
  objectHeld: boolean;
  /** Content words the catalogue knows that the tool's own text holds (positive evidence for the tool itself). */
  toolHeld: number;
  /** toolHeld over the content words the catalogue knows (0 when it knows none). */
  toolShare: number;
  /** Whether the request's leading verb is a word the catalogue knows that the tool's own text does not hold. */
  verbMissing: boolean;
} {
  if (!evidence || evidence.length === 0) return { share: 0, content: 0, generic: false, serverHeld: 0, objectHeld: false, toolHeld: 0, toolShare: 0, verbMissing: false };
  const content = evidence.filter((e) => !isGenericStem(e.stem) && (FILE_NAME_WORDS.counted || e.fileName !== true) && (QUOTED_WORDS.counted || e.quoted !== true || e.known) && (!PAYLOAD.known || e.payload !== true));
  if (content.length === 0) return { share: 0, content: 0, generic: true, serverHeld: 0, objectHeld: false, toolHeld: 0, toolShare: 0, verbMissing: false };
  const held = content.filter((e) => Math.max(e.tool, e.server) >= HELD_WEIGHT).length;
  const serverHeld = content.filter((e) => e.server >= HELD_WEIGHT).length;
  const objects = content.filter((e) => !e.verb && e.known && (!SERVER_NAME_PLACE.on || e.serverName !== true || e.tool >= HELD_WEIGHT));
  const objectHeld = objects.length === 0 || objects.some((e) => e.tool >= HELD_WEIGHT);
  const toolHeld = content.filter((e) => e.known && e.tool >= HELD_WEIGHT).length;
  const known = content.filter((e) => e.known).length;
  const verbMissing = content.some((e) => e.verb === true && e.known && e.tool < HELD_WEIGHT);
  return { share: held / content.length, content: content.length, generic: false, serverHeld, objectHeld, toolHeld, toolShare: known > 0 ? toolHeld / known : 0, verbMissing };
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
  const siblingBest = matches.find((m, i) => i > 0 && m.entry.server === server)?.score ?? 0;
  const otherLead = lead(top.score, otherBest);
  const siblingLead = lead(top.score, siblingBest);
  const coverage = contentCoverage(top.evidence);

  const tie = !single && gap === 0;
  const close = !tie && (otherLead < rules.otherServerGap || siblingLead < rules.siblingGap);
  // A server that holds none of the request's content words is weak evidence for its tool however
  // well the tool's own words match: the same reason code (reformulate with capability words).
  const serverDisagrees = top.serverTools !== 1 && coverage.serverHeld < rules.serverHeldMin;
  const objectMissing = rules.toolObject && !coverage.objectHeld;
  const noToolEvidence = rules.toolEvidence && coverage.toolHeld === 0;
  const verbDisagrees = rules.verbAgrees && coverage.verbMissing && (top.action ?? 0) <= 0;
  const weak = top.score < rules.weakScore || coverage.share < rules.coverage || serverDisagrees || objectMissing || noToolEvidence || verbDisagrees;
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
  // The calibrated model may vouch for an answer the margin or coverage thresholds find short;
  // never past a tie, a generic query, a pending server, a cut query or missing tool evidence.
  const vouched =
    (close || weak) && !tie && !low && !pending && !truncated && !coverage.generic && !noToolEvidence && !verbDisagrees && !serverDisagrees && !single &&
    rules.modelThreshold <= 1 && (opts.catalogSize ?? 0) > 0 && modelEligible(matches, rules) && confidenceOf(confidenceFeatures(matches, opts.catalogSize) as ConfidenceFeatures, opts.model) >= rules.modelThreshold;
  if (vouched) {
    reasons.splice(0, reasons.length, "clear_margin");
    return { status: "confident", confidence: "medium", reasonCodes: reasons, matchedFraction, scoreGap: gap };
  }
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
