// Action agreement: does what the request asks to *do* (create, read, delete, move...) agree with
// what a tool does? Tools of one server share their server's text, so a request that matches a
// server ("remember that Alice prefers tea" → memory) leaves its tools to be told apart by their
// own evidence, and the verb is the part of a tool's name that says which operation it is
// (create_entities, delete_entities, read_graph, search_nodes).
//
// A tool's actions: the first word of its name and the first word of its description, each when
// WordNet knows it as a verb ("create_entities", "Create multiple new entities" → create;
// "write_file", "Create a new file or completely overwrite..." → write, create). A request's
// actions: its words that WordNet knows as verbs, the first one (the imperative: "open package.json
// and show it to me") counting fully and the others less (they are often nouns that are verbs too:
// "a *list* of tasks", "a *file* named").
//
// Two verbs agree when they are one lemma, share a WordNet synset, or one's synset is the other's
// hypernym, troponym or verb-group neighbour (weaker), within the first senses of each; the
// software vocabulary's intent classes (lexicon.ts: read/view/show/open, write/save/store...) count
// as sharing a synset, since WordNet lacks their software senses. They oppose when a synset of one
// holds an antonym of the other's (remember ↔ forget, record ↔ delete). No verb list is written
// here: every relation comes from WordNet or the existing lexicon.
import type { CatalogEntry } from "../../types.js";
import { inLexiconClass, synonymsOf } from "../text/lexicon.js";
import { stem } from "../text/stem.js";
import { isStopword } from "../text/stopwords.js";
import { isGenericStem } from "../text/generic.js";
import { NEGATION, negates, proseWords, words } from "../text/tokenize.js";
import { wordnet, type VerbSenses } from "../text/wordnet.js";

/** The named tunables of action agreement (docs/discovery.md, "Action agreement"). */
export const ACTION = {
  /** Senses of each verb that relations are looked for in (WordNet orders senses by frequency). */
  senses: 8,
  /** One synset, one lemma, or one lexicon intent class. */
  same: 1,
  /** A hypernym, troponym or verb-group neighbour. */
  near: 0.5,
  /** An antonym. */
  opposite: -1,
  /** Weight of a request verb that is not the request's first content word. */
  laterVerb: 0.5,
  /** Senses whose synonyms and neighbours extend a verb through the lexicon (fewer: their words drift). */
  wordSenses: 3,
  /** Whether a verb and the words after it are read as the phrasal verb WordNet lists (look_at, look_for). */
  phrasal: true,
  /**
   * Weight of the search a question implies (queryActions). Swept 0.3–1.0 on the tune halves
   * (eighth round): 0.5 gave +8 hit@1 over the four everyday sets' tune halves for −1 hit@1 on
   * LiveMCPBench's natural requests (hit@5 the same); 1.0 gave less. 0 turns it off.
   */
  questionSeeks: 0.5,
  /** Whether a question has no leading verb (its opener, not an imperative, comes first: "when was it last modified"). */
  questionNoLead: true,
  /** Whether a past tense after a subject pronoun is left out of the request's actions ("I saved it somewhere"). */
  narrativePast: true,
  /**
   * Whether a request that ends in a question mark is a question whatever its first word ("anything
   * in memory about kubernetes?", "anyone i know who's into rock climbing?"), unless its last
   * sentence asks for something to be done ("I lost budget.xlsx, can you track it down?": a modal
   * before "you", or a "please" first). Twelfth round, tune halves: +3 hit@1 and +3 hit@5 of 548
   * on the example config, LiveMCPBench unchanged.
   */
  questionMark: true,
};

/** A request's verb, with how much it speaks for the request's action. */
export interface QueryAction {
  word: string;
  weight: number;
  /** The request's first content word: the imperative ("open package.json and show it to me"). */
  leading: boolean;
  senses: VerbSenses;
  /** `senses` are not the word's own (a phrasal verb's, look_at, or a negated verb's antonym): its lexicon class is not its action. */
  phrasal?: true;
}

function verbOf(word: string): VerbSenses | undefined {
  return wordnet.verbSenses(word, ACTION.senses);
}

/** The first word of a text that is not a stopword, if it is a verb WordNet knows. */
function leadingVerb(text: string): string | undefined {
  for (const w of words(text)) {
    if (w.length < 2 || isStopword(w)) continue;
    return verbOf(w)?.lemma;
  }
  return undefined;
}

/** How many words after a description's leading verb its object is looked for in (a light verb's noun: "make line-based edits"). */
const LIGHT_VERB_REACH = 3;

/**
 * The verb lemmas that say what a tool does: its name's first word and its description's. A
 * description whose verb takes the name's own action as its noun ("edit_file": "*Make* line-based
 * *edits*", "search": "*Perform* a *search*") uses a light verb: the noun carries the action, so
 * the verb is not one of the tool's ("make" would agree with "create a file").
 */
export function toolActions(entry: Pick<CatalogEntry, "tool" | "description">): string[] {
  const named = leadingVerb(entry.tool);
  const out: string[] = named === undefined ? [] : [named];
  const described = leadingVerb(entry.description);
  if (described !== undefined && !out.includes(described) && !(named !== undefined && nounOfVerb(entry.description, named))) out.push(described);
  return out;
}

/** Whether the words right after a text's leading verb hold `lemma` as a noun (its stem: edits, searches). */
function nounOfVerb(text: string, lemma: string): boolean {
  const want = stem(lemma);
  let seen = -1;
  for (const w of words(text)) {
    if (seen < 0) {
      if (w.length >= 2 && !isStopword(w)) seen = 0;
      continue;
    }
    if (++seen > LIGHT_VERB_REACH) return false;
    if (stem(w) === want) return true;
  }
  return false;
}

/**
 * Words after which English puts a noun phrase, not a verb: "a *list* of tasks", "the *recording*",
 * "my *notes*". A closed grammatical class (articles, demonstratives, possessives), not a word
 * list about tools.
 */
const DETERMINERS = new Set(["a", "an", "the", "this", "that", "these", "those", "my", "your", "our", "their", "his", "her", "its", "each", "every", "no"]);

/**
 * Words a question opens with: the interrogatives and the auxiliaries English inverts ("what do
 * you remember about me", "is there a file called .env", "did I tell you..."). A closed
 * grammatical class, like the determiners. Modals (can, could, would, will) are left out: "can
 * you read docs/setup.md" is a polite request to act.
 */
const QUESTION_OPENERS = new Set(["what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was", "were", "am", "do", "does", "did", "has", "have", "had"]);

/** The subject pronouns (a closed class): a past tense right after one tells what was done. */
const SUBJECT_PRONOUNS = new Set(["i", "we", "you", "he", "she", "they"]);

/**
 * Whether a verb tells of something done rather than asks for it: a question's past tense or
 * participle ("when was index.html *created*", "what *changed* in the last release"), and a past
 * tense right after its subject ("I *saved* my resume somewhere", "check when I *created* it"):
 * what the answer is about, not the action the request asks a tool to take.
 */
function told(word: string, lemma: string, after: string, question: boolean): boolean {
  if (word === lemma || !word.endsWith("ed")) return false;
  return question || (ACTION.narrativePast && SUBJECT_PRONOUNS.has(after));
}

/** Whether a request asks to learn something rather than to have something done. */
export function isQuestion(query: string): boolean {
  for (const w of words(query)) return QUESTION_OPENERS.has(w) || (ACTION.questionMark && askedWithMark(query));
  return false;
}

/** What opens a request for something to be done, phrased as a question ("could you …?", "please …?"). */
const REQUEST_OPENERS = new Set(["can", "could", "would", "will", "may", "please", "pls", "plz"]);

/** The modals of a polite request: one right before "you" makes the sentence ask for an act ("…, can you track it down?"). */
const MODALS = new Set(["can", "could", "would", "will"]);

/** Whether the request ends in a question mark and its last sentence asks to learn, not for an act (ACTION.questionMark). */
function askedWithMark(query: string): boolean {
  if (!/\?["')\]]*\s*$/u.test(query)) return false;
  const last = query.split(/(?<=[.!?;:])\s+/u).filter((x) => x.trim().length > 0).at(-1) ?? query;
  const w = words(last);
  if (REQUEST_OPENERS.has(w[0] ?? "")) return false;
  for (let i = 0; i + 1 < w.length; i++) if (MODALS.has(w[i] as string) && w[i + 1] === "you") return false;
  return true;
}

/**
 * The request's direct object: the first content word after its leading verb that is not a
 * generic word ("create *an entity* Alice with the observation ...", "add a new *person*"). A tool
 * name is a verb and its object (create_entities), so the pair is what the name should hold: the
 * object of a prepositional phrase ("with the observation") is not what the request acts on.
 * Undefined when the request does not open with a verb.
 */
export function directObject(query: string): string | undefined {
  let seenVerb = false;
  let first = true;
  for (const w of words(query)) {
    if (w.length < 2 || isStopword(w)) continue;
    if (first) {
      first = false;
      if (!verbOf(w)) return undefined;
      seenVerb = true;
      continue;
    }
    if (seenVerb && !isGenericStem(stem(w))) return w;
  }
  return undefined;
}

/** The request's actions (requestVerbs). */
export function queryActions(query: string): QueryAction[] {
  return requestVerbs(query).actions;
}

/** A request's verbs, read in one pass. */
export interface RequestVerbs {
  actions: QueryAction[];
  /** The verbs that tell of something done (see `told`): no action, and no word a tool's name should hold. */
  told: Set<string>;
}

/**
 * The request's verbs: its content words that WordNet knows as verbs and that do not follow a
 * determiner, the first content word (the imperative's place) at full weight and `leading` set
 * when it is one, the others at ACTION.laterVerb; and, in the same pass, the verbs that tell.
 */
export function requestVerbs(query: string): RequestVerbs {
  const out: QueryAction[] = [];
  const toldWords = new Set<string>();
  let prev = "";
  let first = true;
  // A verb that tells of something done is no action (see `told`); a path's words are none.
  const question = isQuestion(query);
  const all = proseWords(query);
  for (let i = 0; i < all.length; i++) {
    const w = all[i] as string;
    const after = prev;
    prev = w;
    if (w.length < 2 || isStopword(w)) continue;
    const leading = first && !(ACTION.questionNoLead && question);
    first = false;
    if (DETERMINERS.has(after)) continue;
    const single = verbOf(w);
    if (!single) continue;
    const tells = told(w, single.lemma, after, question);
    if (tells) toldWords.add(w);
    if (out.length >= 8) continue; // past eight actions only the verbs that tell are still read
    // A phrasal verb says what the verb alone does not: "look *at*" views, "look *for*" searches.
    const found = ACTION.phrasal ? wordnet.phrasalVerbSenses(w, all.slice(i + 1, i + 3), ACTION.senses) : undefined;
    // Only a phrasal verb with a software reading replaces the verb: one of its synonyms is in a
    // lexicon class ("look at" → view, a read word). "look up" → consult, refer has none, and
    // "look" (a find word) says more about which tool is meant.
    const phrasal = found && found.senses.synonymWords.some(inLexiconClass) ? found : undefined;
    // A negated verb asks for its antonym: "don't forget" is remember, not delete.
    const negated = NEGATION.on && negates(after, i >= 2 ? (all[i - 2] as string) : "") ? wordnet.negatedSenses(phrasal?.senses ?? single) : undefined;
    const senses = negated ?? phrasal?.senses ?? single;
    if (phrasal) {
      // Its particles are part of it, not words of their own ("get rid *of*"; "rid of" is one too).
      i += phrasal.words;
      prev = all[i] as string;
    }
    if (out.some((a) => a.senses.lemma === senses.lemma)) continue;
    if (tells) continue;
    out.push({ word: w, weight: leading ? 1 : ACTION.laterVerb, leading, senses, ...(phrasal || negated ? { phrasal: true as const } : {}) });
  }
  // A question seeks to find something out: WordNet's "search" (try to locate or discover) joins
  // its actions, so that among tools its words match alike the one that searches comes first
  // ("who do you know at Acme?" → search_nodes, not open_nodes or read_graph).
  if (question && ACTION.questionSeeks > 0 && out.length < 8) {
    const seek = verbOf("search");
    if (seek && !out.some((a) => a.senses.lemma === seek.lemma)) out.push({ word: "search", weight: ACTION.questionSeeks, leading: false, senses: seek });
  }
  return { actions: out, told: toldWords };
}

/**
 * The stems a request verb reaches as the same action and as a near one: the verb, its WordNet
 * synonyms and neighbours, and the lexicon intent class of each ("drop" is near "remove" in
 * WordNet, and "remove" is one intent with "delete" in the software vocabulary).
 */
function stemsOf(q: QueryAction): { same: Set<string>; near: Set<string> } {
  const senses = wordnet.verbSenses(q.senses.lemma, ACTION.wordSenses) ?? q.senses;
  const withClass = (ws: readonly string[]): Set<string> => {
    const out = new Set<string>();
    for (const w of ws) {
      const s = stem(w);
      out.add(s);
      for (const syn of synonymsOf(s)) out.add(syn);
    }
    return out;
  };
  const same = withClass(q.phrasal ? senses.synonymWords : [q.word, q.senses.lemma, ...senses.synonymWords]);
  const near = withClass(senses.nearWords);
  for (const s of same) near.delete(s);
  return { same, near };
}


/**
 * The action lemmas of the indexed tools, and which lemmas a request verb reaches: by shared
 * synset, neighbour synset, antonym synset or lexicon class. Looking relations up through these
 * maps costs a request verb the size of its own senses, not the size of the catalogue's verbs.
 */
export class ActionIndex {
  private readonly docs = new Map<string, Set<number>>();
  private readonly bySynset = new Map<number, Set<string>>();
  private readonly byNear = new Map<number, Set<string>>();
  private readonly byOpposite = new Map<number, Set<string>>();
  private readonly byStem = new Map<string, Set<string>>();

  add(id: number, lemmas: readonly string[]): void {
    for (const lemma of lemmas) {
      let set = this.docs.get(lemma);
      if (!set) {
        this.docs.set(lemma, (set = new Set()));
        this.link(lemma, true);
      }
      set.add(id);
    }
  }

  remove(id: number, lemmas: readonly string[]): void {
    for (const lemma of lemmas) {
      const set = this.docs.get(lemma);
      if (!set) continue;
      set.delete(id);
      if (set.size === 0) {
        this.docs.delete(lemma);
        this.link(lemma, false);
      }
    }
  }

  /** Whether some indexed tool's action is this lemma. */
  has(lemma: string): boolean {
    return this.docs.has(lemma);
  }

  /** The docs of one action lemma. */
  docsOf(lemma: string): ReadonlySet<number> {
    return this.docs.get(lemma) ?? EMPTY_SET;
  }

  /** The indexed action lemmas a request verb relates to, with the relation (see verbRelation). */
  related(q: QueryAction): Map<string, number> {
    const out = new Map<string, number>();
    const offer = (lemma: string, r: number): void => {
      if (!this.docs.has(lemma)) return;
      const prev = out.get(lemma);
      // The strongest agreement wins; an opposition only where nothing agrees.
      if (prev === undefined || (r > 0 && r > prev) || (prev < 0 && r > prev)) out.set(lemma, r);
    };
    const { same, near } = stemsOf(q);
    for (const s of same) for (const l of this.byStem.get(s) ?? []) offer(l, ACTION.same);
    for (const s of near) for (const l of this.byStem.get(s) ?? []) offer(l, ACTION.near);
    for (const off of q.senses.synsets) {
      for (const l of this.bySynset.get(off) ?? []) offer(l, ACTION.same);
      for (const l of this.byNear.get(off) ?? []) offer(l, ACTION.near);
      for (const l of this.byOpposite.get(off) ?? []) offer(l, ACTION.opposite);
    }
    for (const off of q.senses.near) for (const l of this.bySynset.get(off) ?? []) offer(l, ACTION.near);
    for (const off of q.senses.opposite) for (const l of this.bySynset.get(off) ?? []) offer(l, ACTION.opposite);
    return out;
  }

  private link(lemma: string, add: boolean): void {
    const v = verbOf(lemma);
    const put = (map: Map<number | string, Set<string>>, key: number | string): void => {
      let set = map.get(key);
      if (add) {
        if (!set) map.set(key, (set = new Set()));
        set.add(lemma);
      } else if (set) {
        set.delete(lemma);
        if (set.size === 0) map.delete(key);
      }
    };
    put(this.byStem as Map<number | string, Set<string>>, stem(lemma));
    if (!v) return;
    for (const off of v.synsets) put(this.bySynset as Map<number | string, Set<string>>, off);
    for (const off of v.near) put(this.byNear as Map<number | string, Set<string>>, off);
    for (const off of v.opposite) put(this.byOpposite as Map<number | string, Set<string>>, off);
  }
}

const EMPTY_SET: ReadonlySet<number> = new Set();
