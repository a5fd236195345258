// A light English suffix stemmer. Both the index and the query go through it, so what matters
// is that related word forms meet at one stem (create/created/creating/creation/creator ->
// "creat"), not that stems are real words. It is deliberately conservative: words of three
// letters or fewer, words with digits and non-ASCII words are left alone.

/** Words whose trailing "s" is not a plural (or whose stem would collide with another word). */
const KEEP = new Set(["news", "series", "species", "always", "perhaps", "analytics", "physics", "maps", "kubernetes", "windows", "postgres", "redis", "ios", "macos"]);

const VOWEL = /[aeiouy]/;

function hasVowel(s: string): boolean {
  return VOWEL.test(s);
}

/**
 * The base a verb suffix leaves behind, made to meet the bare word: a doubled consonant is undone
 * (getting -> gett -> get, but added -> add stays), and a short consonant-vowel-consonant base gets
 * back the silent e the suffix dropped (saved -> sav -> save, like "save"; moved -> move; noted ->
 * note, not the word "not").
 */
function baseOf(s: string): string {
  const n = s.length;
  if (n >= 4 && s[n - 1] === s[n - 2] && !"lsz".includes(s[n - 1] ?? "")) return s.slice(0, -1);
  if (n === 3 && /^[^aeiou][aeiouy][^aeiouwxy]$/.test(s)) return `${s}e`;
  return s;
}

/** Inflectional suffixes: plurals, past tense, gerund. */
function stripInflection(w: string): string {
  if (w.endsWith("sses")) return w.slice(0, -2);
  if (w.endsWith("ies") && w.length > 4) return w.slice(0, -3) + "y";
  if (w.endsWith("ied") && w.length > 4) return w.slice(0, -3) + "y";
  if (w.endsWith("ss") || w.endsWith("us") || w.endsWith("is")) return w;
  if (/(?:[sxz]|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (w.endsWith("s") && !w.endsWith("'s")) return w.slice(0, -1);
  if (w.endsWith("ing")) {
    const base = w.slice(0, -3);
    if (base.length >= 3 && hasVowel(base)) return baseOf(base);
    return w;
  }
  if (w.endsWith("ed") && !w.endsWith("eed")) {
    const base = w.slice(0, -2);
    if (base.length >= 3 && hasVowel(base)) return baseOf(base);
  }
  return w;
}

/** One derivational suffix, mapped so that the noun/agent form meets the verb form. */
const DERIVATIONAL: ReadonlyArray<readonly [string, string, number]> = [
  // [suffix, replacement, minimum remaining stem length]
  ["ational", "ate", 3],
  ["ization", "ize", 3],
  ["isation", "ize", 3],
  ["ation", "ate", 3],
  ["ator", "ate", 3],
  ["izer", "ize", 3],
  ["ence", "", 5],
  ["ness", "", 4],
  ["ment", "", 4],
  ["ent", "", 5],
  ["er", "", 4],
];

export function stem(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/.test(word) || KEEP.has(word)) return word;
  let w = stripInflection(word);
  // Twice, so that a noun meets its verb's agent form too: difference -> differ -> diff (the
  // stem of "different" and of "diff"), preference -> prefer -> pref (the stem of "prefers").
  for (let pass = 0; pass < 2; pass++) {
    const rule = DERIVATIONAL.find(([suffix, , min]) => w.endsWith(suffix) && w.length - suffix.length >= min);
    if (!rule) break;
    w = w.slice(0, -rule[0].length) + rule[1];
  }
  if (w.length > 4 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}
