// A tool that declares itself deprecated ("Read File (Deprecated)", "DEPRECATED: Use
// read_text_file instead.") still works, but its own server says another tool is the one to use:
// its score is scaled by SCORER.deprecatedWeight, and when it names its replacement that tool
// scores at least what the deprecated one would have (the index passes the evidence on), so a
// request that fits the deprecated tool goes to its replacement. Only a declaration counts, not the word: "Check if packages are
// deprecated" describes what a tool checks, not the tool.
import type { CatalogEntry } from "../../types.js";

/** A title that says so, or a description that opens with or states the deprecation. */
const DECLARED = [
  /(?:^|[\s([])deprecated\s*[:)\]—–-]/iu,
  /^\s*\W*deprecated\b/iu,
  /\b(?:this|the) (?:tool|function|endpoint|method|command|operation) is (?:now )?deprecated\b/iu,
  /\bdeprecated\b[^.]{0,40}\b(?:use|instead|replaced by|in favou?r of)\b/iu,
];

export function isDeprecated(entry: Pick<CatalogEntry, "title" | "description">): boolean {
  if (entry.title !== undefined && /\bdeprecated\b/iu.test(entry.title)) return true;
  const text = entry.description.slice(0, 2048);
  return DECLARED.some((re) => re.test(text));
}

/** The tool name a deprecated tool points to ("Use read_text_file instead"), if it names one. */
export function replacementOf(entry: Pick<CatalogEntry, "description">): string | undefined {
  const m = /\b(?:use|replaced by|in favou?r of)\s+[`'"]?([A-Za-z0-9][\w.-]*[A-Za-z0-9])[`'"]?/iu.exec(entry.description.slice(0, 2048));
  return m?.[1];
}
