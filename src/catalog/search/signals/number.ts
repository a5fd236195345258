// Grammatical number: does the request ask about one thing or several, and does the tool say it
// takes several? Siblings of one server often differ only in that (read_text_file and
// read_multiple_files; get_issue and list_issues are told apart by their verbs, these are not):
// "read these three config files at once: a.yaml, b.yaml and c.yaml" is the multiple tool,
// "read the README file" is not.
//
// A request is about several when it names two or more files (file names, with or without a
// directory: text/tokenize.ts fileReferences) or says a
// quantifier of several (both, several, two, three...); about one when it names exactly one file
// and says no such quantifier. A tool takes several when its name holds a quantifier of several
// (multiple, batch, bulk...). The quantifiers are a closed grammatical class, like the determiners
// of action.ts, not a list of tool words.
import { fileReferences, words } from "../text/tokenize.js";

/** Quantifiers and cardinals that say "more than one" (a closed class of English). */
const SEVERAL = new Set(["both", "several", "multiple", "many", "various", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "dozen"]);
/** Words a tool name uses for "takes more than one" (a closed class: quantifiers and their nouns). */
const SEVERAL_IN_NAME = new Set(["multiple", "many", "several", "batch", "bulk", "multi"]);


export type Quantity = "one" | "several";

/** Whether the request is about one thing or several (undefined: it does not say). */
export function requestQuantity(query: string): Quantity | undefined {
  for (const w of words(query)) if (SEVERAL.has(w) || SEVERAL_IN_NAME.has(w)) return "several";
  const files = new Set<string>();
  for (const ref of fileReferences(query)) if (ref.isFile) files.add(ref.chunk.toLowerCase());
  if (files.size >= 2) return "several";
  return files.size === 1 ? "one" : undefined;
}

/**
 * English says "one" by default: a request that names no quantifier, no two files and no plural
 * of what a several-taking tool takes ("files", "nodes") is about one thing ("open /etc/hosts",
 * "show me the readme"). Undefined when it says a plural (it may mean several).
 */
export function defaultQuantity(query: string, plurals: { has(word: string): boolean }): Quantity | undefined {
  const said = requestQuantity(query);
  if (said !== undefined) return said;
  for (const w of words(query)) if (plurals.has(w)) return undefined;
  return "one";
}

/** The plural nouns of a tool name that says it takes several ("read_multiple_files" → files), or none. */
export function severalPlurals(tool: string): string[] {
  const ws = words(tool);
  if (!ws.some((w) => SEVERAL_IN_NAME.has(w))) return [];
  return ws.filter((w, i) => i > 0 && !SEVERAL_IN_NAME.has(w) && w.length > 2 && w.endsWith("s"));
}

/** Whether a tool's name says it takes several things at once. */
export function toolTakesSeveral(tool: string): boolean {
  for (const w of words(tool)) if (SEVERAL_IN_NAME.has(w)) return true;
  return false;
}
