// What a question asks for: the attribute whose value the answer is. "How big is each file"
// asks for a size and "how old is Rex" for an age (the adjective after "how", through WordNet's
// attribute pointer: big → size); "when was it created" asks for a time (the answer type of
// "when", as question classification gives it). A tool whose own text names the attribute
// ("size", "creation time") is the one that answers.
import { words } from "../text/tokenize.js";
import { wordnet } from "../text/wordnet.js";

/**
 * The answer type of an interrogative that is not "how + adjective" (a closed class), and of the
 * place pro-forms: "somewhere in ~/work there's a docker-compose.yml" and "any .env files
 * anywhere?" ask where something is, as "where" does (a tool "for finding files when you don't
 * know their exact location"). Twelfth round, tune halves: the place words gave +5 hit@1 and
 * +1 hit@5 of 548 on the example config, LiveMCPBench unchanged; the person pro-forms (who,
 * someone, anyone … → person) moved nothing and are not here.
 */
const ANSWER_TYPE: Readonly<Record<string, string>> = {
  when: "time",
  where: "location",
  wherever: "location",
  somewhere: "location",
  anywhere: "location",
  everywhere: "location",
};

/** The nouns a request's questions ask for, in order, distinct. */
export function askedAttributes(query: string): string[] {
  const out: string[] = [];
  const all = words(query);
  for (let i = 0; i < all.length; i++) {
    const w = all[i] as string;
    const typed = ANSWER_TYPE[w];
    if (typed !== undefined) out.push(typed);
    else if (w === "how" && i + 1 < all.length) out.push(...wordnet.attributesOf(all[i + 1] as string));
  }
  return [...new Set(out)];
}
