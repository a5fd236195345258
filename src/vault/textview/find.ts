// find inside a stored result: runs a pattern over the text view line by line and reports the
// matching lines with their line number, the cursor where the line starts, and a few lines of
// context. Runs inside the find worker (find-worker.ts), which the gateway stops after a time
// bound: a pathological pattern costs at most that long, and nothing else waits for it.
//
// The view is read one window (~64 KiB) at a time; each window's complete lines are searched in
// one pass of the (global, multiline) regex, and a partial last line is carried into the next
// window. A line longer than MAX_CARRY characters is searched in pieces of that size.
import { clipUtf8 } from "../../util/text.js";
import { codePoints, countNewlines, utf8Prefix } from "./chars.js";
import { requiredLiteral } from "./literal.js";
import { decodeStringBody, readLines, windowsFrom, type StoredBytes } from "./reader.js";
import type { ViewIndex } from "./types.js";

export interface FindJob {
  /** RegExp source and flags (without g/m, which are always added). */
  source: string;
  flags: string;
  /** The text searched for, when `source` is that text escaped: lets find scan the stored bytes. */
  literal?: string;
  /** Lines of context before and after each match. */
  context: number;
  maxMatches: number;
}

export interface FindMatch {
  /** 1-based line number. */
  line: number;
  /** Text cursor (characters) where the line starts. */
  cursor: number;
  /** The line (around the match when the line is long). */
  text: string;
  /** Cursor of the match itself, given when the line is longer than what `text` shows. */
  matchCursor?: number;
  before?: string[];
  after?: string[];
}

const NEWLINE_ESCAPE = Buffer.from("\\n", "latin1");

/** Characters of one line kept while looking for its end. */
export const MAX_CARRY = 256 * 1024;
/** Bytes of a matching line shown; a longer line is shown around the match. */
export const MATCH_LINE_BYTES = 400;
const CONTEXT_LINE_BYTES = 200;
const LEAD_CHARS = 120;

/** Compiles a job's pattern; throws SyntaxError for an invalid one. */
export function compileFind(job: Pick<FindJob, "source" | "flags">): RegExp {
  const flags = [...new Set([...job.flags, "g", "m"])].join("");
  return new RegExp(job.source, flags);
}

function clipLine(line: string): string {
  const clean = line.endsWith("\r") ? line.slice(0, -1) : line;
  return clipUtf8(clean.length > CONTEXT_LINE_BYTES * 2 ? clean.slice(0, CONTEXT_LINE_BYTES * 2) : clean, CONTEXT_LINE_BYTES);
}

/** The matching line, or the part of it around the match when it is long. */
function showMatch(line: string, at: number, prefixed: boolean): { text: string; clipped: boolean } {
  const clean = line.endsWith("\r") ? line.slice(0, -1) : line;
  if (!prefixed && clean.length <= MATCH_LINE_BYTES && Buffer.byteLength(clean, "utf8") <= MATCH_LINE_BYTES) return { text: clean, clipped: false };
  let start = Math.max(0, at - LEAD_CHARS);
  const c = clean.charCodeAt(start);
  if (start > 0 && c >= 0xdc00 && c <= 0xdfff) start--; // never split a surrogate pair
  const lead = start > 0 || prefixed ? "…" : "";
  const body = utf8Prefix(clean.slice(start, start + MATCH_LINE_BYTES), MATCH_LINE_BYTES - 6);
  const tail = start + body.length < clean.length ? "…" : "";
  return { text: lead + body + tail, clipped: true };
}

/** The last `n` lines before position `end` of s (s[end-1] is "\n" or end is 0). */
function linesBefore(s: string, end: number, n: number): string[] {
  const out: string[] = [];
  let stop = end - 1; // the newline that ends the previous line
  while (out.length < n && stop >= 0) {
    const start = s.lastIndexOf("\n", stop - 1) + 1;
    out.unshift(s.slice(start, stop));
    stop = start - 1;
  }
  return out;
}

/** Up to `n` complete lines of s starting at `from`; `complete` when s held all n. */
function linesAfter(s: string, from: number, n: number): { lines: string[]; next: number } {
  const lines: string[] = [];
  let at = from;
  while (lines.length < n && at < s.length) {
    const nl = s.indexOf("\n", at);
    const end = nl < 0 ? s.length : nl;
    lines.push(s.slice(at, end));
    at = nl < 0 ? s.length : nl + 1;
  }
  return { lines, next: at };
}

/**
 * Searches the whole view; calls `emit` for each match, in order, once its context is known.
 * Returns whether matches beyond maxMatches exist.
 */
export async function findInView(view: ViewIndex, src: StoredBytes, job: FindJob, emit: (m: FindMatch) => void): Promise<{ truncated: boolean }> {
  if (view.source === "text") {
    if (job.literal !== undefined) {
      const needle = storedForm(job.literal);
      if (needle) return findStored(view, src, job, needle, undefined, emit);
    } else {
      // A pattern with a literal every match contains: look for that literal first.
      const required = requiredLiteral(job.source, job.flags);
      const needle = required !== undefined ? storedForm(required) : undefined;
      if (needle) return findStored(view, src, job, needle, compileFind(job), emit);
    }
  }
  return findDecoded(view, src, job, emit);
}

/**
 * The bytes a literal has inside a stored JSON string, when searching those bytes is the same as
 * searching the decoded text: JSON escapes each character on its own, so the text contains the
 * literal exactly where the stored bytes contain its escaped form at a character boundary.
 * Undefined for what the text view changes (lone surrogates become U+FFFD) or what find treats
 * per line (a newline).
 */
export function storedForm(literal: string): Buffer | undefined {
  if (literal === "" || literal.includes("\n") || literal.includes("\uFFFD") || !literal.isWellFormed()) return undefined;
  return Buffer.from(JSON.stringify(literal).slice(1, -1), "utf8");
}

/**
 * Whether byte `p` of a stored string body starts a character rather than falling inside an
 * escape sequence; `from` is a mark (never inside an escape), so nothing before it matters.
 */
function atCharacter(buf: Buffer, from: number, p: number): boolean {
  const escapeStart = (q: number): boolean => {
    let r = q;
    while (r >= from && buf[r] === 0x5c) r--;
    return (q - r) % 2 === 1;
  };
  if (p - 1 >= from && buf[p - 1] === 0x5c && escapeStart(p - 1)) return false;
  for (let q = Math.max(from, p - 5); q <= p - 2; q++) {
    if (buf[q] === 0x5c && buf[q + 1] === 0x75 && escapeStart(q)) return false;
  }
  return true;
}

/** The text of line `n` (1-based) without its newline, read up to `maxBytes`. */
async function lineText(view: ViewIndex, src: StoredBytes, n: number, maxBytes: number): Promise<string | undefined> {
  const r = await readLines(view, src, n, n, maxBytes);
  if (!r) return undefined;
  return r.text.endsWith("\n") ? r.text.slice(0, -1) : r.text;
}

async function contextLines(view: ViewIndex, src: StoredBytes, from: number, to: number): Promise<string[]> {
  const out: string[] = [];
  for (let n = Math.max(1, from); n <= Math.min(to, view.lines); n++) out.push(clipLine((await lineText(view, src, n, CONTEXT_LINE_BYTES * 2)) ?? ""));
  return out;
}

/** A line longer than this is searched by a pattern only in its first this many bytes (find over stored bytes). */
const PATTERN_LINE_BYTES = 1024 * 1024;

/**
 * A search over the stored bytes for `needle` (a literal, or a literal every match of `pattern`
 * contains): only windows that hold it are decoded, so a search costs little more than
 * decrypting the result. Each hit (for a pattern: each line holding the literal that the pattern
 * matches) is placed (line, cursor, text, context) through the index.
 */
async function findStored(
  view: ViewIndex,
  src: StoredBytes,
  job: FindJob,
  needle: Buffer,
  pattern: RegExp | undefined,
  emit: (m: FindMatch) => void,
): Promise<{ truncated: boolean }> {
  const ctx = Math.max(0, job.context);
  let found = 0;
  let lastChecked = 0;
  const marks = view.marks;
  for (let k = 0; k < marks.length; k++) {
    const m = marks[k] as (typeof marks)[number];
    const [char, line, stored, segIndex] = m;
    const seg = view.segs[segIndex];
    if (!seg) break;
    const next = marks[k + 1];
    const sameSeg = next !== undefined && next[3] === segIndex;
    const end = sameSeg ? next[2] : seg.end;
    // Read a little into the next window so a literal across the mark is seen here.
    const readEnd = sameSeg ? Math.min(seg.end, end + needle.length - 1) : end;
    if (readEnd - stored < needle.length) continue;
    const bytes = await src.read(stored, readEnd - stored);
    // After a hit, go on from the next line: one report per line, and a line full of hits is not
    // decoded once per hit.
    const nextLine = (from: number): number => {
      for (let j = bytes.indexOf(NEWLINE_ESCAPE, from); j >= 0; j = bytes.indexOf(NEWLINE_ESCAPE, j + 1)) if (atCharacter(bytes, 0, j)) return j + 2;
      return bytes.length;
    };
    for (let i = bytes.indexOf(needle); i >= 0 && i < end - stored; i = bytes.indexOf(needle, i + 1)) {
      if (!atCharacter(bytes, 0, i)) continue;
      const prefix = decodeStringBody(bytes.subarray(0, i));
      const lineNo = line + countNewlines(prefix) + 1;
      if (lineNo === lastChecked) {
        i = nextLine(i) - 1;
        continue;
      }
      lastChecked = lineNo;
      let placed: { lineStart: number; matchChar: number; shown: { text: string; clipped: boolean } } | undefined;
      if (pattern) placed = await placePattern(view, src, lineNo, pattern);
      else placed = await placeLiteral(view, src, bytes, end - stored, char, prefix, lineNo);
      if (placed) {
        if (found >= job.maxMatches) return { truncated: true };
        const match: FindMatch = { line: lineNo, cursor: placed.lineStart, text: placed.shown.text };
        if (placed.shown.clipped) match.matchCursor = placed.matchChar;
        if (ctx > 0) {
          match.before = await contextLines(view, src, lineNo - ctx, lineNo - 1);
          match.after = await contextLines(view, src, lineNo + 1, lineNo + ctx);
        }
        emit(match);
        found++;
      }
      i = nextLine(i) - 1;
    }
  }
  return { truncated: false };
}

/** Where a literal hit at `prefix.length` of this window's text sits, and the line to show. */
async function placeLiteral(view: ViewIndex, src: StoredBytes, bytes: Buffer, windowEnd: number, char: number, prefix: string, lineNo: number) {
  const matchChar = char + codePoints(prefix);
  const nl = prefix.lastIndexOf("\n");
  const lineStart = nl >= 0 ? char + codePoints(prefix.slice(0, nl + 1)) : ((await readLines(view, src, lineNo, lineNo, 1))?.cursor ?? char);
  const full = matchChar - lineStart <= LEAD_CHARS ? await lineText(view, src, lineNo, MATCH_LINE_BYTES + 8) : undefined;
  if (full !== undefined && Buffer.byteLength(full, "utf8") <= MATCH_LINE_BYTES) return { lineStart, matchChar, shown: showMatch(full, matchChar - lineStart, false) };
  // A long line: show it around the match, from this window's text.
  const window = decodeStringBody(bytes.subarray(0, windowEnd));
  const at = prefix.length;
  const start = nl + 1;
  let stop = window.indexOf("\n", at);
  if (stop < 0) stop = window.length;
  const shown = showMatch(window.slice(start, stop), at - start, lineStart < char + codePoints(window.slice(0, start)));
  return { lineStart, matchChar, shown: { text: shown.text, clipped: true } };
}

/** Whether line `lineNo` matches `pattern`, and where. */
async function placePattern(view: ViewIndex, src: StoredBytes, lineNo: number, pattern: RegExp) {
  const r = await readLines(view, src, lineNo, lineNo, PATTERN_LINE_BYTES);
  if (!r) return undefined;
  const text = r.text.endsWith("\n") ? r.text.slice(0, -1) : r.text;
  pattern.lastIndex = 0;
  const m = pattern.exec(text);
  if (!m) return undefined;
  return { lineStart: r.cursor, matchChar: r.cursor + codePoints(text.slice(0, m.index)), shown: showMatch(text, m.index, false) };
}

/**
 * Searches the decoded text view, one window of complete lines at a time. Exported as the
 * reference the faster paths are tested against.
 */
export async function findDecoded(view: ViewIndex, src: StoredBytes, job: FindJob, emit: (m: FindMatch) => void): Promise<{ truncated: boolean }> {
  const re = compileFind(job);
  const ctx = Math.max(0, job.context);
  let found = 0;
  let truncated = false;
  let carry = "";
  let carryChar = 0;
  let carryLine = 0;
  /** Where the line the next region starts in began, when that was in an earlier region. */
  let openLineStart: number | undefined;
  let lastReported = -1;
  let prevTail: string[] = [];
  /** Matches still collecting lines after them, oldest first (emitted in order). */
  const queue: { match: FindMatch; need: number }[] = [];

  const flush = (all: boolean) => {
    while (queue.length > 0 && (all || (queue[0] as { need: number }).need === 0)) emit((queue.shift() as { match: FindMatch }).match);
  };

  /** Searches `body`, which starts at char/line; it holds complete lines unless `partial`. */
  const search = (body: string, char: number, line: number, partial: boolean): boolean => {
    for (const q of queue) {
      if (q.need === 0) continue;
      const { lines } = linesAfter(body, 0, q.need);
      (q.match.after ??= []).push(...lines.map(clipLine));
      q.need -= lines.length;
    }
    flush(false);
    re.lastIndex = 0;
    let scanPos = 0;
    let scanLine = line;
    let scanChar = char;
    for (;;) {
      const m = re.exec(body);
      if (!m) break;
      const p = m.index;
      const lineStart = p === 0 ? 0 : body.lastIndexOf("\n", p - 1) + 1;
      let lineEnd = body.indexOf("\n", p);
      if (lineEnd < 0) lineEnd = body.length;
      scanLine += countNewlines(body, scanPos, lineStart);
      scanChar += codePoints(body.slice(scanPos, lineStart));
      scanPos = lineStart;
      const lineNo = scanLine + 1;
      if (lineNo !== lastReported) {
        if (found >= job.maxMatches) {
          truncated = true;
          return false;
        }
        const continued = lineStart === 0 && openLineStart !== undefined;
        const shown = showMatch(body.slice(lineStart, lineEnd), p - lineStart, continued);
        const match: FindMatch = { line: lineNo, cursor: continued ? (openLineStart as number) : scanChar, text: shown.text };
        if (shown.clipped || partial) match.matchCursor = scanChar + codePoints(body.slice(lineStart, p));
        let need = 0;
        if (ctx > 0) {
          const before = linesBefore(body, lineStart, ctx);
          if (before.length < ctx) before.unshift(...prevTail.slice(Math.max(0, prevTail.length - (ctx - before.length))));
          match.before = before.map(clipLine);
          const after = linesAfter(body, Math.min(body.length, lineEnd + 1), ctx).lines;
          match.after = after.map(clipLine);
          need = ctx - after.length;
        }
        queue.push({ match, need });
        flush(false);
        found++;
        lastReported = lineNo;
      }
      if (lineEnd >= body.length) break;
      re.lastIndex = lineEnd + 1;
    }
    if (ctx > 0) prevTail = linesBefore(body, body.length, ctx);
    return true;
  };

  for await (const w of windowsFrom(view, src, 0)) {
    const region = carry + w.text;
    const regionChar = carry !== "" ? carryChar : w.char;
    const regionLine = carry !== "" ? carryLine : w.line;
    const lastNl = region.lastIndexOf("\n");
    if (lastNl < 0 && region.length < MAX_CARRY) {
      carry = region;
      carryChar = regionChar;
      carryLine = regionLine;
      continue;
    }
    const partial = lastNl < 0;
    const cut = partial ? region.length : lastNl + 1;
    const body = region.slice(0, cut);
    if (!search(body, regionChar, regionLine, partial)) break;
    // The index knows each window's counts: only the carried partial lines need counting.
    const rest = region.slice(cut);
    carryChar = regionChar + codePoints(carry) + w.chars - codePoints(rest);
    carryLine = regionLine + (partial ? 0 : w.newlines);
    carry = rest;
    openLineStart = partial ? (openLineStart ?? regionChar) : undefined;
  }
  if (!truncated && carry !== "") search(carry, carryChar, carryLine, false);
  flush(true);
  return { truncated };
}
