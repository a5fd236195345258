// Generic request words: verbs and nouns that say "return something" without saying what
// ("find", "get", "list", "show", "info", "details"), and light verbs ("make", "do", "take").
// Nearly every tool retrieves, lists or shows something, so these words cannot tell tools apart;
// resolve's assessment leaves them out when it asks whether the recommended tool holds the
// request's content words (assess.ts). They still rank like any other word.
//
// The list is closed and small on purpose: it is the English retrieval/display verbs and the
// vaguest nouns of requests, not words picked from a benchmark. A word that names an operation
// a tool may or may not offer (create, delete, update, send, convert...) is content, not generic.
import { stem } from "./stem.js";

const WORDS = `find get list show search fetch retrieve look lookup give display view see check return obtain
bring tell provide help want need use please info information detail details specific all data current
new something thing make do take have go`;

const GENERIC: ReadonlySet<string> = new Set(WORDS.split(/\s+/u).filter((w) => w.length > 0).map((w) => stem(w)));

export function isGenericStem(s: string): boolean {
  return GENERIC.has(s);
}
