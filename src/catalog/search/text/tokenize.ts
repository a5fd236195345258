// Tokenisation shared by the index and the queries: the same text always yields the same terms.
//
//   "getUserRepos" / "get_user_repos" / "get-user-repos"  -> get, user, repos
//   "PÁGINA Índice"                                        -> pagina, indice
//   CJK runs ("搜索关键词")                                 -> overlapping bigrams
//
// Identifier splitting happens before lowercasing (it needs the case boundaries); diacritics are
// folded with NFKD + removal of combining marks, which covers far more than the Go fold list.
import { isStopword } from "./stopwords.js";
import { stem as stemWord } from "./stem.js";
import { truncateUtf8 } from "../../../util/text.js";

/** Text longer than this is clipped before tokenising (bounds the work per field and query). */
export const MAX_TOKENIZE_BYTES = 4096;
/** A query keeps at most this many distinct terms. */
export const MAX_QUERY_TERMS = 64;

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

// Most catalogue text is ASCII; it takes cheaper paths (same results) than full Unicode text.
const NON_ASCII = /[^\x00-\x7f]/;

/** Lowercases and folds diacritics (á -> a, ñ -> n, ü -> u, ...). */
export function foldText(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  return text.normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase();
}

function splitIdentifierCase(text: string): string {
  if (!NON_ASCII.test(text)) {
    return text.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z])([A-Z][a-z])/g, "$1 $2");
  }
  return text
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2") // getUser -> get User, v2Api -> v2 Api
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2"); // HTTPServer -> HTTP Server
}

function cjkBigrams(token: string): string[] {
  const chars = [...token];
  if (chars.length <= 2) return [token];
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(`${chars[i]}${chars[i + 1]}`);
  return out;
}

/**
 * Splits text into folded word tokens, stopwords included, in order. `_`, `-`, `.`, `/` and every
 * other non letter/digit character separate tokens.
 */
export function words(text: string): string[] {
  // ASCII text is never longer in bytes than in UTF-16 units, nor has CJK or non-ASCII letters:
  // it skips the byte clip, the Unicode-aware split and the CJK test (same tokens, less work).
  if (text.length <= MAX_TOKENIZE_BYTES && !NON_ASCII.test(text)) {
    const out: string[] = [];
    for (const raw of splitIdentifierCase(text).toLowerCase().split(/[^a-z0-9]+/)) if (raw.length > 0) out.push(raw);
    return out;
  }
  const clipped = truncateUtf8(text, MAX_TOKENIZE_BYTES);
  const folded = foldText(splitIdentifierCase(clipped));
  const out: string[] = [];
  for (const raw of folded.split(/[^\p{L}\p{N}]+/u)) {
    if (raw.length === 0) continue;
    if (CJK.test(raw)) out.push(...cjkBigrams(raw));
    else out.push(raw);
  }
  return out;
}

/** A term as indexed and searched: the folded word and its stem. */
export interface Term {
  word: string;
  stem: string;
  /**
   * A word that reaches no catalogue term and still counts as a request word: a word that only
   * names a file (NAMES_AS_VALUES), or the word a negation turns around ("don't *forget*": its
   * synonyms are delete and remove, the opposite of what is asked; signals/action.ts reads it
   * as its antonym instead).
   */
  value?: true;
  /**
   * The phrasal verb this word begins, where WordNet lists one ("*look* at" → look_at) and its
   * synonyms: the ranker reads the word through them rather than through the word's own
   * lexicon class ("look" is a find word; "look at" views). Set by the ranker, not here.
   */
  phrasal?: { lemma: string; synonyms: readonly string[] };
}

/** Stems are pure functions of the word; the vocabulary of a catalogue is small, so cache them. */
const STEM_CACHE = new Map<string, string>();
const STEM_CACHE_LIMIT = 200_000;

function stem(word: string): string {
  let s = STEM_CACHE.get(word);
  if (s === undefined) {
    s = stemWord(word);
    if (STEM_CACHE.size >= STEM_CACHE_LIMIT) STEM_CACHE.clear();
    STEM_CACHE.set(word, s);
  }
  return s;
}

function keep(word: string): boolean {
  return word.length >= 2 && !isStopword(word);
}

/**
 * The index side: every non-stopword token's stem, duplicates kept (term frequency counts).
 * Single-character tokens are dropped except digits ("3" in "mp3" stays part of its word anyway).
 */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) if (keep(w)) out.push(stem(w));
  return out;
}

/**
 * The query side: distinct terms in first-seen order (by stem), stopwords dropped, at most
 * MAX_QUERY_TERMS. An empty result means the query carries no intent (empty or all stopwords).
 */
export function queryTerms(text: string): Term[] {
  const seen = new Set<string>();
  const out: Term[] = [];
  for (const w of words(text)) {
    if (!keep(w)) continue;
    const s = stem(w);
    if (seen.has(s)) continue;
    seen.add(s);
    out.push({ word: w, stem: s });
    if (out.length >= MAX_QUERY_TERMS) break;
  }
  return out;
}

/**
 * Words that negate the word after them ("do *not* delete", "*never* forget", "don'*t* forget":
 * "don't" is split into don + t). A closed grammatical class.
 */
const NEGATIONS = new Set(["not", "never", "dont", "doesnt", "didnt"]);
const NEGATED_AUXILIARIES = new Set(["don", "doesn", "didn"]);

/** Whether the words before a word (the nearest first) negate it. */
export function negates(before: string, beforeThat: string): boolean {
  return NEGATIONS.has(before) || (before === "t" && NEGATED_AUXILIARIES.has(beforeThat));
}

/** Whether negated words are values (searchTerms) and negated verbs their antonyms (signals/action.ts); a switch for tests and benches. */
export const NEGATION = { on: true };

/** The words of a request that a negation right before them turns around. */
function negatedWords(text: string): Set<string> | undefined {
  if (!NEGATION.on) return undefined;
  const all = words(text);
  let out: Set<string> | undefined;
  for (let i = 1; i < all.length; i++) {
    if (negates(all[i - 1] as string, i >= 2 ? (all[i - 2] as string) : "")) (out ??= new Set()).add(all[i] as string);
  }
  return out;
}

/** The tokenizer as one function (folded, split, stopwords removed, not stemmed). */
export function tokenize(text: string): string[] {
  return words(text).filter(keep);
}

/** A file path (`/root/x/y.md`, `~/notes`, `./a/b`, `C:\x`) or a file name with an extension. */
const FILE_REFERENCE = /(?:^|[\s"'(])(?:~|\.{1,2}|[A-Za-z]:)?[/\\][\w.-]+[/\\]?|\b[\w-]+\.(?:[a-z][a-z0-9]{0,4})\b(?=$|[\s"'),;:])/u;

/**
 * Words that name a file are values, not capabilities (sixth round of issue 23): in "relocate
 * server.log to /tmp/old" the request is about moving a file, and *server*, *tmp* and *old* are
 * where it is and what it is called, so a tool whose text says "server" or "old" is no better a
 * match for them. A file reference is a whitespace-separated chunk shaped like a path (PATH_SHAPE;
 * not a URL) or a file name with an extension; its directory and base-name words reach no catalogue term
 * (Term.value) unless the request also says them outside a file reference. They stay request
 * words: resolve's coverage counts them as words no tool holds, as it would any name. The extension stays: it tells
 * the file's kind (md, jpg, csv), which tools do describe. The "file" term below is added as before.
 */
export const NAMES_AS_VALUES = { on: true };

const FILE_NAME = /^[\w~-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,5}$/u;
/**
 * What makes a chunk with a slash a path rather than an alternative ("file/directory",
 * "Twitter/X", "and/or"): a root (/, ~/, ./, ../, C:\), a trailing separator, three segments or
 * more, or a last segment with an extension.
 */
const PATH_SHAPE = /^(?:[/\\]|~[/\\]|\.{1,2}[/\\]|[A-Za-z]:[/\\])|[/\\]$|[^/\\]+[/\\][^/\\]+[/\\]|[/\\][^/\\]*\.[A-Za-z][A-Za-z0-9]{0,5}$/u;

/** The words of a request's file references that are only there as names (see NAMES_AS_VALUES). */
function fileNameWords(text: string): Set<string> | undefined {
  let named: Set<string> | undefined;
  const elsewhere = new Set<string>();
  for (const raw of text.split(/\s+/u)) {
    const chunk = raw.replace(/^["'`(\[<]+/u, "").replace(/[)"'`\]>,;:!?]+$/u, "").replace(/\.$/u, "");
    const isPath = /[/\\]/u.test(chunk) && !chunk.includes("://") && /\p{L}/u.test(chunk) && PATH_SHAPE.test(chunk);
    const isName = !isPath && chunk.length >= 4 && FILE_NAME.test(chunk);
    if (!isPath && !isName) {
      for (const w of words(raw)) elsewhere.add(w);
      continue;
    }
    const dot = chunk.lastIndexOf(".");
    const slash = Math.max(chunk.lastIndexOf("/"), chunk.lastIndexOf("\\"));
    const hasExtension = dot > slash + 1 && FILE_NAME.test(chunk.slice(slash + 1));
    const extension = hasExtension ? chunk.slice(dot + 1) : "";
    const nameWords = words(hasExtension ? chunk.slice(0, dot) : chunk);
    named ??= new Set<string>();
    for (const w of nameWords) named.add(w);
    for (const w of words(extension)) elsewhere.add(w);
  }
  if (!named) return undefined;
  for (const w of elsewhere) named.delete(w);
  return named.size > 0 ? named : undefined;
}

/**
 * Arithmetic between numbers, written with its symbols ("what's 1234 + 5678", "3 × 4", "15% of
 * 80"): the tokeniser drops symbols, so the request would say nothing; each operator reads as its
 * word (a closed class of five). A hyphen is left alone: between digits it is a date or a range.
 */
const OPERATORS: readonly [RegExp, string][] = [
  [/\d\s*\+\s*\d/u, "plus"],
  [/\d\s*[×*]\s*\d/u, "times"],
  [/\d\s*÷\s*\d/u, "divided"],
  [/\d\s+[−–]\s*\d|\d\s*−\s*\d/u, "minus"],
  [/\d\s*%/u, "percent"],
];

function operatorWords(text: string): string[] {
  const out: string[] = [];
  for (const [re, word] of OPERATORS) if (re.test(text)) out.push(word);
  return out;
}

/**
 * The terms a search uses: the query's own terms, plus "file" when the query mentions a file
 * path or file name — a task that names a file needs a tool that reads or writes files, even
 * when it never says the word.
 */
export function searchTerms(text: string): Term[] {
  const named = NAMES_AS_VALUES.on ? fileNameWords(text) : undefined;
  const negated = negatedWords(text);
  const asValue = (w: string): boolean => named?.has(w) === true || negated?.has(w) === true;
  const terms = named || negated ? queryTerms(text).map((t): Term => (asValue(t.word) ? { ...t, value: true } : t)) : queryTerms(text);
  for (const word of operatorWords(text)) {
    if (terms.length >= MAX_QUERY_TERMS) break;
    const s = stem(word);
    if (!terms.some((t) => t.stem === s)) terms.push({ word, stem: s });
  }
  if (terms.length > 0 && terms.length < MAX_QUERY_TERMS && !terms.some((t) => t.stem === "file") && FILE_REFERENCE.test(text)) {
    terms.push({ word: "file", stem: stem("file") });
  }
  return terms;
}
