// The search index over the in-scope catalogue: an inverted index of stems with a BM25F-style
// scorer (field weights, length normalisation against fixed reference lengths, tf saturation,
// IDF), query-side synonym expansion, prefix and one-edit typo matching, a phrase bonus and an
// exact-name fast path. Entries are grouped by server so that a tools/list change on one server
// re-indexes only that server's entries.
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
  maxExpansionsPerTerm: 40,
} as const;

/** Phrase bonuses (first rule that applies), on the final integer scale. */
const PHRASE = { exactName: 40, exactTitle: 30, inName: 22, inTitle: 18, inText: 12 } as const;

interface Doc {
  id: number;
  entry: CatalogEntry;
  /** stem -> weighted, length-normalised term frequency over all fields. */
  tf: Map<string, number>;
  phraseName: string;
  phraseNamespaced: string;
  phraseTitle: string;
  phraseText: string;
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

function buildDoc(id: number, entry: CatalogEntry): Doc {
  return {
    id,
    entry,
    tf: weightedTf(entry, TOOL_FIELDS),
    phraseName: phraseForm(entry.tool),
    phraseNamespaced: phraseForm(entry.namespaced),
    phraseTitle: phraseForm(entry.title ?? ""),
    phraseText: phraseForm(`${entry.description} ${entry.useWhen.join(" ")} ${entry.toolUseWhen.join(" ")}`),
  };
}

function saturate(tf: number): number {
  return (tf * (SCORER.k1 + 1)) / (tf + SCORER.k1);
}

interface Variant {
  stem: string;
  weight: number;
}

interface ServerDoc {
  id: number;
  name: string;
  docIds: number[];
  tf: Map<string, number>;
}

/** Per-level posting lists: stem -> ids (tool docs or server docs). */
class Postings {
  private readonly lists = new Map<string, number[]>();

  get(term: string): readonly number[] | undefined {
    return this.lists.get(term);
  }

  add(term: string, id: number): void {
    const list = this.lists.get(term);
    if (list) list.push(id);
    else this.lists.set(term, [id]);
  }

  /** Removes the ids in `gone` from `term`'s list; true when the list became empty. */
  remove(term: string, gone: ReadonlySet<number>): boolean {
    const list = this.lists.get(term);
    if (!list) return false;
    const kept = list.filter((id) => !gone.has(id));
    if (kept.length > 0) this.lists.set(term, kept);
    else this.lists.delete(term);
    return kept.length === 0;
  }
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
  private scratch = new Float64Array(0);

  size(): number {
    return this.docCount;
  }

  setServer(server: string, entries: CatalogEntry[]): void {
    this.removeServer(server);
    if (entries.length === 0) return;
    const docIds: number[] = [];
    for (const entry of entries) {
      const id = this.freeDocIds.pop() ?? this.docs.length;
      const doc = buildDoc(id, entry);
      this.docs[id] = doc;
      docIds.push(id);
      this.docCount++;
      for (const term of doc.tf.keys()) {
        this.toolPostings.add(term, id);
        this.vocab.add(term);
      }
      for (const name of new Set([entry.namespaced, `${entry.server}__${entry.wire}`, entry.wire])) {
        addTo(this.byName, name.toLowerCase(), id);
      }
      addTo(this.byFragment, entry.tool.toLowerCase(), id);
    }
    const sid = this.freeServerIds.pop() ?? this.servers.length;
    const sdoc: ServerDoc = { id: sid, name: server, docIds, tf: weightedTf({ server, entries }, SERVER_FIELDS) };
    this.servers[sid] = sdoc;
    this.serverIds.set(server, sid);
    this.serverCount++;
    for (const term of sdoc.tf.keys()) {
      this.serverPostings.add(term, sid);
      this.vocab.add(term);
    }
  }

  removeServer(server: string): void {
    const sid = this.serverIds.get(server);
    const sdoc = sid === undefined ? undefined : this.servers[sid];
    if (sid === undefined || !sdoc) return;
    const gone = new Set(sdoc.docIds);
    const terms = new Set<string>();
    for (const id of sdoc.docIds) for (const term of this.docs[id]?.tf.keys() ?? []) terms.add(term);
    for (const term of terms) this.toolPostings.remove(term, gone);
    for (const id of sdoc.docIds) {
      const doc = this.docs[id];
      if (!doc) continue;
      for (const term of doc.tf.keys()) this.vocab.release(term);
      const e = doc.entry;
      for (const name of new Set([e.namespaced, `${e.server}__${e.wire}`, e.wire])) removeFrom(this.byName, name.toLowerCase(), id);
      removeFrom(this.byFragment, e.tool.toLowerCase(), id);
      this.docs[id] = undefined;
      this.freeDocIds.push(id);
      this.docCount--;
    }
    const goneServer = new Set([sid]);
    for (const term of sdoc.tf.keys()) {
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

  /** The number of query terms `search` would use (0 for an empty or all-stopword query). */
  termCount(query: string): number {
    return searchTerms(query).length;
  }

  search(query: string, opts: SearchOptions = {}): RankedMatch[] {
    const filter = opts.filter;
    const terms = searchTerms(query);
    const exact = this.exactNameHits(query, filter);
    if (terms.length === 0 && exact.size === 0) return [];

    const n = this.docs.length;
    if (this.scratch.length < n + this.servers.length) this.scratch = new Float64Array(n + this.servers.length);
    const best = this.scratch; // [0, n): per-doc best of this term; [n, ...): per-server best
    const total = new Float64Array(n);
    const matched: (number[] | undefined)[] = new Array<number[] | undefined>(n);
    const touchedDocs: number[] = [];

    terms.forEach((term, termIndex) => {
      const variants = this.variants(term);
      const touched: number[] = [];
      const touchedServers: number[] = [];
      for (const v of variants) {
        const list = this.toolPostings.get(v.stem);
        if (!list) continue;
        const idf = idfOf(this.docCount, list.length);
        for (const id of list) {
          const c = v.weight * idf * saturate(this.docs[id]?.tf.get(v.stem) ?? 0);
          const prev = best[id] ?? 0;
          if (prev === 0) touched.push(id);
          if (c > prev) best[id] = c;
        }
      }
      for (const v of variants) {
        const list = this.serverPostings.get(v.stem);
        if (!list) continue;
        const idf = idfOf(this.serverCount, list.length);
        for (const sid of list) {
          const c = SCORER.serverWeight * v.weight * idf * saturate(this.servers[sid]?.tf.get(v.stem) ?? 0);
          const prev = best[n + sid] ?? 0;
          if (prev === 0) touchedServers.push(sid);
          if (c > prev) best[n + sid] = c;
        }
      }
      const add = (id: number, c: number): void => {
        if (c <= 0) return;
        let m = matched[id];
        if (m === undefined) {
          matched[id] = m = [];
          touchedDocs.push(id);
        }
        if (m[m.length - 1] !== termIndex) m.push(termIndex);
        total[id] = (total[id] ?? 0) + c;
      };
      for (const id of touched) {
        add(id, best[id] ?? 0);
        best[id] = 0;
      }
      for (const sid of touchedServers) {
        const c = best[n + sid] ?? 0;
        best[n + sid] = 0;
        for (const id of this.servers[sid]?.docIds ?? []) add(id, c);
      }
    });

    const qPhrase = phraseForm(query);
    const usePhrase = qPhrase.length > 0 && Buffer.byteLength(qPhrase) <= SCORER.phraseMaxBytes;
    const results: (RankedMatch & { exact: boolean })[] = [];
    const seen = new Set<number>();
    const consider = (id: number): void => {
      if (seen.has(id)) return;
      seen.add(id);
      const doc = this.docs[id];
      if (!doc || (filter && !filter(doc.entry))) return;
      const hits = matched[id] ?? [];
      const isExact = exact.has(id);
      if (hits.length === 0 && !isExact) return; // a phrase bonus alone never makes a match
      const mf = terms.length > 0 ? hits.length / terms.length : 0;
      let score = Math.round(SCORER.scale * (total[id] ?? 0) * (1 + SCORER.coverage * mf));
      if (usePhrase) score += phraseBonus(doc, qPhrase);
      results.push({ entry: doc.entry, score, matchedTerms: hits.map((i) => terms[i]?.word ?? ""), exact: isExact });
    };
    for (const id of exact) consider(id);
    for (const id of touchedDocs) consider(id);

    results.sort(
      (a, b) =>
        Number(b.exact) - Number(a.exact) ||
        b.score - a.score ||
        (a.entry.namespaced < b.entry.namespaced ? -1 : a.entry.namespaced > b.entry.namespaced ? 1 : 0),
    );
    const limit = opts.maxHits !== undefined && opts.maxHits > 0 ? opts.maxHits : results.length;
    return results.slice(0, limit).map(({ entry, score, matchedTerms }) => ({ entry, score, matchedTerms }));
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
    for (const p of this.vocab.prefixRelated(term.stem, SCORER.maxExpansionsPerTerm)) put(p, SCORER.prefixWeight);
    if (!this.vocab.has(term.stem)) for (const f of this.vocab.oneEditAway(term.stem)) put(f, SCORER.fuzzyWeight);
    return [...out].map(([stem, weight]) => ({ stem, weight }));
  }
}

function idfOf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

function phraseBonus(doc: Doc, q: string): number {
  if (q === doc.phraseName || q === doc.phraseNamespaced) return PHRASE.exactName;
  if (doc.phraseTitle.length > 0 && q === doc.phraseTitle) return PHRASE.exactTitle;
  // Whole-word containment: "get" must not count as contained in "together".
  const padded = ` ${q} `;
  if (` ${doc.phraseName} `.includes(padded)) return PHRASE.inName;
  if (` ${doc.phraseTitle} `.includes(padded)) return PHRASE.inTitle;
  if (` ${doc.phraseText} `.includes(padded)) return PHRASE.inText;
  return 0;
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
