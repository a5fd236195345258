// Compaction of ranked matches into the JSON that search and resolve return. Every byte of these
// answers is read by a model, so each match carries only what tells it apart: its name, a title
// that says more than the name, its description cut at a sentence boundary (describe_tool has the
// rest), its score and matched words. What belongs to its server (description, use_when, tags,
// and the server's state when it cannot serve now) is said once per server, in `servers`.
// Every cut sets metadata_truncated (reference §3.5).
import type { CatalogEntry, JsonObject, JsonValue } from "../types.js";
import type { RankedMatch } from "./index.js";
import { clipUtf8, collapseWhitespace, utf8Bytes } from "../../util/text.js";
import { foldText } from "./text/tokenize.js";

export const BOUNDS = {
  title: 160,
  /** A search match's description: its first sentences within this many bytes. */
  description: 160,
  /** The recommendation's description (resolve): its first sentence, within this many bytes. */
  recommendation: 200,
  /** A resolve alternative's description: what tells it from the recommendation. */
  alternative: 90,
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

/** Where one sentence ends and the next begins: ". " (or ! ?) before a capital, digit or quote. */
const SENTENCE_END = /(?<=[.!?])\s+(?=["'(\[]?[\p{Lu}\p{N}])/u;

/**
 * The description's first sentences that fit in `max` bytes (at least the first, clipped at a word
 * when it alone is longer). `cut` when anything was left out: describe_tool has the whole text.
 */
export function sentences(text: string | undefined, max: number, most = Number.POSITIVE_INFINITY): CompactText {
  const collapsed = collapseWhitespace(text ?? "");
  const parts = collapsed.split(SENTENCE_END).slice(0, most);
  let out = "";
  for (const part of parts) {
    const next = out ? `${out} ${part}` : part;
    if (utf8Bytes(next) > max) break;
    out = next;
  }
  if (out.length === 0) out = clipAtWord(parts[0] ?? "", max);
  return { text: out, cut: out !== collapsed };
}

function clipAtWord(text: string, max: number): string {
  const clipped = clipUtf8(text, max);
  if (clipped === text) return text;
  const space = clipped.lastIndexOf(" ", clipped.length - 2);
  return space > max / 2 ? `${clipped.slice(0, space)}…` : clipped;
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

/** The words of a name or title ("getFileInfo", "Get File Info Tool" → "get file info"). */
function wordsOf(text: string): string {
  return foldText(text.replace(/([a-z0-9])([A-Z])/g, "$1 $2"))
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0 && w !== "tool")
    .join(" ");
}

/** A title worth its bytes: one that says more than the tool's name ("Read Text File" for read_text_file does not). */
export function informativeTitle(e: CatalogEntry): CompactText {
  const title = compactText(e.title, BOUNDS.title);
  if (!title.text) return title;
  return wordsOf(title.text) === wordsOf(e.tool) ? { text: "", cut: false } : title;
}

/** How much of a match to show: description bytes, and whether matched terms and the cut flag are worth theirs. */
export interface MatchForm {
  withScore: boolean;
  present?: Presenter | undefined;
  descriptionBytes?: number;
  /** Alternatives leave out matched_terms and metadata_truncated (the recommendation and search keep them). */
  brief?: boolean;
  /** One sentence at most (resolve), not as many as fit. */
  firstSentence?: boolean;
  /** Matches scoring below this are named only (resolve: alternatives far behind the recommendation). */
  describeFrom?: number;
}

/** The compact form of one match: namespaced, title?, description, tool_use_when?, score?, matched_terms?, metadata_truncated?. */
export function compactMatch(match: RankedMatch, opts: MatchForm): JsonObject {
  const shown = opts.present?.(match.entry);
  const e = shown?.entry ?? match.entry;
  const title = informativeTitle(e);
  const description = sentences(e.description, opts.descriptionBytes ?? BOUNDS.description, opts.firstSentence ? 1 : Number.POSITIVE_INFINITY);
  const toolUseWhen = compactList(e.toolUseWhen, BOUNDS.useWhen);
  const matched = compactList(match.matchedTerms, BOUNDS.matchedTerms);
  const cut = title.cut || description.cut || toolUseWhen.cut || matched.cut;

  const out: JsonObject = { namespaced: e.namespaced };
  if (opts.describeFrom !== undefined && match.score < opts.describeFrom) {
    if (opts.withScore && match.score !== 0) out["score"] = match.score;
    if (shown?.fields) Object.assign(out, shown.fields);
    return out;
  }
  if (title.text) out["title"] = title.text;
  out["description"] = description.text;
  if (toolUseWhen.items.length > 0) out["tool_use_when"] = toolUseWhen.items;
  if (opts.withScore && match.score !== 0) out["score"] = match.score;
  if (!opts.brief && matched.items.length > 0) out["matched_terms"] = matched.items;
  if (!opts.brief && cut) out["metadata_truncated"] = true;
  if (shown?.fields) Object.assign(out, shown.fields);
  return out;
}

/**
 * A server's routing metadata, said once per answer: its description, and its use_when hints
 * where `withUseWhen` (search) or where it has no description. Tags are left out: they feed the
 * ranking and list_servers, and repeat what the description says.
 */
export function compactServer(e: CatalogEntry, withUseWhen: boolean): JsonObject {
  const out: JsonObject = {};
  const description = compactText(e.serverDescription, BOUNDS.serverDescription);
  const useWhen = compactList(e.useWhen, BOUNDS.useWhen);
  if (description.text) out["description"] = description.text;
  if ((withUseWhen || !description.text) && useWhen.items.length > 0) out["use_when"] = useWhen.items;
  return out;
}

/**
 * The `servers` block of an answer: each server of the given entries once, with its metadata and
 * what the gateway adds about it (its state when it cannot serve now); servers with nothing to say
 * are left out.
 */
export function serversOf(entries: readonly CatalogEntry[], opts: { withUseWhen: boolean; note?: ((server: string) => JsonObject | undefined) | undefined }): JsonObject {
  const out: JsonObject = {};
  for (const e of entries) {
    if (Object.prototype.hasOwnProperty.call(out, e.server)) continue;
    const info: JsonObject = { ...compactServer(e, opts.withUseWhen), ...(opts.note?.(e.server) ?? {}) };
    if (Object.keys(info).length > 0) out[e.server] = info;
  }
  return out;
}

/**
 * Takes up to `maxHits` compacted matches while the array's JSON stays within 12 KiB (one byte
 * per separating comma, plus the brackets). The first match is always kept.
 */
export function boundedMatches(
  matches: readonly RankedMatch[],
  maxHits: number,
  opts: MatchForm,
): { items: JsonObject[]; kept: RankedMatch[]; byteLimited: boolean } {
  const items: JsonObject[] = [];
  const kept: RankedMatch[] = [];
  let total = 2;
  for (const m of matches.slice(0, maxHits)) {
    const obj = compactMatch(m, opts);
    const bytes = utf8Bytes(JSON.stringify(obj)) + (items.length > 0 ? 1 : 0);
    if (items.length > 0 && total + bytes > BOUNDS.arrayBytes) return { items, kept, byteLimited: true };
    items.push(obj);
    kept.push(m);
    total += bytes;
  }
  return { items, kept, byteLimited: false };
}

export type { JsonValue };
