// Reads a stored result's text view through its index: text pages from a cursor, line ranges, and
// the whole view window by window (for find). Decoding starts at the nearest mark before the
// wanted position, so a page anywhere in a 200 MB result reads at most ~64 KiB of stored bytes
// before the bytes it returns.
import { codePoints, countNewlines, indexOfCodePoint, utf8Prefix } from "./chars.js";
import { PrettyPrinter } from "./pretty.js";
import type { ViewBlock, ViewIndex } from "./types.js";

/** Random access to the stored (plaintext) payload. */
export interface StoredBytes {
  read(at: number, length: number): Promise<Buffer>;
}

/** One stretch of the text view: its text and where it sits. */
export interface TextWindow {
  text: string;
  /** Text-view position (characters) of its first character. */
  char: number;
  /** Newlines before it. */
  line: number;
  chars: number;
  newlines: number;
}

/** Raised when stored bytes do not decode as the index says (corrupt or mismatched index). */
export class ViewDecodeError extends Error {
  override name = "ViewDecodeError";
}

/** Decodes the body of a JSON string (no surrounding quotes) to well-formed text. */
export function decodeStringBody(bytes: Buffer): string {
  let text: string;
  if (bytes.indexOf(0x5c) < 0) text = bytes.toString("utf8");
  else {
    try {
      text = JSON.parse(`"${bytes.toString("utf8")}"`) as string;
    } catch {
      throw new ViewDecodeError("stored text is not a valid JSON string");
    }
  }
  return text.isWellFormed() ? text : text.toWellFormed();
}

/** Pretty-prints compact JSON bytes from a printer state (see pretty.ts). */
export function prettyText(bytes: Buffer, state: number): string {
  const parts: string[] = [];
  const printer = new PrettyPrinter({
    raw: (buf, from, to) => parts.push(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString("utf8", from, to)),
    text: (s) => parts.push(s),
  });
  printer.restore(state);
  printer.feed(bytes, 0, bytes.length);
  return parts.join("");
}

/**
 * The last few decoded windows: sequential pages of 8 KiB fall in the same ~64 KiB window, which
 * is then decoded once rather than once per page. Keyed by the view object, which the store keeps
 * per file, so a replaced file never sees another file's text.
 */
const recent: { view: ViewIndex; k: number; text: string }[] = [];
const RECENT_WINDOWS = 4;

function cachedWindow(view: ViewIndex, k: number): string | undefined {
  return recent.find((w) => w.view === view && w.k === k)?.text;
}

function cacheWindow(view: ViewIndex, k: number, text: string): void {
  recent.push({ view, k, text });
  if (recent.length > RECENT_WINDOWS) recent.shift();
}

/** Index of the last mark whose `key` (0: char, 1: line) is at most `value`. */
function lastMarkAtMost(view: ViewIndex, key: 0 | 1, value: number): number {
  let lo = 0;
  let hi = view.marks.length - 1;
  let best = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const m = view.marks[mid];
    if (m && m[key] <= value) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/**
 * The text view from mark `from` to the end, one mark interval at a time, with "\n" windows
 * between segments. Counts come from the index, so consumers need not count what they skip.
 */
export async function* windowsFrom(view: ViewIndex, src: StoredBytes, from = 0): AsyncGenerator<TextWindow> {
  const marks = view.marks;
  for (let k = from; k < marks.length; k++) {
    const m = marks[k];
    if (!m) break;
    const [char, line, stored, segIndex, state] = m;
    const seg = view.segs[segIndex];
    if (!seg) throw new ViewDecodeError("view index names a missing segment");
    const next = marks[k + 1];
    const sameSeg = next !== undefined && next[3] === segIndex;
    const endStored = sameSeg ? next[2] : seg.end;
    const chars = (sameSeg ? next[0] : seg.char + seg.chars) - char;
    const newlines = (sameSeg ? next[1] : seg.line + seg.newlines) - line;
    if (endStored < stored) throw new ViewDecodeError("view index marks are out of order");
    let text = cachedWindow(view, k);
    if (text === undefined) {
      const bytes = endStored > stored ? await src.read(stored, endStored - stored) : Buffer.alloc(0);
      if (bytes.length !== endStored - stored) throw new ViewDecodeError("stored result is shorter than its view index says");
      text = seg.kind === "str" ? decodeStringBody(bytes) : prettyText(bytes, state);
      cacheWindow(view, k, text);
    }
    yield { text, char, line, chars, newlines };
    if (!sameSeg && segIndex < view.segs.length - 1) {
      yield { text: "\n", char: seg.char + seg.chars, line: seg.line + seg.newlines, chars: 1, newlines: 1 };
    }
  }
}

export interface TextPage {
  text: string;
  cursor: number;
  nextCursor: number;
  /** 1-based line of the page's first character. */
  line: number;
  done: boolean;
}

/**
 * Up to `maxBytes` UTF-8 bytes of text from `cursor` (characters). When the page does not reach
 * the end it ends after a newline, if one falls in its second half.
 */
export async function readTextPage(view: ViewIndex, src: StoredBytes, cursor: number, maxBytes: number): Promise<TextPage> {
  maxBytes = Math.max(4, maxBytes); // room for any one character, so every page advances
  if (cursor >= view.chars) return { text: "", cursor, nextCursor: view.chars, line: view.newlines + 1, done: true };
  const parts: string[] = [];
  let used = 0;
  let line = 1;
  let started = false;
  for await (const w of windowsFrom(view, src, lastMarkAtMost(view, 0, cursor))) {
    let text = w.text;
    if (!started) {
      if (w.char + w.chars <= cursor) continue;
      const skip = indexOfCodePoint(text, cursor - w.char);
      line = w.line + countNewlines(text, 0, skip) + 1;
      text = text.slice(skip);
      started = true;
    }
    const part = utf8Prefix(text, maxBytes - used);
    parts.push(part);
    used += Buffer.byteLength(part, "utf8");
    if (part.length < text.length || used >= maxBytes) break;
  }
  let text = parts.join("");
  let nextCursor = cursor + codePoints(text);
  if (nextCursor < view.chars) {
    const nl = text.lastIndexOf("\n");
    if (nl >= 0 && nl + 1 >= text.length / 2 && nl + 1 < text.length) {
      text = text.slice(0, nl + 1);
      nextCursor = cursor + codePoints(text);
    }
  }
  return { text, cursor, nextCursor, line, done: nextCursor >= view.chars };
}

export interface LineRange extends TextPage {
  fromLine: number;
  /** Last line included in full (fromLine - 1 when not even the first fits). */
  toLine: number;
  truncated: boolean;
}

/** Index of newline number `n` (1-based) in s at or after `from`, or -1. */
function nthNewline(s: string, n: number, from = 0): number {
  let i = from - 1;
  for (let k = 0; k < n; k++) {
    i = s.indexOf("\n", i + 1);
    if (i < 0) return -1;
  }
  return i;
}

/**
 * Lines [fromLine, toLine] (1-based, inclusive) within `maxBytes`. When they do not all fit, the
 * text ends after the last whole line that did (or is a prefix of the first line) and `toLine`
 * says which line that was. Undefined when fromLine is not a line of the view.
 */
export async function readLines(view: ViewIndex, src: StoredBytes, fromLine: number, toLine: number, maxBytes: number): Promise<LineRange | undefined> {
  if (!(fromLine >= 1 && fromLine <= view.lines)) return undefined;
  const last = Math.min(toLine, view.lines);
  const want = last - fromLine + 1; // newlines that may be included
  const parts: string[] = [];
  let used = 0;
  let got = 0;
  let cursor = -1;
  let cut = false;
  for await (const w of windowsFrom(view, src, lastMarkAtMost(view, 1, fromLine - 2))) {
    const text = w.text;
    let start = 0;
    if (cursor < 0) {
      const skip = fromLine - 1 - w.line;
      if (skip > w.newlines) continue;
      start = skip <= 0 ? 0 : nthNewline(text, skip) + 1;
      cursor = w.char + codePoints(text.slice(0, start));
    }
    const j = nthNewline(text, want - got, start);
    const piece = text.slice(start, j >= 0 ? j + 1 : text.length);
    const fit = utf8Prefix(piece, maxBytes - used);
    parts.push(fit);
    used += Buffer.byteLength(fit, "utf8");
    got += countNewlines(fit);
    if (fit.length < piece.length) {
      cut = true;
      break;
    }
    if (j >= 0) break;
  }
  if (cursor < 0) return undefined;
  let text = parts.join("");
  if (cut) {
    const nl = text.lastIndexOf("\n");
    if (nl >= 0) text = text.slice(0, nl + 1);
  }
  const nextCursor = cursor + codePoints(text);
  const endsView = nextCursor >= view.chars;
  const whole = countNewlines(text) + (!cut && endsView && text !== "" && !text.endsWith("\n") ? 1 : 0);
  const lastWhole = fromLine - 1 + whole;
  return { text, cursor, nextCursor, line: fromLine, done: endsView, fromLine, toLine: lastWhole, truncated: lastWhole < last };
}

/** Bytes [cursor, cursor + length) of a non-text block, decoded. */
export async function readBlock(block: ViewBlock, src: StoredBytes, cursor: number, length: number): Promise<Buffer> {
  const end = Math.min(block.bytes, cursor + length);
  if (cursor >= end) return Buffer.alloc(0);
  if (block.enc === "json") return src.read(block.at + cursor, end - cursor);
  // base64: 3 decoded bytes per 4 characters.
  const first = Math.floor(cursor / 3);
  const lastGroup = Math.ceil(end / 3);
  const at = block.at + first * 4;
  const to = Math.min(block.end, block.at + lastGroup * 4);
  const text = (await src.read(at, to - at)).toString("latin1");
  const decoded = Buffer.from(text, "base64");
  return decoded.subarray(cursor - first * 3, end - first * 3);
}
