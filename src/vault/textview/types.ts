// The view index of one stored result: what its readable text is made of and where each part sits
// in the stored bytes. A stored result is the JSON of a CallToolResult; its text view is the text
// of its text blocks (and of embedded text resources), joined by "\n", or, when it has none, the
// pretty JSON of its structuredContent. The index is built while the result is stored (scan.ts)
// and sealed after the payload, so a page of text is found without reading anything before it.
//
// Positions in the text view are counted in Unicode code points ("characters"): a cursor can never
// point inside a character, whatever the client does with it.
import { z } from "zod";

/** Stored bytes between two marks; the reader decodes one such window at a time. */
export const MARK_SPACING = 64 * 1024;

/**
 * One part of the text view.
 *  - "str": the body of a JSON string (a text block's text), from the byte after the opening quote
 *    (`at`) to the closing quote (`end`), decoded.
 *  - "json": a JSON value (structuredContent) from `at` to `end`, re-printed with 2-space indent as
 *    JSON.stringify(value, null, 2) would print it.
 */
export interface ViewSegment {
  kind: "str" | "json";
  at: number;
  end: number;
  /** Text-view position (characters) of the segment's first character. */
  char: number;
  /** Newlines before the segment (its first character is on line `line + 1`). */
  line: number;
  chars: number;
  /** UTF-8 bytes of the segment's text. */
  bytes: number;
  newlines: number;
  /** Whether its last character is "\n". */
  endsNl: boolean;
}

/**
 * A place where decoding may start: text position, newlines before it, stored offset, segment,
 * and (for "json" segments) the packed printer state (see pretty.ts). Every segment starts with a
 * mark, and further marks follow about every MARK_SPACING stored bytes, each at a character
 * boundary outside any escape sequence.
 */
export type Mark = [char: number, line: number, stored: number, seg: number, state: number];

/** A non-text content block, fetched with `block: index`. */
export interface ViewBlock {
  /** Position in `content` (0-based). */
  index: number;
  type: string;
  mimeType?: string;
  uri?: string;
  /** Size of what `block` returns: decoded bytes for base64 data, else the block's JSON bytes. */
  bytes: number;
  /** "base64": stored [at, end) is base64 text (image/audio data, a resource blob); "json": the
   *  block's own JSON (a resource link, or a type this gateway does not know). */
  enc: "base64" | "json";
  at: number;
  end: number;
}

export interface ViewIndex {
  v: 1;
  /** False when the stored bytes are not a JSON object (then the view is empty). */
  ok: boolean;
  source: "text" | "structured" | "none";
  chars: number;
  bytes: number;
  lines: number;
  /** Total newlines in the view (lines, except that a final line needs no newline). */
  newlines: number;
  segs: ViewSegment[];
  marks: Mark[];
  blocks: ViewBlock[];
  /** Content blocks by type, e.g. {text: 1, image: 2}. */
  kinds: Record<string, number>;
}

/** What a receipt tells about a stored result. */
export interface ViewSummary {
  source: ViewIndex["source"];
  chars: number;
  lines: number;
  kinds: Record<string, number>;
  /** Non-text blocks that `block` can fetch. */
  blocks: number;
}

export function summarize(v: ViewIndex): ViewSummary {
  return { source: v.source, chars: v.chars, lines: v.lines, kinds: { ...v.kinds }, blocks: v.blocks.length };
}

export function emptyView(ok: boolean): ViewIndex {
  return { v: 1, ok, source: "none", chars: 0, bytes: 0, lines: 0, newlines: 0, segs: [], marks: [], blocks: [], kinds: {} };
}

// Serialized compactly (arrays, not objects): a 200 MB result has ~3,200 marks.
const nat = z.number().int().min(0);
const segTuple = z.tuple([z.enum(["str", "json"]), nat, nat, nat, nat, nat, nat, nat, z.union([z.literal(0), z.literal(1)])]);
const blockTuple = z.tuple([nat, z.string(), z.string().nullable(), z.string().nullable(), nat, z.enum(["base64", "json"]), nat, nat]);
const IndexWire = z.object({
  v: z.literal(1),
  ok: z.boolean(),
  source: z.enum(["text", "structured", "none"]),
  chars: nat,
  bytes: nat,
  lines: nat,
  newlines: nat,
  segs: z.array(segTuple),
  marks: z.array(z.tuple([nat, nat, nat, nat, nat])),
  blocks: z.array(blockTuple),
  kinds: z.record(z.string(), nat),
});

export function encodeView(v: ViewIndex): Buffer {
  return Buffer.from(
    JSON.stringify({
      ...v,
      segs: v.segs.map((s) => [s.kind, s.at, s.end, s.char, s.line, s.chars, s.bytes, s.newlines, s.endsNl ? 1 : 0]),
      blocks: v.blocks.map((b) => [b.index, b.type, b.mimeType ?? null, b.uri ?? null, b.bytes, b.enc, b.at, b.end]),
    }),
    "utf8",
  );
}

/** Parses a sealed index; throws on anything malformed (the caller treats that as tampering). */
export function decodeView(bytes: Buffer): ViewIndex {
  const w = IndexWire.parse(JSON.parse(bytes.toString("utf8")));
  return {
    ...w,
    segs: w.segs.map(([kind, at, end, char, line, chars, nbytes, newlines, endsNl]) => ({ kind, at, end, char, line, chars, bytes: nbytes, newlines, endsNl: endsNl === 1 })),
    marks: w.marks,
    blocks: w.blocks.map(([index, type, mimeType, uri, nbytes, enc, at, end]) => ({
      index,
      type,
      ...(mimeType !== null ? { mimeType } : {}),
      ...(uri !== null ? { uri } : {}),
      bytes: nbytes,
      enc,
      at,
      end,
    })),
  };
}
