// Compaction of a ranked match into the bounded JSON that search and resolve return
// (reference §3.5). Every cut, including dropping an empty list item, sets metadata_truncated.
import type { CatalogEntry, JsonObject } from "../types.js";
import type { RankedMatch } from "./index.js";
import { clipUtf8, collapseWhitespace, utf8Bytes } from "../../util/text.js";

export const BOUNDS = {
  title: 160,
  description: 256,
  serverDescription: 160,
  tags: { items: 6, bytes: 128 },
  useWhen: { items: 3, bytes: 256 },
  matchedTerms: { items: 24, bytes: 256 },
  itemBytes: 128,
  /** The whole match array (search matches, resolve alternatives). */
  arrayBytes: 12288,
} as const;

export interface CompactText {
  text: string;
  cut: boolean;
}

export function compactText(text: string | undefined, max: number): CompactText {
  const collapsed = collapseWhitespace(text ?? "");
  const out = clipUtf8(collapsed, max);
  return { text: out, cut: out !== collapsed };
}

/** Bounds a list: at most `items` entries of ≤128 bytes each and ≤`bytes` in total. */
export function compactList(list: readonly string[], bounds: { items: number; bytes: number }): { items: string[]; cut: boolean } {
  const out: string[] = [];
  let cut = false;
  let total = 0;
  for (const raw of list) {
    const { text, cut: itemCut } = compactText(raw, BOUNDS.itemBytes);
    if (itemCut) cut = true;
    if (text.length === 0) {
      cut = true;
      continue;
    }
    if (out.length >= bounds.items || total + utf8Bytes(text) > bounds.bytes) {
      cut = true;
      break;
    }
    out.push(text);
    total += utf8Bytes(text);
  }
  return { items: out, cut };
}

/**
 * How the gateway shows an entry to the agent asking: possibly another version of it (a tool whose
 * definition changed since it was approved is shown as approved) and fields of its own appended
 * to the match (effect class, why the agent cannot call it).
 */
export type Presenter = (entry: CatalogEntry) => { entry: CatalogEntry; fields?: JsonObject };

/** The compact form of one match; fields in contract order, empty/zero values left out. */
export function compactMatch(match: RankedMatch, opts: { withScore: boolean; present?: Presenter | undefined }): JsonObject {
  const shown = opts.present?.(match.entry);
  const e = shown?.entry ?? match.entry;
  let cut = false;
  const title = compactText(e.title, BOUNDS.title);
  const description = compactText(e.description, BOUNDS.description);
  const serverDescription = compactText(e.serverDescription, BOUNDS.serverDescription);
  const tags = compactList(e.tags, BOUNDS.tags);
  const useWhen = compactList(e.useWhen, BOUNDS.useWhen);
  const toolUseWhen = compactList(e.toolUseWhen, BOUNDS.useWhen);
  const matched = compactList(match.matchedTerms, BOUNDS.matchedTerms);
  cut = title.cut || description.cut || serverDescription.cut || tags.cut || useWhen.cut || toolUseWhen.cut || matched.cut;

  const out: JsonObject = { namespaced: e.namespaced, server: e.server, tool: e.tool };
  if (title.text) out["title"] = title.text;
  out["description"] = description.text;
  if (serverDescription.text) out["server_description"] = serverDescription.text;
  if (tags.items.length > 0) out["tags"] = tags.items;
  if (useWhen.items.length > 0) out["use_when"] = useWhen.items;
  if (toolUseWhen.items.length > 0) out["tool_use_when"] = toolUseWhen.items;
  if (opts.withScore && match.score !== 0) out["score"] = match.score;
  if (matched.items.length > 0) out["matched_terms"] = matched.items;
  if (cut) out["metadata_truncated"] = true;
  if (shown?.fields) Object.assign(out, shown.fields);
  return out;
}

/**
 * Takes up to `maxHits` compacted matches while the array's JSON stays within 12 KiB (one byte
 * per separating comma, plus the brackets). The first match is always kept.
 */
export function boundedMatches(
  matches: readonly RankedMatch[],
  maxHits: number,
  opts: { withScore: boolean; present?: Presenter | undefined },
): { items: JsonObject[]; byteLimited: boolean } {
  const items: JsonObject[] = [];
  let total = 2;
  for (const m of matches.slice(0, maxHits)) {
    const obj = compactMatch(m, opts);
    const bytes = utf8Bytes(JSON.stringify(obj)) + (items.length > 0 ? 1 : 0);
    if (items.length > 0 && total + bytes > BOUNDS.arrayBytes) return { items, byteLimited: true };
    items.push(obj);
    total += bytes;
  }
  return { items, byteLimited: false };
}
