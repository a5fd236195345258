// Search and ranking of the catalogue (this folder): the index below, the tool-level ranking
// signals (signals/: action agreement, deprecation), hybrid fusion with the dense ranking
// (fusion.ts, dense.ts), resolve assessment (assess.ts), the response documents (responses.ts,
// compact.ts, template.ts, pending.ts, summary.ts), and the language side (text/).
//
// The search index over the in-scope catalogue: an inverted index of stems with a BM25F-style
// scorer (field weights, length normalisation against fixed reference lengths, tf saturation,
// IDF), query-side synonym expansion, prefix and one-edit typo matching, a phrase bonus and an
// exact-name fast path. Evidence comes from the tool itself and from its server (fields.ts).
// Entries are grouped by server so that a tools/list change on one server re-indexes only that
// server's entries.
//
// Scores are integers (ten points per unit of IDF-weighted evidence) so they are stable to print,
// compare and break ties on; see docs/discovery.md for the scale and the resolve thresholds.
import type { CatalogEntry } from "../types.js";
import { SERVER_FIELDS, TOOL_FIELDS, type FieldSpec } from "./fields.js";
import { boilerplateOf, withoutBoilerplate } from "./boilerplate.js";
import { mediaKindOf } from "./text/media.js";
import { readCommands } from "./text/commands.js";
import { askedAttributes } from "./signals/attribute.js";
import { synonymsOf } from "./text/lexicon.js";
import { wordnet } from "./text/wordnet.js";
import { stem as stemWord } from "./text/stem.js";
import { fileReferences, foldText, indexTerms, MAX_QUERY_TERMS, namesFolder, properNameMentions, queryTerms as queryTermsOf, searchTerms, words, type FileReference, type NameMention, type Term } from "./text/tokenize.js";
import { truncateUtf8 } from "../../util/text.js";
import { Vocabulary } from "./vocabulary.js";
import { isStopword } from "./text/stopwords.js";
import { addTo, removeFrom } from "../../util/multimap.js";
import { ACTION, ActionIndex, directObject, isDeprecated, isQuestion, queryActions, replacementOf, requestVerbs, type QueryAction, defaultQuantity, requestQuantity, severalPlurals, toolActions, toolTakesSeveral } from "./signals/index.js";

export interface RankedMatch {
  entry: CatalogEntry;
  score: number;
  matchedTerms: string[];
  /** Per query concept, how well this match's own text and its server's text hold it (with `explain`). */
  evidence?: ConceptEvidence[];
  /** How many tools the match's server has in the index (with `explain`; resolve's server-agreement rule reads it). */
  serverTools?: number;
  /** Action agreement of the tool with the request, in [−1, 1] (with `explain`; 0 = no related action). */
  action?: number;
}

/**
 * How one query concept is found in one match: the weight of the best variant (1 = the word
 * itself, less for a synonym, prefix or typo; 0 = absent) in the tool's own fields and in its
 * server's fields. Resolve's assessment reads it to tell real coverage from a lucky prefix.
 */
export interface ConceptEvidence {
  /** The concept's first word, as in matched_terms. */
  word: string;
  stem: string;
  tool: number;
  server: number;
  /** Whether the catalogue holds the concept's own word anywhere (else it is likely a name or a value). */
  known: boolean;
  /** Whether the concept is the request's leading verb (its action, signals/action.ts), not its object. */
  verb?: boolean;
  /** Whether the concept's words only name a file (Term.fileName): what the request acts on is the file, which the "file" concept stands for. */
  fileName?: boolean;
  /** Whether the request quotes the concept's words (Term.quoted). */
  quoted?: boolean;
  /** Whether the concept's words are the request's payload (Term.payload). */
  payload?: boolean;
  /** Whether the concept's words are the tool's server's name ("delete Carol from memory"): they say where, not what. */
  serverName?: boolean;
}

export interface SearchOptions {
  maxHits?: number;
  filter?: (e: CatalogEntry) => boolean;
  /** Entries that win ties (pinned tools): between two equal scores, a preferred one first. Never more. */
  prefer?: (e: CatalogEntry) => boolean;
}

/** What rank() takes: the result size and the options of search(). */
export interface RankOptions {
  limit: number;
  filter?: (e: CatalogEntry) => boolean;
  prefer?: (e: CatalogEntry) => boolean;
  explain?: boolean;
}

/** A ranking cut to `limit` matches, with the number of matches there were in all. */
export interface Ranking {
  matches: RankedMatch[];
  total: number;
}

/** Tunables of the scorer, named so the documentation can cite them. */
export const SCORER = {
  k1: 1.2,
  b: 0.6,
  /** Weight that makes a field's hit count as one unit of term frequency. */
  unitWeight: 14,
  synonymWeight: 0.6,
  /** A WordNet derivation of the query word (same root, another part of speech). */
  derivationWeight: 0.8,
  /**
   * A WordNet sense-mate of the query word (a noun/adjective/adverb synonym in one of its most
   * frequent senses, or a derivation of one: "plus" → sum, add; text/wordnet.ts senseMates).
   * Below resolve's HELD_WEIGHT, so it would rank but never make an answer confident on its own.
   * Off (0): measured in issue 23's fourth round at 0.2 it raised the everyday tune half's hit@5
   * 0.872 → 0.923 but lowered the check half's 0.889 → 0.867, and LiveMCPBench natural check
   * hit@1 0.633 → 0.621 (docs/discovery.md, "Fourth round"). Kept as a tunable to re-measure.
   */
  senseMateWeight: 0,
  /**
   * The same sense-mates, only for a request word the catalogue holds in no form (not its stem, a
   * synonym or a derivation): "what is 17 *plus* 25" → sum. Below HELD_WEIGHT: it ranks, it never
   * makes an answer confident on its own.
   */
  unknownMateWeight: 0.2,
  /**
   * A noun naming what one of the request word's two most frequent verb senses does, where some
   * tool's name holds it (text/wordnet.ts verbNominals: "link" → relation, "note" → observation).
   * Below HELD_WEIGHT: it ranks, it never makes an answer confident on its own. Twelfth round,
   * tune halves: 0.3 gave the example config +1 hit@1 and +3 hit@5 of 548 with LiveMCPBench and
   * MCP-Zero unchanged; 0.5 and above cost LiveMCPBench hit@1, and with every catalogue word as a
   * target (not only names) it cost the example config 5 hit@1. Read through the derivations of
   * a word the catalogue lacks too (connection → connect → relation): +1 hit@1 and +1 hit@5 more.
   * 0 turns it off.
   */
  verbNominalWeight: 0.3,
  /**
   * Whether the sense-mates of a word the catalogue lacks include its verb senses' synonyms
   * ("*note* that Bob prefers tea" → observe → observation): such a verb has no reading in the catalogue for the
   * action signal to agree with, so its synonyms are the only way its action is found there.
   */
  unknownVerbMates: true,
  /**
   * A verb the catalogue holds in no form reaches a tool's action (the verb its name or
   * description leads with, signals/action.ts) that shares one of its ACTION.senses most frequent
   * synsets, at this weight: "*repeat* after me" → echo (repeat's fourth sense, {repeat, echo}),
   * which sense-mates (three senses) do not reach. Below HELD_WEIGHT: it ranks, it never makes an
   * answer confident on its own. Thirteenth round, tune halves: example config +2 hit@1 and +1
   * hit@5 of 565 and one wrong confident answer fewer at 0.2 (0.3: one hit@5 less), LiveMCPBench
   * and MCP-Zero unchanged; check halves unchanged. 0 turns it off.
   */
  actionSynonymWeight: 0.2,
  prefixWeight: 0.4,
  fuzzyWeight: 0.4,
  /** Evidence multiplier per unit of matched fraction (coordination). */
  coverage: 1.0,
  /** How much server-level evidence counts next to tool-level evidence. */
  serverWeight: 1.0,
  /** Share of a server's best tool-level evidence that every tool of that server receives. */
  siblingWeight: 0.2,
  scale: 10,
  /** Longest query (in bytes) that the phrase bonus compares against names and text. */
  phraseMaxBytes: 256,
  /** Prefix expansions per query term (the shortest, then alphabetical: deterministic). */
  maxPrefixExpansions: 8,
  /**
   * How much action agreement moves a tool's score: × (1 + actionWeight × agreement), agreement in
   * [−1, 1] (signals/action.ts). It is what tells the tools of one server apart when the request
   * matches their server's text alike.
   */
  actionWeight: 0.3,
  /** A tool that declares itself deprecated scores this share of what it would (signals/deprecated.ts). */
  deprecatedWeight: 0.5,
  /**
   * Name coverage: × (1 + nameWeight × c), c the IDF-weighted share of the tool name's words the
   * request reaches (at each word's best variant weight). Between siblings that match a request
   * alike, the one whose name the request says more of comes first ("read media file" for "read
   * the media file"), and a name with words the request never says ("multiple") comes later.
   */
  nameWeight: 0.4,
  /** In name coverage, a name word the query reaches only through its stem ("files" for "file"). */
  stemOnlyWeight: 0.9,
  /**
   * A tool whose name holds the request's direct object (signals/action.ts directObject: "create
   * an *entity* ... with the observation ...") scores × (1 + objectWeight × the variant's weight).
   */
  objectWeight: 0.3,
  /**
   * Whether a named direct object counts as the catalogue's "entity" for objectWeight ("add a new
   * person called Carol": the tool whose name says *entities*). Twelfth round, tune halves: +1
   * hit@1 of 548 on the example config (two answers up a rank or two), no rank-1 answer lost,
   * LiveMCPBench unchanged.
   */
  namedObject: true,
  /**
   * Whether a named direct object's modifier pairs with what its name says it is, for term
   * proximity (pairWeight): "add a *new* person called Carol" says "new entity", which
   * create_entities' text holds and add_observations' ("Add new observations to existing
   * entities") does not; "make me a *new* hello.py" says "new file" (write_file's "Create a new
   * file", not edit_file's "Make line-based edits"). Thirteenth round, tune halves: +2 hit@1 of 565
   * on the example config for the entity (the two "add a new X called Y" near ties) and +1 for the
   * file, nothing else moved; check halves unchanged. (The same pairs for every reading of any
   * direct object: +2 on the tune halves, −1 hit@1 on + MCP-Zero's check.)
   */
  namedObjectPairs: true,
  /**
   * Grammatical number (signals/number.ts): a tool whose name says it takes several things scores
   * × (1 + numberWeight) for a request about several ("read both a.json and b.json") and
   * ÷ (1 + numberWeight) for a request about one named file.
   */
  numberWeight: 0.3,
  /** Whether a request that says no number counts as about one (signals/number.ts defaultQuantity). */
  singularDefault: true,
  /** Whether a sentence most of a server's tools repeat is left out of each tool's own text (boilerplate.ts). */
  boilerplate: true,
  /**
   * Term proximity: a tool whose own text (name, title, description, hints) holds two words the
   * request says next to each other, next to each other too ("when was it last *modified*" →
   * "last modified time"), scores × (1 + pairWeight) per such pair, for at most two pairs. Words as
   * written (stems), not synonyms; stopwords are skipped on both sides, as they are in the index.
   */
  pairWeight: 0.15,
  /**
   * A question ("what do you remember about my coffee order?", "is there a file called .env?")
   * asks to learn something: a tool that declares itself read-only (`readOnlyHint`) scores
   * × (1 + questionWeight). Swept 0.1–1.0 on the tune halves (seventh round): gains start at 0.4
   * and stop there.
   */
  questionWeight: 0.4,
  /**
   * A closed compound the catalogue lacks ("subfolders", "filename") reaches what its parts reach
   * at this share of their weights (compoundParts). Swept 0.4–0.8 on the tune halves (seventh
   * round): 0.8 was best on LiveMCPBench and the everyday sets alike.
   */
  compoundWeight: 0.8,
  /**
   * A request that says a server's name ("what's in your *memory*", "ask *github* for...") scores
   * that server's tools × (1 + serverNameWeight): server-level IDF is taken over servers, and on a
   * catalogue of three servers it makes the name barely count. Swept 0.2–0.8 on the tune halves
   * (seventh round): 0.2 lifted the everyday sets (+1 to +3 hit@5) for −2 hit@5 of 155 on the
   * 3,324-tool catalogue, where more servers are named by common words; 0.4 and up lost hit@1.
   */
  serverNameWeight: 0.2,
  /**
   * Whether a word that begins a phrasal verb (look *at*) reaches the catalogue through that
   * verb's synonyms (view, consider) instead of its own lexicon class (look → find, search): on
   * the tune halves +1 everyday-2 hit@1 and +1 confident answer with MCP-Zero's distractors, no
   * other change (seventh round).
   */
  phrasalTerms: true,
  /**
   * A request that names someone or something the catalogue does not know ("my sister *Anna*
   * lives in Lisbon", "which contacts live in *Berlin*") and names no file implies the term
   * "entity", the word for a named thing in information extraction (named-entity recognition)
   * and in the knowledge-graph tools that store them (text/tokenize.ts properNames, Term.implied).
   * It is server-level evidence only (it picks the server whose text holds "entity"; the tools'
   * own words order them), it never makes a match on its own ("weather in *Paris*" stays
   * no_match, not a tie of every memory tool), and it is no request word: resolve's confidence
   * never sees it. A name the catalogue holds ("GitHub", "Slack") is a capability word and implies
   * nothing. Swept 0–1.5 on the tune halves (eighth round): 0.8 gave hit@5 +4, +6 and +3 points
   * on everyday-2, -3 and -4 against off for −1 request of 155 on LiveMCPBench's natural tune
   * half; 1.2 lost hit@1 on LiveMCPBench with MCP-Zero. 0 turns it off.
   */
  namedEntityWeight: 0.8,
  /**
   * A request noun the catalogue does not know whose most frequent WordNet sense is filed under
   * noun.person ("my *dentist*'s name", "which of my *contacts* are *designers*", "my *wife*'s
   * favourite flower") implies "person": the other of information extraction's first entity types
   * beside a proper name's (namedEntityWeight), read from WordNet's lexicographer files rather than
   * a word list. Server-level evidence only, never a match on its own, never a request word, as
   * there. Thirteenth round, tune halves: example config +1 hit@1 and +3 hit@5 of 565 at 0.8 (+4
   * hit@5 at 1.2), LiveMCPBench and MCP-Zero unchanged; the other categories with a word of their
   * own (location, time, food, animal, plant, body) cost the example config 3 hit@1. 0 turns it off.
   */
  personNounWeight: 0.8,
  /**
   * Whether a proper name the catalogue does not hold is a value (Term.value), as a file's name
   * is: it reaches no catalogue term through sense-mates, prefixes or typos, which are noise for a
   * name ("Bob" → bob, the float).
   */
  properNamesAsValues: true,
  /**
   * A request that names two such things, not as a list ("record that *Jane* is married to
   * *Mark*", "unlink *Alice* from *Project Falcon*"; not "open *Apollo* and *Gemini*"), says how
   * they relate, the unit of relation extraction: it implies "relation". Unlike "entity" it orders
   * tools, but only those of a server the request's own words reach (an implied term alone never
   * makes a match, and never lifts a server nothing else found: "the Wuthering Waves character
   * *Jinhsi*" stays a game tool's). Measured (tenth round, tune halves): everyday sets pooled
   * hit@1 +4 of 314; 0.5–1.2 alike; LiveMCPBench unchanged. 0 turns it off.
   */
  namedRelationWeight: 0.8,
  /**
   * A request that names a folder (a path ending in a separator, or one from a root without a
   * file's extension: "what's in *~/Downloads*") implies "directory", ordering the tools of a
   * server its words reach as namedRelationWeight does. Tenth round, tune halves: everyday hit@5
   * +2 of 314 at 0.8 (0.5: +0, 1.2: −3 hit@1). 0 turns it off.
   */
  folderWeight: 0.8,
  /**
   * A file the request names whose extension the media-type registry files under image or audio
   * ("standup.m4a", "error.png") implies that word (text/media.ts), ordering the tools of a server
   * the request's words reach as folderWeight does. 0 turns it off.
   */
  mediaWeight: 0.8,
  /**
   * What a question asks for (signals/attribute.ts): "how big is ..." asks for a size, "how old"
   * an age (WordNet's attribute pointer from the adjective), "when" a time. The noun is implied,
   * ordering the tools of a server the request's words reach as folderWeight does. 0 turns it off.
   */
  askedAttributeWeight: 0.8,
  /** Whether a shell command a request starts with is read as its manual's one-line description (text/commands.ts). */
  shellCommands: true,
  /**
   * A tool whose annotations say it may destroy (not read-only, destructiveHint not false) scores
   * this share when the request has a verb and that verb does not ask for the tool's action
   * (agreement ≤ 0): "retrieve all entities and relations" had put delete_entities ("Delete
   * multiple entities and their associated relations") first on its words alone. A tool without
   * annotations is left alone (the MCP default makes every such tool "destructive"). Tenth round,
   * tune halves: 0.8 gave everyday +2 hit@1 and +2 hit@5 of 397 (0.6: the same, and a wrong
   * confident answer more); check halves −1 hit@1 and 3 more confident answers, all right.
   */
  unaskedDestructiveWeight: 0.8,
};

/** The stem of the term a named thing implies (SCORER.namedEntityWeight). */
const ENTITY_STEM = stemWord("entity");
/** The stem a tool's own text says when it relates things (SCORER.namedRelationWeight). */
const RELATION_STEM = stemWord("relation");
/** The stem of the term a noun naming a kind of person implies (SCORER.personNounWeight). */
const PERSON_STEM = stemWord("person");
/** WordNet's lexicographer file of people (lexnames(5): noun.person). */
const NOUN_PERSON = 18;
/** The stem of what a file's name names (SCORER.namedObjectPairs). */
const FILE_STEM = stemWord("file");
/** The stem a tool's own text says when it works on folders (SCORER.folderWeight). */
const DIRECTORY_STEM = stemWord("directory");

/** The shortest tail of a compound that compoundParts reads as a word of its own. */
const COMPOUND_TAIL = 4;

/**
 * resolve_tool's calibrated confidence (assess.ts confidenceOf): a logistic model of "the top match
 * is a right answer", over features of the explained ranking head, read where the threshold rules
 * (ASSESS_RULES) find the margin or the coverage short:
 *
 *   p = σ(bias + minLead·ln(0.02 + min(other, sibling)) + otherLead·ln(0.02 + other)
 *         + toolShare·t + actionSeparates·a + logScore·ln(1 + score) + logTools·ln(1 + n))
 *
 * other / sibling: the top's lead (share of its score) over the best tool of another server / the
 * next tool of its own; t: the share of the request's known content words the tool's own text
 * holds; a: 1 when the top's action agrees with the request's and its nearest sibling's agrees
 * less (what tells siblings apart when their server's text matches alike); n: the tools indexed
 * (a lead among 3,000 tools says less than among 40, and scores grow with the catalogue's IDFs).
 * Only answers with positive evidence in the tool's own text, the request's object held, no tie
 * and a score above the weak bar are scored at all, and only when the catalogue's size is known.
 *
 * Fitted by `npx tsx bench/calibrate.ts --fit` (prints this literal): L2-regularised (λ = 1)
 * logistic regression by Newton steps on the TUNE halves of both everyday sets, the example
 * requests and the natural requests over LiveMCPBench alone and with the MCP-Zero distractors
 * (40, 527 and 3,324 tools), each set weighted alike so that no catalogue size dominates. The
 * threshold: the lowest of 0.80, 0.81, … 0.99 from which up (a) every set keeps its tune precision
 * bar (0.95, or what the threshold rules alone reach where that is lower: + MCP-Zero) and (b) the
 * answers the model adds to the rules, pooled over the sets, are right at 0.95. The check halves
 * were looked at after fitting, for the report (docs/discovery.md, "sixth round": refitted with
 * everyday-2's 64 eligible tune answers, the model is less sure on the small catalogue than the
 * fifth round's, and the rule selects 0.94). `--fit` now also fits on everyday-3 to -5 (ninth
 * round); that refit selects 0.95 and moves no tune set by more than one confident answer (fewer
 * on LiveMCPBench, 41 of 43 against 42 of 44), so these coefficients stay.
 */
export const CONFIDENCE_MODEL = { bias: -5.282, minLead: 0.489, otherLead: 0.268, toolShare: 1.136,
  actionSeparates: -0.644, logScore: 1.566, logTools: -0.437, threshold: 0.94 };

/**
 * A posting list whose weighted IDF is below this can add at most ~1 point (0.05 × 2.2 × 10) to
 * any score. Such expansions (synonyms, prefixes, typos of words found nearly everywhere) are
 * skipped, which keeps them from costing time; the query's own word still matches, with its
 * weight floored here, so a word present in every entry still matches every entry.
 */
const NEGLIGIBLE = 0.05;

/** Distinct query terms whose variants are remembered (a bound on memory, not a tuning knob). */
const VARIANT_CACHE_LIMIT = 4096;

/** Phrase bonuses (first rule that applies), on the final integer scale. */
const PHRASE = { exactName: 40, exactTitle: 30, inName: 22, inTitle: 18, inText: 12 } as const;

interface Doc {
  entry: CatalogEntry;
  terms: string[];
  /** Verb lemmas of what the tool does (signals/action.ts). */
  actions: string[];
  /** For a deprecated tool that names its replacement on its server: that tool's doc id. */
  replacement?: number;
  /** The distinct stems of the tool's public name (what the name coverage factor weighs), each with its word as written. */
  nameStems: { stem: string; word: string }[];
  /** Whether the tool's name says it takes several things at once (signals/number.ts). */
  several: boolean;
  /** `terms` as a set, built on first use (only resolve's explanation needs it). */
  termSet?: Set<string>;
  /** Adjacent stem pairs of the tool's name, title, description and hints (SCORER.pairWeight), built on first use. */
  pairs?: Set<string>;
  /** Name, title and text in phrase form; computed on first use (only some queries need them). */
  phrase?: PhraseForms;
}

interface PhraseForms {
  name: string;
  namespaced: string;
  title: string;
  /** Description and hints: computed only when the name and title did not contain the phrase. */
  text?: string;
}

interface ServerDoc {
  name: string;
  docIds: number[];
  terms: string[];
  termSet?: Set<string>;
}

/** Folds and turns identifier separators into spaces, for whole-phrase comparisons. */
function phraseForm(text: string): string {
  return foldText(truncateUtf8(text, 4096)).replace(/[\s_\-./:]+/gu, " ").trim();
}

/** No boilerplate (SCORER.boilerplate off). */
const EMPTY_KEYS: ReadonlySet<string> = new Set();

/** Weighted, length-normalised term frequencies of one item over the given fields. */
function weightedTf<T>(item: T, fields: readonly FieldSpec<T>[]): Map<string, number> {
  const tf = new Map<string, number>();
  for (const field of fields) {
    const terms = indexTerms(field.text(item));
    if (terms.length === 0) continue;
    const norm = 1 - SCORER.b + SCORER.b * (terms.length / field.refLength);
    const unit = field.weight / SCORER.unitWeight / norm;
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + unit);
  }
  return tf;
}

function saturate(tf: number): number {
  return (tf * (SCORER.k1 + 1)) / (tf + SCORER.k1);
}

function idfOf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** Per-level posting lists: stem -> (ids, saturated tf) in parallel arrays. */
class Postings {
  private readonly lists = new Map<string, { ids: number[]; weights: number[] }>();

  get(term: string): { ids: number[]; weights: number[] } | undefined {
    return this.lists.get(term);
  }

  add(term: string, id: number, tf: number): void {
    const list = this.lists.get(term);
    if (list) {
      list.ids.push(id);
      list.weights.push(saturate(tf));
    } else {
      this.lists.set(term, { ids: [id], weights: [saturate(tf)] });
    }
  }

  remove(term: string, gone: ReadonlySet<number>): void {
    const list = this.lists.get(term);
    if (!list) return;
    const ids: number[] = [];
    const weights: number[] = [];
    list.ids.forEach((id, i) => {
      if (!gone.has(id)) {
        ids.push(id);
        weights.push(list.weights[i] ?? 0);
      }
    });
    if (ids.length > 0) this.lists.set(term, { ids, weights });
    else this.lists.delete(term);
  }
}

interface Variant {
  stem: string;
  weight: number;
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class SearchIndex {
  private readonly docs: (Doc | undefined)[] = [];
  private readonly freeDocIds: number[] = [];
  private readonly servers: (ServerDoc | undefined)[] = [];
  private readonly freeServerIds: number[] = [];
  private readonly serverIds = new Map<string, number>();
  /** A server name's index terms (namedServers), by name: a pure function of the name. */
  private readonly serverNameStems = new Map<string, string[]>();
  private readonly toolPostings = new Postings();
  private readonly serverPostings = new Postings();
  private readonly vocab = new Vocabulary();
  /** Exact-name lookups (lowercased). */
  private readonly byName = new Map<string, Set<number>>();
  private readonly byFragment = new Map<string, Set<number>>();
  private docCount = 0;
  private serverCount = 0;
  /** The server id of each doc id (kept beside `docs` for the scorer's hot loop). */
  private docServer = new Int32Array(0);
  /** Query term -> the stems it reaches; valid until the vocabulary changes (any setServer/removeServer). */
  private readonly variantCache = new Map<string, Variant[]>();
  /** nameWords, built on first use after a change. */
  private toolNameStems: Set<string> | undefined;
  /** The stems of every indexed tool's name (verbNominalWeight's targets). */
  private get nameWords(): Set<string> {
    if (this.toolNameStems) return this.toolNameStems;
    const out = new Set<string>();
    for (const d of this.docs) if (d) for (const { stem } of d.nameStems) out.add(stem);
    return (this.toolNameStems = out);
  }
  /** Per-query score buffers, reused across queries (each query zeroes what it touched). */
  private readonly scratch = new Scratch();
  /** The tools' actions, for action agreement. */
  private readonly actions = new ActionIndex();
  /** The plurals several-taking tools' names say, with how many tools say each (defaultQuantity). */
  private readonly plurals = new Map<string, number>();
  /** 1 for a tool that declares itself deprecated (its score is scaled by SCORER.deprecatedWeight). */
  private docDeprecated = new Uint8Array(0);
  /** How much harm a tool declares it can do (effectRank): the last tie-break before the name. */
  private docEffect = new Uint8Array(0);


  size(): number {
    return this.docCount;
  }

  setServer(server: string, entries: CatalogEntry[]): void {
    wordnet.warm();
    this.removeServer(server);
    this.variantCache.clear();
    this.toolNameStems = undefined;
    if (entries.length === 0) return;
    const sid = this.freeServerIds.pop() ?? this.servers.length;
    const docIds: number[] = [];
    const boilerplate = SCORER.boilerplate ? boilerplateOf(entries) : EMPTY_KEYS;
    for (const entry of entries) {
      const id = this.freeDocIds.pop() ?? this.docs.length;
      if (id >= this.docServer.length) {
        const size = Math.max(1024, (id + 1) * 2);
        const grown = new Int32Array(size);
        grown.set(this.docServer);
        this.docServer = grown;
        const deprecated = new Uint8Array(size);
        deprecated.set(this.docDeprecated);
        this.docDeprecated = deprecated;
        const effect = new Uint8Array(size);
        effect.set(this.docEffect);
        this.docEffect = effect;
      }
      this.docServer[id] = sid;
      const tf = weightedTf(withoutBoilerplate(entry, boilerplate), TOOL_FIELDS);
      const actions = toolActions(entry);
      const deprecated = isDeprecated(entry);
      this.docs[id] = {
        entry,
        terms: [...tf.keys()],
        actions,
        nameStems: nameWords(entry.tool),
        several: toolTakesSeveral(entry.tool),
      };
      this.docDeprecated[id] = deprecated ? 1 : 0;
      this.docEffect[id] = effectRank(entry);
      this.actions.add(id, actions);
      for (const p of severalPlurals(entry.tool)) this.plurals.set(p, (this.plurals.get(p) ?? 0) + 1);
      docIds.push(id);
      this.docCount++;
      for (const [term, f] of tf) {
        this.toolPostings.add(term, id, f);
        this.vocab.add(term);
      }
      for (const name of namesOf(entry)) addTo(this.byName, name, id);
      addTo(this.byFragment, entry.tool.toLowerCase(), id);
    }
    // A deprecated tool that names its replacement ("Use read_text_file instead") passes the
    // evidence it gets to that tool (rank()), so a request that fits it goes to the replacement.
    for (const id of docIds) {
      const doc = this.docs[id] as Doc;
      if (this.docDeprecated[id] !== 1) continue;
      const name = replacementOf(doc.entry)?.toLowerCase();
      const target = name === undefined ? undefined : docIds.find((other) => other !== id && [this.docs[other]?.entry.tool, this.docs[other]?.entry.wire].some((n) => n?.toLowerCase() === name));
      if (target !== undefined) doc.replacement = target;
    }
    const tf = weightedTf({ server, entries }, SERVER_FIELDS);
    this.servers[sid] = { name: server, docIds, terms: [...tf.keys()] };
    this.serverIds.set(server, sid);
    this.serverCount++;
    for (const [term, f] of tf) {
      this.serverPostings.add(term, sid, f);
      this.vocab.add(term);
    }
  }

  removeServer(server: string): void {
    const sid = this.serverIds.get(server);
    const sdoc = sid === undefined ? undefined : this.servers[sid];
    if (sid === undefined || !sdoc) return;
    this.variantCache.clear();
    this.toolNameStems = undefined;
    const gone = new Set(sdoc.docIds);
    const terms = new Set<string>();
    for (const id of sdoc.docIds) for (const term of this.docs[id]?.terms ?? []) terms.add(term);
    for (const term of terms) this.toolPostings.remove(term, gone);
    for (const id of sdoc.docIds) {
      const doc = this.docs[id];
      if (!doc) continue;
      for (const term of doc.terms) this.vocab.release(term);
      this.actions.remove(id, doc.actions);
      for (const p of severalPlurals(doc.entry.tool)) {
        const n = (this.plurals.get(p) ?? 0) - 1;
        if (n > 0) this.plurals.set(p, n);
        else this.plurals.delete(p);
      }
      this.docDeprecated[id] = 0;
      for (const name of namesOf(doc.entry)) removeFrom(this.byName, name, id);
      removeFrom(this.byFragment, doc.entry.tool.toLowerCase(), id);
      this.docs[id] = undefined;
      this.freeDocIds.push(id);
      this.docCount--;
    }
    const goneServer = new Set([sid]);
    for (const term of sdoc.terms) {
      this.serverPostings.remove(term, goneServer);
      this.vocab.release(term);
    }
    this.servers[sid] = undefined;
    this.freeServerIds.push(sid);
    this.serverIds.delete(server);
    this.serverNameStems.delete(server);
    this.serverCount--;
  }

  /** Every entry currently indexed (unordered). */
  entries(): CatalogEntry[] {
    const out: CatalogEntry[] = [];
    for (const d of this.docs) if (d) out.push(d.entry);
    return out;
  }

  /** Whether the catalogue holds a word as it is (for readCommands). */
  private readonly knowsWord = (word: string): boolean => this.vocab.has(stemWord(word)) || this.vocab.has(word);

  /**
   * Whether a snake_case identifier in a request is a value (text/tokenize.ts IDENTIFIER): yes,
   * unless it is a tool's name in the catalogue (namespaced or its fragment), or every part of it
   * is a catalogue word ("resource_link": the catalogue's own term, written as code).
   */
  private readonly valueIdentifier = (identifier: string): boolean => {
    const name = identifier.toLowerCase();
    if (this.byName.has(name) || this.byFragment.has(name)) return false;
    return !words(name).every((w) => isStopword(w) || this.knowsWord(w));
  };

  /** The request as it is ranked: a shell command it starts with read as its manual's line (SCORER.shellCommands). */
  private readRequest(said: string): string {
    return SCORER.shellCommands ? readCommands(said, this.knowsWord) : said;
  }

  /** The number of query terms a search uses (0 for an empty or all-stopword query). */
  termCount(said: string): number {
    return conceptsOf(searchTerms(this.readRequest(said), this.valueIdentifier)).length;
  }

  /** The full ranked list (or the first `maxHits`): best first, ties by namespaced name. */
  search(query: string, opts: SearchOptions = {}): RankedMatch[] {
    const limit = opts.maxHits !== undefined && opts.maxHits > 0 ? opts.maxHits : Number.POSITIVE_INFINITY;
    return this.rank(query, { limit, ...(opts.filter ? { filter: opts.filter } : {}), ...(opts.prefer ? { prefer: opts.prefer } : {}) }).matches;
  }

  /** Like search, but materialises only the first `limit` matches and reports the total. */
  rank(said: string, opts: RankOptions): Ranking {
    const query = this.readRequest(said);
    const filter = opts.filter;
    const prefer = opts.prefer;
    const verbs = requestVerbs(query);
    const actions = verbs.actions;
    const names = this.namesSaid(query);
    // The files it names, read once: the implied terms and the named-object pairs both ask.
    const files = fileReferences(query);
    const queryTerms = this.withImpliedTerms(withPhrasalVerbs(searchTerms(query, this.valueIdentifier), actions), query, names, files);
    const concepts = conceptsOf(queryTerms);
    const terms = concepts.map((c) => c[0] as Term);
    const exact = this.exactNameHits(query, filter);
    if (terms.length === 0 && exact.size === 0) return { matches: [], total: 0 };

    const sc = this.scratch.ensure(this.docs.length, this.servers.length);
    const { total, best, maskLo, maskHi, score, serverTotal, serverBest, serverMaskLo, serverMaskHi, serverTop, serverClaimed, factor } = sc;
    const touchedDocs: number[] = [];
    const touchedServerIds: number[] = [];
    const agreeing = this.actionAgreement(actions, factor);
    const leading = actions.find((a) => a.leading)?.word;
    const leadingVerb = opts.explain ? leading : undefined;
    try {
      // Tool-level and server-level evidence add up (a doc's score for a term is its own best
      // variant plus its server's best variant), so the two are accumulated separately and each
      // server's total is applied once at the end, not once per term.
      const reach = new Map<string, number>();
      // A verb that tells of something done ("when I *created* it") is not what a tool's name should hold.
      const told = SCORER.nameWeight > 0 ? verbs.told : undefined;
      // The bits of the request's own (not implied) terms accumulated so far.
      let ownLo = 0;
      let ownHi = 0;
      for (let t = 0; t < terms.length; t++) {
        const variants = this.conceptVariants(concepts[t] as Term[]);
        if (told && !told.has((concepts[t] as Term[])[0]?.word ?? "")) for (const v of variants) if (v.weight > (reach.get(v.stem) ?? 0)) reach.set(v.stem, v.weight);
        const lo = t < 32 ? 1 << t : 0;
        const hi = t < 32 ? 0 : 1 << (t - 32);
        // An implied term is evidence for a server, never for one tool over its siblings; one
        // that says what the request is about (impliedForTools) orders the tools of a server the
        // request's own words reach, and no other (implied terms come last: those words are in).
        const head = (concepts[t] as Term[])[0];
        if (head?.implied === undefined) accumulate(variants, this.toolPostings, this.docCount, 1, best, total, maskLo, maskHi, lo, hi, touchedDocs);
        else if (head.impliedForTools === true) {
          const reached = (id: number): boolean => {
            const sid = this.docServer[id] as number;
            return ((serverMaskLo[sid] as number) & ownLo) !== 0 || ((serverMaskHi[sid] as number) & ownHi) !== 0;
          };
          accumulate(variants, this.toolPostings, this.docCount, 1, best, total, maskLo, maskHi, lo, hi, touchedDocs, reached);
        }
        if (head?.implied === undefined) {
          ownLo |= lo;
          ownHi |= hi;
        }
        accumulate(variants, this.serverPostings, this.serverCount, SCORER.serverWeight, serverBest, serverTotal, serverMaskLo, serverMaskHi, lo, hi, touchedServerIds);
      }
      // Sibling evidence: the tool-level totals are complete here, and a server's best tool
      // match is evidence for the server as a whole (a task that fits one of its tools well
      // usually needs its siblings too), so a fraction of it is added to the server's total and
      // so to every tool of that server alike (order within the server is left as it was).
      const toolTouched = touchedDocs.length;
      for (let i = 0; i < toolTouched; i++) {
        const id = touchedDocs[i] as number;
        const sid = this.docServer[id] as number;
        const t = total[id] as number;
        if (serverClaimed[sid] === 0 && serverTop[sid] === 0 && serverMaskLo[sid] === 0 && serverMaskHi[sid] === 0) touchedServerIds.push(sid);
        serverClaimed[sid] = (serverClaimed[sid] as number) + 1;
        if (t > (serverTop[sid] as number)) serverTop[sid] = t;
      }
      for (const sid of touchedServerIds) {
        serverTotal[sid] = (serverTotal[sid] as number) + SCORER.siblingWeight * (serverTop[sid] as number);
      }
      // Tools with evidence of their own get their server's evidence now; the server's other
      // tools all share one score (the server's), so they are scored as a block further down.
      for (let i = 0; i < toolTouched; i++) {
        const id = touchedDocs[i] as number;
        const sid = this.docServer[id] as number;
        total[id] = (total[id] as number) + (serverTotal[sid] as number);
        maskLo[id] = (maskLo[id] as number) | (serverMaskLo[sid] as number);
        maskHi[id] = (maskHi[id] as number) | (serverMaskHi[sid] as number);
      }
      // A tool whose action agrees (or conflicts) with the request's is scored on its own, even
      // when its only evidence is its server's: its factor sets it apart from its siblings.
      for (const id of agreeing) {
        if (maskLo[id] !== 0 || maskHi[id] !== 0 || exact.has(id)) continue;
        const sid = this.docServer[id] as number;
        if (serverMaskLo[sid] === 0 && serverMaskHi[sid] === 0) continue; // no evidence of its own or its server's: no match
        total[id] = serverTotal[sid] as number;
        maskLo[id] = serverMaskLo[sid] as number;
        maskHi[id] = serverMaskHi[sid] as number;
        serverClaimed[sid] = (serverClaimed[sid] as number) + 1;
        touchedDocs.push(id);
      }
      // The replacement of a deprecated tool with evidence is scored on its own too (it inherits).
      for (let i = 0, n = touchedDocs.length; i < n; i++) {
        const r = (this.docs[touchedDocs[i] as number] as Doc).replacement;
        if (r === undefined || maskLo[r] !== 0 || maskHi[r] !== 0 || exact.has(r)) continue;
        const sid = this.docServer[r] as number;
        total[r] = serverTotal[sid] as number;
        maskLo[r] = serverMaskLo[sid] as number;
        maskHi[r] = serverMaskHi[sid] as number;
        serverClaimed[sid] = (serverClaimed[sid] as number) + 1;
        touchedDocs.push(r);
      }
      for (const id of exact) {
        if (maskLo[id] !== 0 || maskHi[id] !== 0) continue;
        const sid = this.docServer[id] as number;
        if (serverClaimed[sid] === 0 && serverTop[sid] === 0 && serverMaskLo[sid] === 0 && serverMaskHi[sid] === 0) touchedServerIds.push(sid);
        total[id] = serverTotal[sid] as number;
        maskLo[id] = serverMaskLo[sid] as number;
        maskHi[id] = serverMaskHi[sid] as number;
        serverClaimed[sid] = (serverClaimed[sid] as number) + 1;
        touchedDocs.push(id);
      }

      const qPhrase = phraseForm(query);
      const usePhrase = qPhrase.length > 0 && Buffer.byteLength(qPhrase) <= SCORER.phraseMaxBytes;
      const nTerms = terms.length;
      const name = (id: number): string => (this.docs[id] as Doc).entry.namespaced;
      // Exact names first, then score descending, then pins, then the least harmful effect, then namespaced name.
      const preferred = (id: number): boolean => prefer !== undefined && prefer((this.docs[id] as Doc).entry);
      // Read once: since the question mark counts (ACTION.questionMark) it splits the request into sentences.
      const question = isQuestion(query);
      const harm = question ? EFFECT_ORDER.question : EFFECT_ORDER.request;
      const before = (a: number, b: number): boolean => {
        if (exact.size > 0) {
          const ea = exact.has(a);
          if (ea !== exact.has(b)) return ea;
        }
        const sa = score[a] as number;
        const sb = score[b] as number;
        if (sa !== sb) return sa > sb;
        if (prefer) {
          const pa = preferred(a);
          if (pa !== preferred(b)) return pa;
        }
        // Evidence cannot tell them apart: the tool that declares it does the least harm first.
        const fa = harm[this.docEffect[a] as number] as number;
        const fb = harm[this.docEffect[b] as number] as number;
        if (fa !== fb) return fa < fb;
        return name(a) < name(b);
      };
      const heap = new TopK(opts.limit, before);
      let count = 0;
      const perHit = nTerms > 0 ? SCORER.coverage / nTerms : 0;
      const scoreOf = (t: number, hits: number, f: number): number => Math.round(SCORER.scale * t * (1 + perHit * hits) * f);
      const prior = (id: number): number => (this.docDeprecated[id] === 1 ? SCORER.deprecatedWeight : 1);
      const asks = SCORER.questionWeight > 0 && question;
      const named = SCORER.serverNameWeight > 0 ? this.namedServers(queryTerms) : undefined;
      const unasked = SCORER.unaskedDestructiveWeight;
      const docFactor = (id: number): number =>
        (unasked !== 1 && leading !== undefined && (factor[id] as number) <= 0 && this.docEffect[id] === 2 && (this.docs[id] as Doc).entry.annotations !== undefined ? unasked : 1) *
        prior(id) *
        (1 + SCORER.actionWeight * (factor[id] as number)) *
        (asks && this.docEffect[id] === 0 ? 1 + SCORER.questionWeight : 1) *
        (named?.has(this.docServer[id] as number) ? 1 + SCORER.serverNameWeight : 1);
      const asWritten = new Set(queryTerms.map((t) => t.word));
      const object = SCORER.objectWeight > 0 ? directObject(query) : undefined;
      let objectStems = object !== undefined ? this.objectVariants(object) : undefined;
      // A named object is an entity: "add a new person called Carol" adds an entity, whatever a person is.
      const namedObject = SCORER.namedObject && object !== undefined && objectStems !== undefined && objectNamed(query, object, names.unknown);
      if (namedObject) objectStems = new Map([...(objectStems ?? []), [ENTITY_STEM, 1]]);
      const quantity = SCORER.numberWeight > 0 ? (SCORER.singularDefault ? defaultQuantity(query, this.plurals) : requestQuantity(query)) : undefined;
      const qPairs = SCORER.pairWeight > 0 ? queryPairs(query, queryTerms, leading) : [];
      // Its modifier then modifies what the name says it is: "a *new* person called Carol" says "new
      // entity", as create_entities' "Create multiple new entities" does (add_observations' "new
      // observations" does not), and "a *new* hello.py" says "new file" (write_file's "Create a new file").
      if (object !== undefined && SCORER.pairWeight > 0 && SCORER.namedObjectPairs) {
        const kind = namedObject ? ENTITY_STEM : files.some((r) => r.isFile && r.nameWords.includes(object)) ? FILE_STEM : undefined;
        const modifier = kind !== undefined ? modifierOf(query, object, leading) : undefined;
        if (modifier !== undefined) qPairs.push(`${modifier} ${kind}`);
      }
      const nameFactor = (id: number): number => {
        const doc = this.docs[id] as Doc;
        let f = SCORER.nameWeight > 0 ? 1 + SCORER.nameWeight * this.nameCoverage(doc, reach, asWritten) : 1;
        if (qPairs.length > 0) {
          const own = (doc.pairs ??= pairsOf(doc.entry));
          let n = 0;
          for (const p of qPairs) if (own.has(p) && ++n >= 2) break;
          if (n > 0) f *= (1 + SCORER.pairWeight) ** n;
        }
        if (quantity !== undefined && doc.several) f = quantity === "several" ? f * (1 + SCORER.numberWeight) : f / (1 + SCORER.numberWeight);
        if (objectStems) {
          let best = 0;
          for (const { stem } of doc.nameStems) best = Math.max(best, objectStems.get(stem) ?? 0);
          if (best >= SCORER.synonymWeight) f *= 1 + SCORER.objectWeight * best;
        }
        return f;
      };
      // The hot loop of a long query over a large catalogue: it touches thousands of entries, so
      // it reads only the typed arrays and loads an entry's object only for a filter or a phrase
      // bonus, and skips the heap for scores that cannot enter it (no exact hits: plain order).
      const hasExact = exact.size > 0;
      // The bits of the concepts the request only implies (Term.implied).
      let impliedLo = 0;
      let impliedHi = 0;
      for (let t = 0; t < nTerms; t++) {
        if (terms[t]?.implied === undefined) continue;
        if (t < 32) impliedLo |= 1 << t;
        else impliedHi |= 1 << (t - 32);
      }
      const own = (lo: number, hi: number): boolean => (lo & ~impliedLo) !== 0 || (hi & ~impliedHi) !== 0;
      const realEvidence =
        (impliedLo === 0 && impliedHi === 0) ||
        touchedDocs.some((id) => own(maskLo[id] as number, maskHi[id] as number)) ||
        touchedServerIds.some((sid) => own(serverMaskLo[sid] as number, serverMaskHi[sid] as number));
      let floor = -1;
      const scored: number[] = [];
      let inheriting = false;
      for (const id of touchedDocs) {
        if (filter && !filter((this.docs[id] as Doc).entry)) continue;
        const hits = popcount(maskLo[id] as number) + popcount(maskHi[id] as number);
        const isExact = hasExact && exact.has(id);
        if (hits === 0 && !isExact) continue; // a phrase bonus alone never makes a match
        // Nor does what the request only implies, when nothing else matches: "weather in *Paris*"
        // is no_match, not a tie of every memory tool. With a match of its own words somewhere, it
        // competes ("my sister Anna lives in Lisbon": memory before a file tool's stray word).
        if (!isExact && !realEvidence && ((maskLo[id] as number) & ~impliedLo) === 0 && ((maskHi[id] as number) & ~impliedHi) === 0) continue;
        let s = scoreOf(total[id] as number, hits, docFactor(id) * nameFactor(id));
        // A phrase contained in a name, title or description has all its words there, so only
        // entries that matched every term can earn the bonus (this keeps it off the hot path).
        if (usePhrase && (hits === nTerms || isExact)) s += this.phraseBonus(this.docs[id] as Doc, qPhrase);
        score[id] = s;
        count++;
        scored.push(id);
        if ((this.docs[id] as Doc).replacement !== undefined) inheriting = true;
      }
      // A replacement scores at least what its deprecated tool would have scored undemoted.
      if (inheriting) {
        for (const id of scored) {
          const r = (this.docs[id] as Doc).replacement;
          if (r === undefined || (filter && !filter((this.docs[r] as Doc).entry))) continue;
          const undemoted = Math.round((score[id] as number) / SCORER.deprecatedWeight);
          if (undemoted > (score[r] as number)) score[r] = undemoted;
        }
      }
      for (const id of scored) {
        if ((score[id] as number) < floor) continue;
        heap.offer(id);
        if (!hasExact && heap.full()) floor = score[heap.worst() as number] as number;
      }
      // Server blocks: the tools matched only through their server's fields. A block that
      // cannot reach the current top `limit` is only counted, not scored tool by tool.
      for (const sid of touchedServerIds) {
        const lo = serverMaskLo[sid] as number;
        const hi = serverMaskHi[sid] as number;
        if (lo === 0 && hi === 0) continue; // sibling evidence alone never makes a match
        if (!realEvidence && (lo & ~impliedLo) === 0 && (hi & ~impliedHi) === 0) continue; // nor implied evidence alone
        const server = this.servers[sid];
        if (!server) continue;
        const hits = popcount(lo) + popcount(hi);
        // The block's tools have no action agreement (those that do were scored above), so only
        // a deprecated tool's prior can lower one below the block's score.
        const s = scoreOf(serverTotal[sid] as number, hits, 1);
        const phrase = usePhrase && hits === nTerms;
        if (!filter && !phrase && heap.full()) {
          const worst = heap.worst();
          if (worst === undefined || exact.has(worst) || s < (score[worst] as number)) {
            count += server.docIds.length - (serverClaimed[sid] as number);
            continue;
          }
        }
        for (const id of server.docIds) {
          if (maskLo[id] !== 0 || maskHi[id] !== 0) continue; // scored above
          const doc = this.docs[id];
          if (!doc || (filter && !filter(doc.entry))) continue;
          maskLo[id] = lo;
          maskHi[id] = hi;
          touchedDocs.push(id);
          const f = docFactor(id);
          const own = f === 1 ? s : scoreOf(serverTotal[sid] as number, hits, f);
          score[id] = phrase ? own + this.phraseBonus(doc, qPhrase) : own;
          count++;
          heap.offer(id);
        }
      }
      const top = heap.sorted();
      // matched_terms in query-term order, for the returned matches only.
      const matches = top.map((id) => {
        const words: string[] = [];
        for (let t = 0; t < nTerms; t++) {
          const bit = t < 32 ? ((maskLo[id] as number) >>> t) & 1 : ((maskHi[id] as number) >>> (t - 32)) & 1;
          if (bit && terms[t]?.implied === undefined) words.push(terms[t]?.word ?? ""); // a concept is named by its first word
        }
        const doc = this.docs[id] as Doc;
        const m: RankedMatch = { entry: doc.entry, score: score[id] as number, matchedTerms: words };
        if (opts.explain) {
          m.evidence = this.explain(id, concepts, leadingVerb);
          m.serverTools = this.servers[this.docServer[id] as number]?.docIds.length ?? 0;
          m.action = factor[id] as number;
        }
        return m;
      });
      return { matches, total: count };
    } finally {
      // Leave the scratch buffers zeroed for the next query (only what this query touched).
      for (const id of touchedDocs) {
        total[id] = 0;
        maskLo[id] = 0;
        maskHi[id] = 0;
        score[id] = 0;
      }
      for (const id of agreeing) factor[id] = 0;
      for (const sid of touchedServerIds) {
        serverTotal[sid] = 0;
        serverMaskLo[sid] = 0;
        serverMaskHi[sid] = 0;
        serverTop[sid] = 0;
        serverClaimed[sid] = 0;
      }
    }
  }

  /**
   * Action agreement of every tool whose action relates to a request verb, written into `factor`
   * (in [−1, 1]; 0 for every other tool). Returns the ids written, for the caller to score and reset.
   */
  private actionAgreement(actions: readonly QueryAction[], factor: Float64Array): number[] {
    const touched: number[] = [];
    if (SCORER.actionWeight === 0) return touched;
    for (const q of actions) {
      for (const [lemma, relation] of this.actions.related(q)) {
        const r = relation * q.weight;
        for (const id of this.actions.docsOf(lemma)) {
          const prev = factor[id] as number;
          if (prev === 0) touched.push(id);
          // The strongest agreement; an opposition only where nothing agrees.
          if ((r > 0 && r > prev) || (prev <= 0 && r < prev) || (prev < 0 && r > 0)) factor[id] = r;
        }
      }
    }
    return touched;
  }

  /**
   * The IDF-weighted share of a tool name's stems that the query reaches, each at its variant
   * weight, and a name word the query writes the same way (not only to the same stem) counts a
   * little more: "read the README file" says *file*, as read_text_file does, not *files*.
   */
  private nameCoverage(doc: Doc, reach: ReadonlyMap<string, number>, asWritten: ReadonlySet<string>): number {
    let all = 0;
    let got = 0;
    for (const { stem, word } of doc.nameStems) {
      const idf = idfOf(this.docCount, this.toolPostings.get(stem)?.ids.length ?? 0);
      all += idf;
      got += idf * (reach.get(stem) ?? 0) * (asWritten.has(word) ? 1 : SCORER.stemOnlyWeight);
    }
    return all > 0 ? got / all : 0;
  }

  /** The evidence `rank({explain})` would report for this entry and query (undefined: not indexed). */
  explainEntry(entry: CatalogEntry, said: string): ConceptEvidence[] | undefined {
    const query = this.readRequest(said);
    for (const id of this.byName.get(entry.namespaced.toLowerCase()) ?? []) {
      if (this.docs[id]?.entry.namespaced === entry.namespaced) {
        const actions = queryActions(query);
        return this.explain(id, conceptsOf(withPhrasalVerbs(searchTerms(query, this.valueIdentifier), actions)), actions.find((a) => a.leading)?.word);
      }
    }
    return undefined;
  }

  /** Per concept, the best variant weight found in the doc's own terms and in its server's terms (and which is the request's leading verb). */
  private explain(id: number, concepts: readonly Term[][], leadingVerb?: string): ConceptEvidence[] {
    const doc = this.docs[id] as Doc;
    const server = this.servers[this.docServer[id] as number];
    const own = (doc.termSet ??= new Set(doc.terms));
    const srv = server ? (server.termSet ??= new Set(server.terms)) : new Set<string>();
    const nameStems = server ? this.serverNameParts(server.name) : [];
    return concepts.filter((concept) => concept[0]?.implied === undefined).map((concept) => {
      let tool = 0;
      let srvWeight = 0;
      for (const v of this.conceptVariants(concept)) {
        if (v.weight > tool && own.has(v.stem)) tool = v.weight;
        if (v.weight > srvWeight && srv.has(v.stem)) srvWeight = v.weight;
      }
      const first = concept[0] as Term;
      const known = concept.some((t) => !t.value && (this.vocab.has(t.stem) || this.vocab.has(t.word)));
      const verb = leadingVerb !== undefined && concept.some((t) => t.word === leadingVerb);
      const fileName = concept.every((t) => t.fileName === true);
      const quoted = concept.every((t) => t.quoted === true);
      const payload = concept.every((t) => t.payload === true);
      const serverName = nameStems.length > 0 && concept.every((t) => t.referenced !== true && nameStems.includes(t.stem));
      return { word: first.word, stem: first.stem, tool, server: srvWeight, known, ...(verb ? { verb } : {}), ...(fileName ? { fileName } : {}), ...(quoted ? { quoted } : {}), ...(payload ? { payload } : {}), ...(serverName ? { serverName } : {}) };
    });
  }

  /**
   * An exact tool name finds its tool first: the namespaced name, `server__wire`, the wire name,
   * or the public fragment when exactly one in-scope tool carries it.
   */
  private exactNameHits(query: string, filter: SearchOptions["filter"]): Set<number> {
    const q = query.trim().toLowerCase();
    const out = new Set<number>();
    if (q.length === 0 || q.length > 512) return out;
    const allowed = (id: number): boolean => {
      const d = this.docs[id];
      return d !== undefined && (!filter || filter(d.entry));
    };
    for (const id of this.byName.get(q) ?? []) if (allowed(id)) out.add(id);
    if (out.size === 0) {
      const frag = [...(this.byFragment.get(q) ?? [])].filter(allowed);
      if (frag.length === 1 && frag[0] !== undefined) out.add(frag[0]);
    }
    return out;
  }

  /** The stems the request's direct object reaches (its concept's variants), by weight. */
  private objectVariants(word: string): Map<string, number> {
    const term = searchTerms(word)[0];
    const out = new Map<string, number>();
    if (term) for (const v of this.variants(term)) out.set(v.stem, v.weight);
    return out;
  }

  /** The names a request says (properNameMentions), read once a query: the mentions, and their words the catalogue does not know. */
  private namesSaid(query: string): NamesSaid {
    const mentions = properNameMentions(query);
    const unknown = [...new Set(mentions.flatMap((m) => m.words))].filter((w) => !this.vocab.has(stemWord(w)) && !this.vocab.has(w));
    return { mentions, unknown };
  }

  /** The stems one concept reaches: the union of its terms' variants, each at its best weight. */
  private conceptVariants(concept: readonly Term[]): Variant[] {
    if (concept.length === 1) return this.variants(concept[0] as Term);
    const best = new Map<string, number>();
    for (const term of concept) for (const v of this.variants(term)) if (v.weight > (best.get(v.stem) ?? 0)) best.set(v.stem, v.weight);
    return [...best].map(([stem, weight]) => ({ stem, weight }));
  }

  /** The stems a query term reaches, each with the weight of that kind of match (cached per vocabulary). */
  private variants(term: Term): Variant[] {
    if (term.value) return [];
    if (term.implied !== undefined) return [{ stem: term.stem, weight: term.implied }];
    const key = `${term.word}\u0000${term.stem}\u0000${term.phrasal?.lemma ?? ""}`;
    const cached = this.variantCache.get(key);
    if (cached) return cached;
    const computed = this.computeVariants(term);
    if (this.variantCache.size >= VARIANT_CACHE_LIMIT) this.variantCache.clear();
    this.variantCache.set(key, computed);
    return computed;
  }

  private computeVariants(term: Term): Variant[] {
    const out = new Map<string, number>();
    const put = (s: string, w: number): void => {
      if (w > (out.get(s) ?? 0)) out.set(s, w);
    };
    put(term.stem, 1);
    if (term.word !== term.stem && this.vocab.has(term.word)) put(term.word, 1);
    // "look at": view and its lexicon class (view is a read word), in place of "look"'s own
    // class (find). (A phrasal verb is read only when it has such a reading: queryActions.) Its
    // derivations, prefixes and typos below stay.
    if (term.phrasal) for (const s of phrasalStems(term.phrasal.synonyms)) put(s, SCORER.synonymWeight);
    else for (const syn of synonymsOf(term.stem)) put(syn, SCORER.synonymWeight);
    // WordNet derivations (translate → translation, delete → deletion, long → length): the
    // morphology the suffix stemmer does not reach. Only stems the catalogue holds are kept.
    for (const w of wordnet.derivations(term.word)) {
      const s = stemWord(w);
      if (this.vocab.has(s)) put(s, SCORER.derivationWeight);
    }
    // What the word's verb senses make, named as a tool's name names its object: "link them" →
    // relate → relation (create_relations), "note that" → observe → observation; for a word the
    // catalogue holds in no form, a noun through its verb too ("the married-to *connection*" →
    // connect → relation; for every word it cost ~1.5 ms more a search at 2,797 tools). Only a
    // noun some tool's name holds: a name says what a tool acts on, a description's words drift.
    if (SCORER.verbNominalWeight > 0) {
      const through = this.vocab.has(term.stem) || this.vocab.has(term.word) ? [] : wordnet.derivations(term.word);
      for (const f of [term.word, ...through]) for (const w of wordnet.verbNominals(f)) {
        const s = stemWord(w);
        if (this.nameWords.has(s)) put(s, SCORER.verbNominalWeight);
      }
    }
    // Sense-mates for every word drift ("plus" is fine, most words are not); for a word the
    // catalogue does not hold in any form (its stem, a synonym, a derivation), the catalogue has no
    // better reading of it, and a sense-mate is the only way the request's idea can be found there.
    const known = [...out.keys()].some((s) => this.vocab.has(s));
    const mateWeight = known ? SCORER.senseMateWeight : Math.max(SCORER.senseMateWeight, SCORER.unknownMateWeight);
    if (mateWeight > 0) {
      for (const w of wordnet.senseMates(term.word, !known && SCORER.unknownVerbMates)) {
        const s = stemWord(w);
        if (this.vocab.has(s)) put(s, mateWeight);
      }
    }
    // A verb the catalogue holds in no form reaches a tool's action that shares one of the senses
    // the action signal reads ("repeat after me" → echo, repeat's fourth sense): the tool's own
    // name then holds the request's verb, which agreement alone cannot give a tool without it.
    if (!known && SCORER.actionSynonymWeight > 0) {
      for (const w of wordnet.verbSenses(term.word, ACTION.senses)?.synonymWords ?? []) {
        const s = stemWord(w);
        if (this.actions.has(w) && this.vocab.has(s)) put(s, SCORER.actionSynonymWeight);
      }
    }
    // A compound the catalogue lacks ("subfolders") reaches what its parts reach, at a share.
    if (!known && SCORER.compoundWeight > 0 && term.word.length > COMPOUND_TAIL) {
      for (const part of this.compoundParts(term.word)) for (const v of this.computeVariants(part)) put(v.stem, SCORER.compoundWeight * v.weight);
    }
    for (const p of this.vocab.prefixRelated(term.stem, SCORER.maxPrefixExpansions)) put(p, SCORER.prefixWeight);
    if (!this.vocab.has(term.stem)) for (const f of this.vocab.oneEditAway(term.stem)) put(f, SCORER.fuzzyWeight);
    return [...out].map(([stem, weight]) => ({ stem, weight }));
  }

  /**
   * The request's terms and those it implies: "entity" when it names someone or something that no
   * catalogue word is and says no file (SCORER.namedEntityWeight); "relation" when it names two
   * such things, not as a list (namedRelationWeight); "person" when a word it says the catalogue
   * lacks names a kind of person (personNounWeight); "directory" when it names a folder
   * (folderWeight). Each only where the catalogue holds the word and the request does not say it.
   */
  private withImpliedTerms(terms: Term[], query: string, names: NamesSaid, files: readonly FileReference[]): Term[] {
    if (terms.length === 0) return terms;
    let out = terms;
    const imply = (word: string, stem: string, weight: number, forTools: boolean): void => {
      if (weight <= 0 || out.length >= MAX_QUERY_TERMS || !this.vocab.has(stem) || out.some((t) => t.stem === stem)) return;
      out = [...out, forTools ? { word, stem, implied: weight, impliedForTools: true } : { word, stem, implied: weight }];
    };
    const unknownWord = (word: string): boolean => !this.vocab.has(stemWord(word)) && !this.vocab.has(word);
    // The names as said: their words for "entity", the mentions for "relation".
    const { mentions, unknown } = names;
    if (unknown.length > 0) {
      // A name is a value: "Bob" is someone, not a float or a haircut (its sense-mates), nor "box" (a typo).
      if (SCORER.properNamesAsValues) out = out.map((t): Term => (unknown.includes(t.word) ? { ...t, value: true } : t));
      if (files.length === 0) {
        imply("entity", ENTITY_STEM, SCORER.namedEntityWeight, false);
        // Two named things, not a list of them: what is said is how they relate (relation extraction's unit).
        const named = mentions.filter((m) => m.words.some(unknownWord));
        const first = named[0]?.words.join(" ");
        if (named.some((m, i) => i > 0 && m.near && !m.listed && m.words.join(" ") !== first)) imply("relation", RELATION_STEM, SCORER.namedRelationWeight, true);
      }
    }
    // A word that names a kind of person: its most frequent sense is WordNet's noun.person.
    if (SCORER.personNounWeight > 0 && out.some((t) => t.implied === undefined && !t.value && unknownWord(t.word) && wordnet.nounFile(t.word) === NOUN_PERSON)) {
      imply("person", PERSON_STEM, SCORER.personNounWeight, false);
    }
    if (namesFolder(query)) imply("directory", DIRECTORY_STEM, SCORER.folderWeight, true);
    if (SCORER.askedAttributeWeight > 0) for (const noun of askedAttributes(query)) imply(noun, stemWord(noun), SCORER.askedAttributeWeight, true);
    if (SCORER.mediaWeight > 0) {
      for (const ref of files) {
        const ext = ref.extensionWords.at(-1);
        const kind = ref.isFile && ext !== undefined ? mediaKindOf(ext) : undefined;
        if (kind !== undefined) imply(kind, stemWord(kind), SCORER.mediaWeight, true);
      }
    }
    return out;
  }

  /**
   * The servers whose whole name the request says: its words as written, not synonyms, and not
   * the words of a file name (values). The "file" that a file name implies counts: a server named
   * "files" is the one a request about a file is for. (Measured without it on the tune halves:
   * −1 hit@1 and −1 hit@5 on everyday-3, no change elsewhere.)
   */
  private namedServers(terms: readonly Term[]): Set<number> | undefined {
    const said = new Set(terms.filter((t) => !t.value).map((t) => t.stem));
    let out: Set<number> | undefined;
    for (const [name, sid] of this.serverIds) {
      const parts = this.serverNameParts(name);
      if (parts.length > 0 && parts.every((p) => said.has(p))) (out ??= new Set()).add(sid);
    }
    return out;
  }

  /** A server name's index stems (cached). */
  private serverNameParts(name: string): string[] {
    let parts = this.serverNameStems.get(name);
    if (!parts) this.serverNameStems.set(name, (parts = indexTerms(name)));
    return parts;
  }

  /**
   * The parts of a closed compound the catalogue can read ("subfolders" → folders, "filename" →
   * file, name): the longest tail of at least COMPOUND_TAIL letters that reaches the catalogue
   * (its stem, or a synonym of it: "folders" → directory), and the head before it when that
   * reaches it too. A head that does not must be short (a prefix such as sub-, or "db"): a long
   * unreadable head is a word of its own, and the word is no compound.
   */
  private compoundParts(word: string): Term[] {
    const reaches = (t: Term): boolean => this.vocab.has(t.stem) || synonymsOf(t.stem).some((s) => this.vocab.has(s));
    for (let i = 2; i <= word.length - COMPOUND_TAIL; i++) {
      const tail = { word: word.slice(i), stem: stemWord(word.slice(i)) };
      if (!reaches(tail)) continue;
      const head = { word: word.slice(0, i), stem: stemWord(word.slice(0, i)) };
      if (head.word.length >= 3 && reaches(head)) return [head, tail];
      if (head.word.length <= 3) return [tail];
    }
    return [];
  }

  private phraseBonus(doc: Doc, q: string): number {
    const e = doc.entry;
    const p = (doc.phrase ??= { name: phraseForm(e.tool), namespaced: phraseForm(e.namespaced), title: phraseForm(e.title ?? "") });
    if (q === p.name || q === p.namespaced) return PHRASE.exactName;
    if (p.title.length > 0 && q === p.title) return PHRASE.exactTitle;
    // Whole-word containment: "get" must not count as contained in "together".
    const padded = ` ${q} `;
    if (` ${p.name} `.includes(padded)) return PHRASE.inName;
    if (` ${p.title} `.includes(padded)) return PHRASE.inTitle;
    p.text ??= phraseForm(`${e.description} ${e.useWhen.join(" ")} ${e.toolUseWhen.join(" ")}`);
    if (` ${p.text} `.includes(padded)) return PHRASE.inText;
    return 0;
  }
}

/** The names a request says: each mention, and the words of them the catalogue does not know. */
interface NamesSaid {
  mentions: NameMention[];
  unknown: string[];
}

/**
 * Whether the request's direct object is a named thing (SCORER.namedObject): a name the
 * catalogue does not know itself ("store *Globex* as an organisation"), or a noun that a name
 * follows by "called" or "named" ("add a new person *called Carol*", the naming construction).
 */
function objectNamed(query: string, object: string, unknownNames: readonly string[]): boolean {
  if (unknownNames.length === 0) return false;
  if (unknownNames.includes(object)) return true;
  const all = words(query);
  const at = all.indexOf(object);
  if (at < 0) return false;
  const next = all[at + 1];
  return (next === "called" || next === "named") && unknownNames.includes(all[at + 2] ?? "");
}

/** The index term right before the request's direct object ("a *new* person"), unless it is the leading verb's. */
function modifierOf(query: string, object: string, leadingVerb: string | undefined): string | undefined {
  const terms = indexTerms(query);
  const at = terms.indexOf(stemWord(object));
  const before = at > 0 ? terms[at - 1] : undefined;
  return before !== undefined && (leadingVerb === undefined || before !== stemWord(leadingVerb)) ? before : undefined;
}

/** Adjacent stem pairs of a text's index terms ("last modified time" → "last modifi", "modifi time"). */
function adjacentPairs(stems: readonly string[], into: Set<string>, skip?: ReadonlySet<string>): void {
  for (let i = 1; i < stems.length; i++) {
    const a = stems[i - 1] as string;
    const b = stems[i] as string;
    if (a !== b && !skip?.has(a) && !skip?.has(b)) into.add(`${a} ${b}`);
  }
}

/** The tool's own adjacent pairs: name, title, description and per-tool hints, each on its own. */
function pairsOf(entry: CatalogEntry): Set<string> {
  const out = new Set<string>();
  for (const text of [entry.tool, entry.title ?? "", entry.description, ...entry.toolUseWhen]) adjacentPairs(indexTerms(text), out);
  return out;
}

/**
 * The request's adjacent pairs, leaving out the words that only name a file (Term.value) and its
 * leading verb: what the verb does to its object is the action signal's to weigh, and a verb next
 * to an adjective ("add a *new* person") says nothing about which tool's object it is.
 */
function queryPairs(query: string, terms: readonly Term[], leadingVerb?: string): string[] {
  const values = new Set(terms.filter((t) => t.value).map((t) => t.stem));
  if (leadingVerb !== undefined) values.add(stemWord(leadingVerb));
  const out = new Set<string>();
  adjacentPairs(indexTerms(query), out, values);
  return [...out];
}

/** Zeroed per-query buffers, grown (never shrunk) to the index's id ranges. */
class Scratch {
  total = new Float64Array(0);
  best = new Float64Array(0);
  score = new Float64Array(0);
  maskLo = new Uint32Array(0);
  maskHi = new Uint32Array(0);
  serverTotal = new Float64Array(0);
  serverBest = new Float64Array(0);
  serverTop = new Float64Array(0);
  serverClaimed = new Uint32Array(0);
  serverMaskLo = new Uint32Array(0);
  serverMaskHi = new Uint32Array(0);
  /** Action agreement per doc for the current query (0 = none). */
  factor = new Float64Array(0);


  ensure(docs: number, servers: number): this {
    if (this.total.length < docs) {
      const n = Math.max(docs, this.total.length * 2);
      this.total = new Float64Array(n);
      this.factor = new Float64Array(n);
      this.best = new Float64Array(n);
      this.score = new Float64Array(n);
      this.maskLo = new Uint32Array(n);
      this.maskHi = new Uint32Array(n);
    }
    if (this.serverTotal.length < servers) {
      const n = Math.max(servers, this.serverTotal.length * 2);
      this.serverTotal = new Float64Array(n);
      this.serverBest = new Float64Array(n);
      this.serverTop = new Float64Array(n);
      this.serverClaimed = new Uint32Array(n);
      this.serverMaskLo = new Uint32Array(n);
      this.serverMaskHi = new Uint32Array(n);
    }
    return this;
  }
}

/**
 * The first `limit` ids in `before` order, offered one at a time. Below the limit it only
 * collects; at the limit it keeps a heap whose root is the worst id kept, so selecting from n
 * candidates costs O(n log limit) rather than a sort of all n. The result does not depend on
 * the order of the offers (`before` is a strict total order).
 */
class TopK {
  private readonly heap: number[] = [];

  constructor(
    private readonly limit: number,
    private readonly before: (a: number, b: number) => boolean,
  ) {}

  full(): boolean {
    return this.heap.length >= this.limit;
  }

  /** The worst id kept (undefined when nothing is kept, as with a limit of 0). */
  worst(): number | undefined {
    return this.heap[0];
  }

  offer(id: number): void {
    if (this.limit <= 0) return;
    const h = this.heap;
    if (h.length < this.limit) {
      h.push(id);
      let i = h.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.before(h[parent] as number, h[i] as number)) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    if (!this.before(id, h[0] as number)) return;
    h[0] = id;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < h.length && this.before(h[w] as number, h[l] as number)) w = l;
      if (r < h.length && this.before(h[w] as number, h[r] as number)) w = r;
      if (w === i) return;
      this.swap(i, w);
      i = w;
    }
  }

  sorted(): number[] {
    return this.heap.sort((a, b) => (this.before(a, b) ? -1 : this.before(b, a) ? 1 : 0));
  }

  private swap(i: number, j: number): void {
    const h = this.heap;
    const t = h[i] as number;
    h[i] = h[j] as number;
    h[j] = t;
  }
}

function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * One query term at one level: each item's best variant contribution (weighted IDF × saturated
 * tf) is added to `total`, its bit set in the mask; `touched` collects items seen for the first time.
 */
function accumulate(
  variants: readonly Variant[],
  postings: Postings,
  population: number,
  levelWeight: number,
  best: Float64Array,
  total: Float64Array,
  maskLo: Uint32Array,
  maskHi: Uint32Array,
  lo: number,
  hi: number,
  touched: number[],
  admit?: (id: number) => boolean,
): void {
  const seen: number[] = [];
  for (const v of variants) {
    const list = postings.get(v.stem);
    if (!list) continue;
    let w = levelWeight * v.weight * idfOf(population, list.ids.length);
    if (w < NEGLIGIBLE) {
      if (v.weight < 1) continue;
      w = NEGLIGIBLE;
    }
    const { ids, weights } = list;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      if (admit !== undefined && !admit(id)) continue;
      const c = w * (weights[i] as number);
      const prev = best[id] as number;
      if (prev === 0) seen.push(id);
      if (c > prev) best[id] = c;
    }
  }
  for (const id of seen) {
    const c = best[id] as number;
    best[id] = 0;
    if (maskLo[id] === 0 && maskHi[id] === 0) touched.push(id);
    total[id] = (total[id] as number) + c;
    maskLo[id] = (maskLo[id] as number) | lo;
    maskHi[id] = (maskHi[id] as number) | hi;
  }
}

/**
 * Query terms grouped into concepts: a term that is a lexicon synonym of an earlier one joins its
 * group ("markdown" and "md", "write" and "save"), so one idea said twice is counted once — in
 * the score and in the matched fraction — instead of outweighing the other ideas of the task.
 */
export function conceptsOf(terms: readonly Term[]): Term[][] {
  const groups: Term[][] = [];
  for (const term of terms) {
    const home = groups.find((g) => g.some((t) => synonymsOf(t.stem).includes(term.stem)));
    if (home) home.push(term);
    else groups.push([term]);
  }
  return groups;
}

/**
 * What a tool declares it may do (MCP tool annotations): 0 read-only, 1 only additive
 * (`destructiveHint: false`), 2 may be destructive (the spec's default when a tool says nothing).
 */
function effectRank(entry: CatalogEntry): number {
  const a = entry.annotations;
  if (a?.["readOnlyHint"] === true) return 0;
  return a?.["destructiveHint"] === false ? 1 : 2;
}

/**
 * How a tie is ordered by declared effect (index = effectRank). A question ("what do you remember
 * about me") asks to learn something: the readers first, then the writers, then what may destroy.
 * A request to act ("remember that Alice works at Acme") may want a writer: read-only and additive
 * tools are one class (neither harms anything), before what may destroy.
 */
const EFFECT_ORDER = { question: [0, 1, 2], request: [0, 0, 1] } as const;

/**
 * The request's terms, each word that begins a phrasal verb (signals/action.ts queryActions:
 * "look at") carrying that verb's lemma and synonyms (Term.phrasal). A negated word is marked
 * too, and reaches nothing all the same (Term.value).
 */
function withPhrasalVerbs(terms: Term[], actions: readonly QueryAction[]): Term[] {
  if (!SCORER.phrasalTerms) return terms;
  const phrasal = actions.filter((a) => a.phrasal);
  if (phrasal.length === 0) return terms;
  return terms.map((t) => {
    const a = phrasal.find((p) => p.word === t.word);
    return a ? { ...t, phrasal: { lemma: a.senses.lemma, synonyms: a.senses.synonymWords } } : t;
  });
}

/** A phrasal verb's synonyms that have a lexicon class, with their classes. */
function phrasalStems(synonyms: readonly string[]): string[] {
  const out = new Set<string>();
  for (const w of synonyms) {
    const s = stemWord(w);
    const cls = synonymsOf(s);
    if (cls.length === 0) continue;
    out.add(s);
    for (const c of cls) out.add(c);
  }
  return [...out];
}

/** A name's distinct stems, each with the first word that gave it (folded, as written). */
function nameWords(name: string): { stem: string; word: string }[] {
  const out = new Map<string, string>();
  for (const t of queryTermsOf(name)) if (!out.has(t.stem)) out.set(t.stem, t.word);
  return [...out].map(([stem, word]) => ({ stem, word }));
}

function namesOf(entry: CatalogEntry): Set<string> {
  return new Set([entry.namespaced, `${entry.server}__${entry.wire}`, entry.wire].map((s) => s.toLowerCase()));
}
