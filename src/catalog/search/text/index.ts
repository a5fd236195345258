// The language side of search: tokenisation (tokenize.ts, stopwords.ts), a light stemmer
// (stem.ts), the software vocabulary general English lacks (lexicon.ts), WordNet relations
// (wordnet.ts) and the generic request words that cannot tell tools apart (generic.ts). The
// index and the queries both go through here, so the same text always yields the same terms.
export { isGenericStem } from "./generic.js";
export { synonymsOf } from "./lexicon.js";
export { stem } from "./stem.js";
export { foldText, indexTerms, searchTerms, type Term } from "./tokenize.js";
export { wordnet } from "./wordnet.js";
