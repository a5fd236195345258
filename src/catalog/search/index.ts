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
import { synonymsOf } from "./lexicon.js";
import { foldText, indexTerms, searchTerms, type Term } from "./tokenize.js";
import { truncateUtf8 } from "./text.js";
import { Vocabulary } from "./vocabulary.js";

export interface RankedMatch {
  entry: CatalogEntry;
  score: number;
  matchedTerms: string[];
}

export interface SearchOptions {
  maxHits?: number;
  filter?: (e: CatalogEntry) => boolean;
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
  prefixWeight: 0.4,
  fuzzyWeight: 0.4,
  /** Evidence multiplier per unit of matched fraction (coordination). */
  coverage: 1.0,
  /** How much server-level evidence counts next to tool-level evidence. */
  serverWeight: 1.0,
  scale: 10,
  /** Longest query (in bytes) that the phrase bonus compares against names and text. */
  phraseMaxBytes: 256,
  /** Prefix expansions per query term (the shortest, then alphabetical: deterministic). */
  maxPrefixExpansions: 8,
} as const;

/**
 * A posting list whose weighted IDF is below this can add at most ~1 point (0.05 × 2.2 × 10) to
 * any score. Such expansions (synonyms, prefixes, typos of words found nearly everywhere) are
 * skipped, which keeps them from costing time; the query's own word still matches, with its
 * weight floored here, so a word present in every entry still matches every entry.
 */
const NEGLIGIBLE = 0.05;

/** Phrase bonuses (first rule that applies), on the final integer scale. */
const PHRASE = { exactName: 40, exactTitle: 30, inName: 22, inTitle: 18, inText: 12 } as const;

interface Doc {
  entry: CatalogEntry;
  terms: string[];
  phraseName: string;
  phraseNamespaced: string;
  phraseTitle: string;
  /** Description and hints in phrase form; computed on first use (only short queries need it). */
  phraseText?: string;
}

interface ServerDoc {
  name: string;
  docIds: number[];
  terms: string[];
}

/** Folds and turns identifier separators into spaces, for whole-phrase comparisons. */
function phraseForm(text: string): string {
  return foldText(truncateUtf8(text, 4096)).replace(/[\s_\-./:]+/gu, " ").trim();
}

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
  private readonly toolPostings = new Postings();
  private readonly serverPostings = new Postings();
  private readonly vocab = new Vocabulary();
  /** Exact-name lookups (lowercased). */
  private readonly byName = new Map<string, Set<number>>();
  private readonly byFragment = new Map<string, Set<number>>();
  private docCount = 0;
  private serverCount = 0;

  size(): number {
    return this.docCount;
  }

  setServer(server: string, entries: CatalogEntry[]): void {
    this.removeServer(server);
    if (entries.length === 0) return;
    const docIds: number[] = [];
    for (const entry of entries) {
      const id = this.freeDocIds.pop() ?? this.docs.length;
      const tf = weightedTf(entry, TOOL_FIELDS);
      this.docs[id] = {
        entry,
        terms: [...tf.keys()],
        phraseName: phraseForm(entry.tool),
        phraseNamespaced: phraseForm(entry.namespaced),
        phraseTitle: phraseForm(entry.title ?? ""),
      };
      docIds.push(id);
      this.docCount++;
      for (const [term, f] of tf) {
        this.toolPostings.add(term, id, f);
        this.vocab.add(term);
      }
      for (const name of namesOf(entry)) addTo(this.byName, name, id);
      addTo(this.byFragment, entry.tool.toLowerCase(), id);
    }
    const sid = this.freeServerIds.pop() ?? this.servers.length;
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
    const gone = new Set(sdoc.docIds);
    const terms = new Set<string>();
    for (const id of sdoc.docIds) for (const term of this.docs[id]?.terms ?? []) terms.add(term);
    for (const term of terms) this.toolPostings.remove(term, gone);
    for (const id of sdoc.docIds) {
      const doc = this.docs[id];
      if (!doc) continue;
      for (const term of doc.terms) this.vocab.release(term);
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
    this.serverCount--;
  }

  /** Every entry currently indexed (unordered). */
  entries(): CatalogEntry[] {
    const out: CatalogEntry[] = [];
    for (const d of this.docs) if (d) out.push(d.entry);
    return out;
  }

  /** The number of query terms a search uses (0 for an empty or all-stopword query). */
  termCount(query: string): number {
    return searchTerms(query).length;
  }

  /** The full ranked list (or the first `maxHits`): best first, ties by namespaced name. */
  search(query: string, opts: SearchOptions = {}): RankedMatch[] {
    const limit = opts.maxHits !== undefined && opts.maxHits > 0 ? opts.maxHits : Number.POSITIVE_INFINITY;
    return this.rank(query, { limit, ...(opts.filter ? { filter: opts.filter } : {}) }).matches;
  }

  /** Like search, but materialises only the first `limit` matches and reports the total. */
  rank(query: string, opts: { limit: number; filter?: (e: CatalogEntry) => boolean }): Ranking {
    const filter = opts.filter;
    const terms = searchTerms(query);
    const exact = this.exactNameHits(query, filter);
    if (terms.length === 0 && exact.size === 0) return { matches: [], total: 0 };

    const n = this.docs.length;
    const ns = this.servers.length;
    const total = new Float64Array(n);
    const best = new Float64Array(n);
    const serverTotal = new Float64Array(ns);
    const serverBest = new Float64Array(ns);
    // Which terms each doc (and each server) matched, as a 64-bit mask in two words (≤ 64 terms).
    const maskLo = new Uint32Array(n);
    const maskHi = new Uint32Array(n);
    const serverMaskLo = new Uint32Array(ns);
    const serverMaskHi = new Uint32Array(ns);
    const touchedDocs: number[] = [];
    const touchedServerIds: number[] = [];

    // Tool-level and server-level evidence add up (a doc's score for a term is its own best
    // variant plus its server's best variant), so the two are accumulated separately and the
    // server totals are spread over the server's tools once at the end, not once per term.
    for (let t = 0; t < terms.length; t++) {
      const variants = this.variants(terms[t] as Term);
      const lo = t < 32 ? 1 << t : 0;
      const hi = t < 32 ? 0 : 1 << (t - 32);
      accumulate(variants, this.toolPostings, this.docCount, 1, best, total, maskLo, maskHi, lo, hi, touchedDocs);
      accumulate(variants, this.serverPostings, this.serverCount, SCORER.serverWeight, serverBest, serverTotal, serverMaskLo, serverMaskHi, lo, hi, touchedServerIds);
    }
    for (const sid of touchedServerIds) {
      const c = serverTotal[sid] as number;
      const lo = serverMaskLo[sid] as number;
      const hi = serverMaskHi[sid] as number;
      for (const id of this.servers[sid]?.docIds ?? []) {
        if (maskLo[id] === 0 && maskHi[id] === 0) touchedDocs.push(id);
        total[id] = (total[id] as number) + c;
        maskLo[id] = (maskLo[id] as number) | lo;
        maskHi[id] = (maskHi[id] as number) | hi;
      }
    }
    const matchedCount = (id: number): number => popcount(maskLo[id] as number) + popcount(maskHi[id] as number);

    const qPhrase = phraseForm(query);
    const usePhrase = qPhrase.length > 0 && Buffer.byteLength(qPhrase) <= SCORER.phraseMaxBytes;
    const candidates: number[] = [];
    const score = new Float64Array(n);
    for (const id of exact) if (matchedCount(id) === 0) touchedDocs.push(id);
    for (const id of touchedDocs) {
      const doc = this.docs[id];
      if (!doc || (filter && !filter(doc.entry))) continue;
      const hits = matchedCount(id);
      if (hits === 0 && !exact.has(id)) continue; // a phrase bonus alone never makes a match
      const mf = terms.length > 0 ? hits / terms.length : 0;
      let s = Math.round(SCORER.scale * (total[id] as number) * (1 + SCORER.coverage * mf));
      // A phrase contained in a name, title or description has all its words there, so only
      // entries that matched every term can earn the bonus (this keeps it off the hot path).
      if (usePhrase && (hits === terms.length || exact.has(id))) s += this.phraseBonus(doc, qPhrase);
      score[id] = s;
      candidates.push(id);
    }
    // Only the first `limit` need a full sort: find the score a match needs to be among them
    // (a native numeric sort), then sort just those with the exact-name and name tie-breaks.
    let pool = candidates;
    if (candidates.length > opts.limit) {
      const sorted = Float64Array.from(candidates, (id) => score[id] as number).sort();
      const threshold = sorted[sorted.length - opts.limit] as number;
      pool = candidates.filter((id) => (score[id] as number) >= threshold || exact.has(id));
    }
    const name = (id: number): string => this.docs[id]?.entry.namespaced ?? "";
    pool.sort(
      (a, b) => Number(exact.has(b)) - Number(exact.has(a)) || (score[b] as number) - (score[a] as number) || compareNames(name(a), name(b)),
    );
    const top = pool.slice(0, Math.min(pool.length, opts.limit));
    // matched_terms in query-term order, for the returned matches only.
    const matchedWords = (id: number): string[] => {
      const out: string[] = [];
      for (let t = 0; t < terms.length; t++) {
        const bit = t < 32 ? ((maskLo[id] as number) >>> t) & 1 : ((maskHi[id] as number) >>> (t - 32)) & 1;
        if (bit) out.push(terms[t]?.word ?? "");
      }
      return out;
    };
    const matches = top.map((id) => ({
      entry: (this.docs[id] as Doc).entry,
      score: score[id] as number,
      matchedTerms: matchedWords(id),
    }));
    return { matches, total: candidates.length };
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

  /** The stems a query term reaches, each with the weight of that kind of match. */
  private variants(term: Term): Variant[] {
    const out = new Map<string, number>();
    const put = (s: string, w: number): void => {
      if (w > (out.get(s) ?? 0)) out.set(s, w);
    };
    put(term.stem, 1);
    if (term.word !== term.stem && this.vocab.has(term.word)) put(term.word, 1);
    for (const syn of synonymsOf(term.stem)) put(syn, SCORER.synonymWeight);
    for (const p of this.vocab.prefixRelated(term.stem, SCORER.maxPrefixExpansions)) put(p, SCORER.prefixWeight);
    if (!this.vocab.has(term.stem)) for (const f of this.vocab.oneEditAway(term.stem)) put(f, SCORER.fuzzyWeight);
    return [...out].map(([stem, weight]) => ({ stem, weight }));
  }

  private phraseBonus(doc: Doc, q: string): number {
    if (q === doc.phraseName || q === doc.phraseNamespaced) return PHRASE.exactName;
    if (doc.phraseTitle.length > 0 && q === doc.phraseTitle) return PHRASE.exactTitle;
    // Whole-word containment: "get" must not count as contained in "together".
    const padded = ` ${q} `;
    if (` ${doc.phraseName} `.includes(padded)) return PHRASE.inName;
    if (` ${doc.phraseTitle} `.includes(padded)) return PHRASE.inTitle;
    const e = doc.entry;
    doc.phraseText ??= phraseForm(`${e.description} ${e.useWhen.join(" ")} ${e.toolUseWhen.join(" ")}`);
    if (` ${doc.phraseText} `.includes(padded)) return PHRASE.inText;
    return 0;
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

function namesOf(entry: CatalogEntry): Set<string> {
  return new Set([entry.namespaced, `${entry.server}__${entry.wire}`, entry.wire].map((s) => s.toLowerCase()));
}

function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}
