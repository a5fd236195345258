// Boilerplate: a sentence that many tools of one server repeat word for word ("Only works within
// allowed directories." in 10 of the filesystem server's 14 descriptions) says something about
// the server, not about the tool. Indexed as the tool's own text it makes every sibling hold
// the same words ("directories" for "show me what's in the build folder" holds read_text_file as
// much as list_directory), so siblings cannot be told apart by them. Field statistics, not a
// word list: the sentence is found by how often it recurs within the server.

import type { CatalogEntry } from "../types.js";

/** A sentence is boilerplate when at least this many of a server's tools say it... */
const MIN_TOOLS = 3;
/** ...and at least this share of them. */
const MIN_SHARE = 1 / 3;

function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/u)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const keyOf = (sentence: string): string => sentence.toLowerCase().replace(/\s+/gu, " ");

/** The sentences of one server's descriptions that are boilerplate (their keys). */
export function boilerplateOf(entries: readonly CatalogEntry[]): ReadonlySet<string> {
  const counts = new Map<string, number>();
  for (const e of entries) {
    for (const key of new Set(sentencesOf(e.description).map(keyOf))) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const out = new Set<string>();
  const need = Math.max(MIN_TOOLS, Math.ceil(entries.length * MIN_SHARE));
  for (const [key, n] of counts) if (n >= need) out.add(key);
  return out;
}

/** The entry as its own text reads without the server's boilerplate (the entry itself when it has none). */
export function withoutBoilerplate(entry: CatalogEntry, boilerplate: ReadonlySet<string>): CatalogEntry {
  if (boilerplate.size === 0) return entry;
  const kept = sentencesOf(entry.description).filter((s) => !boilerplate.has(keyOf(s)));
  const description = kept.join(" ");
  return description === entry.description ? entry : { ...entry, description };
}
