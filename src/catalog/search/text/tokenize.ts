// Tokenisation shared by the index and the queries: the same text always yields the same terms.
//
//   "getUserRepos" / "get_user_repos" / "get-user-repos"  -> get, user, repos
//   "PÁGINA Índice"                                        -> pagina, indice
//   CJK runs ("搜索关键词")                                 -> overlapping bigrams
//
// Identifier splitting happens before lowercasing (it needs the case boundaries); diacritics are
// folded with NFKD + removal of combining marks, which covers far more than the Go fold list.
import { isStopword } from "./stopwords.js";
import { wordnet } from "./wordnet.js";
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
  /** Whether the word only names a file (a value for that reason: NAMES_AS_VALUES). */
  fileName?: true;
  /** Whether the request quotes the word (quotedWords): a literal it gives, which resolve's coverage does not ask a tool to hold. */
  quoted?: true;
  /** Whether the word is in the request's payload (payloadWords): what it gives after its instruction's colon. */
  payload?: true;
  /** Whether the term is the "file" a file name or path stands for (searchTerms), not a word the request says. */
  referenced?: true;
  /**
   * The phrasal verb this word begins, where WordNet lists one ("*look* at" → look_at) and its
   * synonyms: the ranker reads the word through them rather than through the word's own
   * lexicon class ("look" is a find word; "look at" views). Set by the ranker, not here.
   */
  phrasal?: { lemma: string; synonyms: readonly string[] };
  /**
   * A term the request implies rather than says, with the weight its matches count at: "entity"
   * for a request that names someone or something (the ranker's namedEntityWeight). It reaches
   * its own stem only, and it is no request word: resolve's coverage, explanations and matched terms leave
   * it out. Set by the ranker, not here.
   */
  implied?: number;
  /**
   * Whether an implied term also orders the tools of a server the request reaches ("relation"
   * for a request that names two things: the tools whose own text holds it), not only servers.
   */
  impliedForTools?: boolean;
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
 * The index side: every non-stopword token's stem, duplicates kept (term frequency counts),
 * except a word right after a negation. Single-character tokens are dropped except digits ("3" in
 * "mp3" stays part of its word anyway).
 */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  const all = words(text);
  for (let i = 0; i < all.length; i++) {
    const w = all[i] as string;
    if (!keep(w)) continue;
    // A word a tool's text negates is not what the tool does ("when you don't *know* their
    // location"), as a request's negated word is a value, not its intent (negatedWords).
    if (NEGATION.on && i > 0 && negates(all[i - 1] as string, i >= 2 ? (all[i - 2] as string) : "")) continue;
    out.push(stem(w));
  }
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

const CLOSING_QUOTE: Readonly<Record<string, string>> = { '"': '"', "“": "”", "'": "'", "‘": "’", "`": "`", "«": "»" };

/**
 * The words a request quotes ("replace 'recieve' with 'receive'"): a quote opens at a word's
 * start and closes at a word's end with its own closing mark, so an apostrophe ("don't",
 * "Mike's") opens nothing. Undefined when it quotes nothing.
 */
export function quotedWords(text: string): Set<string> | undefined {
  let out: Set<string> | undefined;
  const span = /(^|[\s([{:,=])(["“'‘`«])([^\n]{1,200}?)(["”'’`»])(?=$|[\s)\]}.,;:!?])/gu;
  for (const m of text.matchAll(span)) {
    if (CLOSING_QUOTE[m[2] as string] !== m[4]) continue;
    for (const w of words(m[3] as string)) (out ??= new Set()).add(w);
  }
  return out;
}

/**
 * Whether the words after a request's first colon are its payload (payloadWords), and whether
 * resolve's coverage leaves them out even when the catalogue knows them (`known`; a quoted word
 * only when it does not: QUOTED_WORDS). They still rank: read as values they cost the example
 * config's check halves 3 hit@5. Fourteenth round of issue 23: the tune halves could not tell
 * the two readings from off; on the check halves, unknown words only: one right confident answer
 * more; known ones too: one wrong fewer ("repeat after me: testing one two" was confidently
 * get-sum). The safer reading ships: a literal is never evidence for a tool. Switches for tests and benches.
 */
export const PAYLOAD = { on: true, known: true };

/**
 * The words a request gives after a colon that ends its instruction ("repeat after me: testing
 * one two", "save this as notes.md: buy milk"): what to write, say or store, a literal as a quoted
 * word is. The colon follows a letter and whitespace follows it (not 10:30, C:\, https:). Words
 * the instruction says too stay words. Undefined when there is none.
 */
export function payloadWords(text: string): Set<string> | undefined {
  if (!PAYLOAD.on) return undefined;
  const m = /\p{L}:\s+/u.exec(text);
  if (!m) return undefined;
  const before = new Set(words(text.slice(0, m.index + 1)));
  if (before.size === 0) return undefined;
  let out: Set<string> | undefined;
  for (const w of words(text.slice(m.index + m[0].length))) if (!before.has(w)) (out ??= new Set()).add(w);
  return out;
}

/** The tokenizer as one function (folded, split, stopwords removed, not stemmed). */
export function tokenize(text: string): string[] {
  return words(text).filter(keep);
}

/**
 * Words that name a file are values, not capabilities (sixth round of issue 23): in "relocate
 * server.log to /tmp/old" the request is about moving a file, and *server*, *tmp* and *old* are
 * where it is and what it is called, so a tool whose text says "server" or "old" is no better a
 * match for them. A file reference is a whitespace-separated chunk shaped like a path (PATH_SHAPE;
 * not a URL), a file name with an extension, or a dot-file (`.bashrc`, `.env.example`); its
 * directory and base-name words reach no catalogue term (Term.value) unless the request also says
 * them outside a file reference. They stay request words: resolve's coverage counts them as words
 * no tool holds, as it would any name. The extension stays: it tells the file's kind (md, jpg,
 * csv), which tools do describe. The "file" term below is added as before.
 */
export const NAMES_AS_VALUES = { on: true };

/**
 * Whether snake_case identifiers are values too (searchTerms' `identifiers` says which). Fourteenth
 * round of issue 23: "skipping node_modules" no longer reaches memory's *nodes*.
 */
export const IDENTIFIERS_AS_VALUES = { on: true };

/** A file name with an extension, a dot-file's included (`.env.example`). */
const FILE_NAME = /^\.?[\w~-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,5}$/u;
/** A dot-file (`.bashrc`, `.gitignore`, `.env.example`): a name Unix hides, never a word. */
const DOT_FILE = /^\.[A-Za-z][\w.-]+$/u;
/**
 * What makes a chunk with a slash a path rather than an alternative ("file/directory",
 * "Twitter/X", "and/or"): a root (/, ~/, ./, ../, C:\), a trailing separator, three segments or
 * more, or a last segment with an extension.
 */
const PATH_SHAPE = /^(?:[/\\]|~[/\\]|\.{1,2}[/\\]|[A-Za-z]:[/\\])|[/\\]$|[^/\\]+[/\\][^/\\]+[/\\]|[/\\][^/\\]*\.[A-Za-z][A-Za-z0-9]{0,5}$/u;

/**
 * A snake_case identifier (`node_modules`, `old_logs`, `get_user`): no English word is written so,
 * so it names a thing of the user's (a folder, a function) as a file name does, unless it is a
 * name or a term the catalogue gives (searchTerms' `identifiers` predicate decides: a tool's name,
 * or every part a catalogue word, as in `resource_link`). Its words become values: they reach no
 * catalogue term, and resolve's coverage still counts them as words no tool holds (unlike a
 * file's name: the coverage test of an identifier measured one wrong confident answer more).
 * A double underscore between words is the gateway's own `server__tool` form: a tool's name,
 * whether or not one has it, so its words stay words (they find its namesakes).
 */
const IDENTIFIER = /^_*[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+_*$/u;

/** A path from a root: `/`, `~/`, `./`, `../`, `C:\`. */
const ROOTED = /^(?:[/\\]|~[/\\]|\.{1,2}[/\\]|[A-Za-z]:[/\\])/u;

/** A file a request names: the chunk as written (quotes and closing punctuation off). */
export interface FileReference {
  chunk: string;
  /** The words of its directories and base name (what only names it). */
  nameWords: string[];
  /** The words of its extension ("md", "tar gz"): they tell the file's kind. */
  extensionWords: string[];
  /** Whether it names a file (an extension or a dot-file) rather than only a directory path (`/var/backups`). */
  isFile: boolean;
}

/** Strips what wraps a chunk of prose around a file reference: quotes, brackets, a possessive, closing punctuation. */
function bareChunk(raw: string): string {
  return raw
    .replace(/^["'`(\[<]+/u, "")
    .replace(/[)"'`\]>,;:!?]+$/u, "")
    .replace(/'s$/u, "")
    .replace(/\.$/u, "");
}

/**
 * One chunk of a request read as a file reference, or undefined. The one detector of file
 * references: the "file" term, the words that only name a file and grammatical number
 * (signals/number.ts) all read requests through it, so they never disagree on what a file is.
 */
function fileReferenceOf(raw: string): FileReference | undefined {
  const chunk = bareChunk(raw);
  const isPath = /[/\\]/u.test(chunk) && !chunk.includes("://") && /\p{L}/u.test(chunk) && PATH_SHAPE.test(chunk);
  const isName = !isPath && chunk.length >= 4 && FILE_NAME.test(chunk);
  const isDotFile = !isPath && !isName && chunk.length >= 3 && DOT_FILE.test(chunk);
  if (!isPath && !isName && !isDotFile) return undefined;
  const dot = chunk.lastIndexOf(".");
  const slash = Math.max(chunk.lastIndexOf("/"), chunk.lastIndexOf("\\"));
  const hasExtension = !isDotFile && dot > slash + 1 && FILE_NAME.test(chunk.slice(slash + 1));
  return {
    chunk,
    nameWords: words(hasExtension ? chunk.slice(0, dot) : chunk),
    extensionWords: hasExtension ? words(chunk.slice(dot + 1)) : [],
    isFile: hasExtension || isDotFile,
  };
}

/**
 * The proper names a request says: capitalised words ("Anna", "Brightline", "Zoë") that are not
 * the first word of a sentence (where any word is capitalised) unless a possessive marks them
 * ("Mei's birthday"), not written all in capitals (an acronym: API, PDF), not a pronoun's
 * contraction ("He's") and not part of a file reference. Folded, in order, distinct.
 */
export function properNames(text: string): string[] {
  return [...new Set(properNameMentions(text).flatMap((m) => m.words))];
}

/** A proper name as said once: its words, and whether only a list's commas and "and"s part it from the name before. */
export interface NameMention {
  words: string[];
  listed: boolean;
  /** Whether the name before it is in the same clause, at most NEAR_WORDS words before it (no sentence end, colon, semicolon or dash between). */
  near: boolean;
}

/** How far apart two names of one clause may be for a phrase to join them ("Jane is married to Mark": 3). */
const NEAR_WORDS = 4;

/** What joins the items of a list: a name after only these is the list's next item, not a second party. */
const COORDINATORS = new Set(["and", "or", "nor", "&", "plus"]);

/**
 * The same names as mentions: a run of capitalised words side by side is one name ("Ana
 * Souza", "Project Falcon"); a comma, a possessive or any other word ends it.
 */
export function properNameMentions(text: string): NameMention[] {
  const out: NameMention[] = [];
  let current: NameMention | undefined;
  let initial = true;
  /** Since the last mention: only list separators (undefined before the first). */
  let listed: boolean | undefined;
  /** Words since the last mention, Infinity past a clause's end (or before the first mention). */
  let gap = Infinity;
  const chunks = text.split(/\s+/u).filter((c) => c.length > 0);
  for (let i = 0; i < chunks.length; i++) {
    const raw = chunks[i] as string;
    const atStart = initial;
    initial = /[.!?:]["')\]]*$/u.test(raw);
    const clauseEnds = initial || /[;]["')\]]*$/u.test(raw) || /^[-–—]+$/u.test(raw);
    const m = fileReferenceOf(raw) ? null : /^["'`(\[]*(\p{Lu}\p{Ll}[\p{L}'’-]*)/u.exec(raw);
    const word = m?.[1];
    // A contraction of a pronoun ("He's") looks like a possessive; a pronoun is no name.
    if (word === undefined || (atStart && !/['’]s$/u.test(word) && !subjectName(word, chunks[i + 1])) || isStopword(foldText(word.replace(/['’]s$/u, "")))) {
      current = undefined;
      if (listed === true && !COORDINATORS.has(raw.replace(/[,;]+$/u, "").toLowerCase())) listed = false;
      gap = clauseEnds ? Infinity : gap + 1;
      continue;
    }
    if (!current) out.push((current = { words: [], listed: listed === true, near: gap <= NEAR_WORDS }));
    current.words.push(...words(word.replace(/['’]s$/u, "")));
    // A comma ends a name and may go on a list; a possessive or a sentence's end ends it ("Bob's manager Carol": two people).
    const comma = /,["')\]]*$/u.test(raw);
    if (comma || /['’]s?["')\]]*$/u.test(raw) || initial) current = undefined;
    listed = current === undefined ? comma : true;
    gap = clauseEnds ? Infinity : 0;
  }
  return out;
}

/**
 * The finite forms English puts right after a sentence's subject: the auxiliaries (a closed
 * grammatical class, like DETERMINERS in signals/action.ts). A verb's third person (-s) is found
 * through WordNet instead.
 */
const AUXILIARIES = new Set(["is", "isn't", "was", "wasn't", "has", "hasn't", "does", "doesn't", "did", "didn't", "will", "won't", "can't"]);

/**
 * A sentence-initial word WordNet knows only as a singular noun, followed by a finite verb (an
 * auxiliary or a third person), is a name too ("*Leo* doesn't report to Dana", "*Sarah* isn't
 * Mike's manager", "*Tom* works for Globex", "*Ana* owns the Helios project": WordNet holds the
 * constellation, the matriarch, the tomcat and the fish). A common noun leads a sentence with its
 * determiner ("The report is"), and a mass noun seldom stands first before a verb in a request.
 * Twelfth round, with auxiliaries only: +1 right confident answer on the tune halves, no rank
 * moved; thirteenth, with third persons as well: +2 hit@1 and +2 hit@5 of 565 on the example
 * config, LiveMCPBench and MCP-Zero unchanged.
 */
const SUBJECT_NOUN_NAMES = true;

/**
 * Whether a sentence's first word is a name: a word WordNet does not know, followed by a finite
 * verb ("*Henk* works for Bluewave", "*Jenna* is mentoring Carlos"). An imperative is followed by
 * its object, not a verb ("Unlink ana from acme"), and a known word may be the sentence's verb or
 * noun ("Check", "Mark").
 */
function subjectName(word: string, next: string | undefined): boolean {
  if (next === undefined) return false;
  const folded = foldText(word);
  const verb = foldText(next.replace(/[,.;:!?"')\]]+$/u, ""));
  // A verb's third person: an -s form whose WordNet base form is another word ("works" → work).
  const thirdPerson = (): boolean => {
    if (!/^[a-z]+s$/u.test(verb)) return false;
    const lemma = wordnet.verbSenses(verb, 1)?.lemma;
    return lemma !== undefined && lemma !== verb;
  };
  if (wordnet.knows(folded)) return SUBJECT_NOUN_NAMES && wordnet.knowsOnlyAsNoun(folded) && !folded.endsWith("s") && (AUXILIARIES.has(verb.replace(/’/gu, "'")) || thirdPerson());
  if (AUXILIARIES.has(verb.replace(/’/gu, "'"))) return true;
  return thirdPerson();
}

/** What proseWords puts where a file reference was: no word (one character), so nothing reads across it. */
const FILE_PLACE = "\u0000";

/**
 * The words of a text with each file reference as FILE_PLACE ("what's in ~/Downloads?" → what, s,
 * in, FILE_PLACE): a path's words name, they do not act, and a phrasal verb's particle must follow
 * the verb ("put report.pdf in the archive" is no "put in").
 */
export function proseWords(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\s+/u)) {
    if (raw.length === 0) continue;
    if (fileReferenceOf(raw)) out.push(FILE_PLACE);
    else out.push(...words(raw));
  }
  return out;
}

/** The files a request names, in order (whitespace-separated chunks shaped like paths or file names). */
export function fileReferences(text: string): FileReference[] {
  const out: FileReference[] = [];
  for (const raw of text.split(/\s+/u)) {
    const ref = raw.length > 0 ? fileReferenceOf(raw) : undefined;
    if (ref) out.push(ref);
  }
  return out;
}

/**
 * Whether the request names a folder: a path that ends in a separator ("docs/"), or a path from a
 * root without a file's extension ("~/Downloads", "C:\\Projects\\app").
 */
export function namesFolder(text: string): boolean {
  return fileNameWords(text).folder;
}

/**
 * The words of a request's file references that are only there as names (see NAMES_AS_VALUES),
 * and whether it says a file is involved (a file name, or a path from a root).
 */
function fileNameWords(text: string, identifiers?: (identifier: string) => boolean): { named?: Set<string>; identified?: Set<string>; any: boolean; folder: boolean } {
  let named: Set<string> | undefined;
  let identified: Set<string> | undefined;
  let any = false;
  let folder = false;
  const elsewhere = new Set<string>();
  for (const raw of text.split(/\s+/u)) {
    const ref = raw.length > 0 ? fileReferenceOf(raw) : undefined;
    if (!ref) {
      const bare = identifiers ? bareChunk(raw) : "";
      if (identifiers && IDENTIFIER.test(bare) && identifiers(bare)) {
        identified ??= new Set<string>();
        for (const w of words(bare)) identified.add(w);
        continue;
      }
      for (const w of words(raw)) elsewhere.add(w);
      continue;
    }
    // A directory path without a root ("src/utils/helpers", "assets/") may be a folder to make
    // or list; only a file, or a path from a root, says a file is involved.
    if (ref.isFile || ROOTED.test(ref.chunk)) any = true;
    if (!ref.isFile && (/[/\\]$/u.test(ref.chunk) || ROOTED.test(ref.chunk))) folder = true;
    named ??= new Set<string>();
    for (const w of ref.nameWords) named.add(w);
    for (const w of ref.extensionWords) elsewhere.add(w);
  }
  if (identified) for (const w of elsewhere) identified.delete(w);
  const ids = identified && identified.size > 0 ? { identified } : {};
  if (!named) return { ...ids, any, folder };
  for (const w of elsewhere) named.delete(w);
  return named.size > 0 ? { named, ...ids, any, folder } : { ...ids, any, folder };
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
export function searchTerms(text: string, identifiers?: (identifier: string) => boolean): Term[] {
  const files = fileNameWords(text, IDENTIFIERS_AS_VALUES.on ? identifiers : undefined);
  const named = NAMES_AS_VALUES.on ? files.named : undefined;
  const negated = negatedWords(text);
  const identified = files.identified;
  const asValue = (w: string): boolean => named?.has(w) === true || negated?.has(w) === true || identified?.has(w) === true;
  const marked = named || negated || identified ? queryTerms(text).map((t): Term => (asValue(t.word) ? { ...t, value: true, ...(named?.has(t.word) === true ? { fileName: true as const } : {}) } : t)) : queryTerms(text);
  const quotedOnly = quotedWords(text);
  const payload = payloadWords(text);
  const quoted = payload ? new Set([...(quotedOnly ?? []), ...payload]) : quotedOnly;
  const terms = quoted ? marked.map((t): Term => (quoted.has(t.word) ? { ...t, quoted: true, ...(payload?.has(t.word) ? { payload: true as const } : {}) } : t)) : marked;
  for (const word of operatorWords(text)) {
    if (terms.length >= MAX_QUERY_TERMS) break;
    const s = stem(word);
    if (!terms.some((t) => t.stem === s)) terms.push({ word, stem: s });
  }
  if (terms.length > 0 && terms.length < MAX_QUERY_TERMS && !terms.some((t) => t.stem === "file") && files.any) {
    terms.push({ word: "file", stem: stem("file"), referenced: true });
  }
  return terms;
}
