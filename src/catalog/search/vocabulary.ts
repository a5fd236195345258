// The set of indexed stems, with the two side structures that make query-term expansion cheap:
// prefix buckets (first four characters) and a symmetric-delete index for one-edit typos.
// Reference-counted, because a stem can be indexed by many entries and both index levels.
import { addTo, removeFrom } from "../../util/multimap.js";

export const MIN_PREFIX_LENGTH = 4;
export const MIN_FUZZY_LENGTH = 5;

function deletions(term: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < term.length; i++) out.push(term.slice(0, i) + term.slice(i + 1));
  return out;
}

/** True when a and b differ by at most one insertion, deletion, substitution or transposition. */
export function withinOneEdit(a: string, b: string): boolean {
  if (a === b) return true;
  const la = a.length;
  const lb = b.length;
  if (Math.abs(la - lb) > 1) return false;
  let i = 0;
  while (i < la && i < lb && a[i] === b[i]) i++;
  if (la === lb) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true;
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
  }
  return la > lb ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

export class Vocabulary {
  private readonly refs = new Map<string, number>();
  private readonly prefixBuckets = new Map<string, Set<string>>();
  /**
   * Deletion -> the terms it came from. Nearly every deletion comes from a single term, so a
   * lone term is stored as a string rather than a one-element set (a large saving in build time
   * and memory on catalogues of tens of thousands of stems).
   */
  private readonly deletionIndex = new Map<string, string | Set<string>>();

  has(term: string): boolean {
    return this.refs.has(term);
  }

  add(term: string): void {
    const n = this.refs.get(term) ?? 0;
    this.refs.set(term, n + 1);
    if (n > 0) return;
    if (term.length >= MIN_PREFIX_LENGTH) addTo(this.prefixBuckets, term.slice(0, MIN_PREFIX_LENGTH), term);
    if (term.length >= MIN_FUZZY_LENGTH - 1) for (const d of deletions(term)) this.addDeletion(d, term);
  }

  release(term: string): void {
    const n = this.refs.get(term) ?? 0;
    if (n > 1) {
      this.refs.set(term, n - 1);
      return;
    }
    this.refs.delete(term);
    if (term.length >= MIN_PREFIX_LENGTH) removeFrom(this.prefixBuckets, term.slice(0, MIN_PREFIX_LENGTH), term);
    if (term.length >= MIN_FUZZY_LENGTH - 1) for (const d of deletions(term)) this.removeDeletion(d, term);
  }

  /**
   * Indexed terms that extend `term` (the `limit` shortest, then alphabetical, so the choice does
   * not depend on indexing order), and indexed terms (≥ 4 chars) that `term` extends.
   */
  prefixRelated(term: string, limit: number): string[] {
    if (term.length < MIN_PREFIX_LENGTH) return [];
    const longer: string[] = [];
    for (const v of this.prefixBuckets.get(term.slice(0, MIN_PREFIX_LENGTH)) ?? []) {
      if (v !== term && v.startsWith(term)) longer.push(v);
    }
    longer.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
    const out = longer.slice(0, limit);
    for (let len = MIN_PREFIX_LENGTH; len < term.length; len++) {
      const p = term.slice(0, len);
      if (this.refs.has(p)) out.push(p);
    }
    return out;
  }

  /** Indexed terms one edit away from `term` (for terms of ≥ 5 characters). */
  oneEditAway(term: string): string[] {
    if (term.length < MIN_FUZZY_LENGTH) return [];
    const candidates = new Set<string>(this.fromDeletion(term));
    for (const d of deletions(term)) {
      if (this.refs.has(d)) candidates.add(d);
      for (const c of this.fromDeletion(d)) candidates.add(c);
    }
    candidates.delete(term);
    return [...candidates].filter((c) => withinOneEdit(term, c)).sort();
  }

  private fromDeletion(d: string): Iterable<string> {
    const v = this.deletionIndex.get(d);
    return v === undefined ? [] : typeof v === "string" ? [v] : v;
  }

  private addDeletion(d: string, term: string): void {
    const v = this.deletionIndex.get(d);
    if (v === undefined) this.deletionIndex.set(d, term);
    else if (typeof v === "string") {
      if (v !== term) this.deletionIndex.set(d, new Set([v, term]));
    } else v.add(term);
  }

  private removeDeletion(d: string, term: string): void {
    const v = this.deletionIndex.get(d);
    if (v === undefined) return;
    if (typeof v === "string") {
      if (v === term) this.deletionIndex.delete(d);
      return;
    }
    v.delete(term);
    if (v.size === 1) this.deletionIndex.set(d, v.values().next().value as string);
    else if (v.size === 0) this.deletionIndex.delete(d);
  }
}
