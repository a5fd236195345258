// Re-prints compact JSON (as JSON.stringify writes it) with a 2-space indent, exactly as
// JSON.stringify(value, null, 2) would, one buffer at a time and without parsing: strings,
// numbers and literals are copied byte for byte, structure gets newlines and indentation. The
// same transducer counts the output while a result is stored (to index it) and produces the text
// when a page is read, so the two can never disagree.
//
// Its whole state is four small values, packed into one number for the index's marks, so
// printing can resume at any mark without reading what came before.

/** Receives the output: raw input bytes to copy, or structural text (ASCII). */
export interface PrettySink {
  raw(buf: Uint8Array, from: number, to: number): void;
  text(s: string): void;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const INDENTS: string[] = [];
/**
 * Indentation stops growing at this depth. JSON nested deeper than this is pathological, and
 * indenting it fully would make the text quadratic in the nesting (a 200 MB result of "[[[[..."
 * would print as petabytes).
 */
export const MAX_INDENT_DEPTH = 64;

function indent(depth: number): string {
  const d = Math.min(depth, MAX_INDENT_DEPTH);
  return (INDENTS[d] ??= "\n" + "  ".repeat(d));
}

export class PrettyPrinter {
  /** Open containers. */
  depth = 0;
  /** A container was just opened: the next token decides between "[]" and a newline. */
  pending = false;
  inString = false;
  /** The previous byte was a backslash inside a string. */
  escape = false;

  constructor(private readonly sink: PrettySink) {}

  /** The state packed as depth·8 + pending·4 + inString·2 + escape (marks never store escape). */
  state(): number {
    return this.depth * 8 + (this.pending ? 4 : 0) + (this.inString ? 2 : 0) + (this.escape ? 1 : 0);
  }

  restore(state: number): void {
    this.depth = Math.floor(state / 8);
    this.pending = (state & 4) !== 0;
    this.inString = (state & 2) !== 0;
    this.escape = (state & 1) !== 0;
  }

  /** Whether printing may resume at `buf[i]` from state() alone (not inside an escape or a character). */
  cleanAt(buf: Uint8Array, i: number): boolean {
    return !this.escape && ((buf[i] ?? 0) & 0xc0) !== 0x80;
  }

  /**
   * Prints input bytes [from, to). `stopAt` (relative to `buf`) lets the caller interrupt at the
   * first clean position at or after it: the return value is where printing stopped (== to when
   * it ran to the end).
   */
  feed(buf: Uint8Array, from: number, to: number, stopAt = Infinity): number {
    const sink = this.sink;
    let run = from; // start of the bytes not yet handed to the sink; copied verbatim
    let i = from;
    while (i < to) {
      if (i >= stopAt && this.cleanAt(buf, i)) {
        if (i > run) sink.raw(buf, run, i);
        return i;
      }
      if (this.inString) {
        if (this.escape) {
          this.escape = false;
          i++;
          continue;
        }
        // Everything up to the next quote or backslash is copied as is.
        const q = indexOfByte(buf, QUOTE, i, to);
        const b = indexOfByte(buf, BACKSLASH, i, q < 0 ? to : q);
        const next = b >= 0 ? b : q >= 0 ? q : to;
        if (stopAt > i && stopAt < next) {
          let s = stopAt;
          while (s < next && ((buf[s] as number) & 0xc0) === 0x80) s++;
          if (s < next) {
            if (s > run) sink.raw(buf, run, s);
            return s;
          }
        }
        if (next === to) {
          i = to;
          break;
        }
        if (next === b) {
          this.escape = true;
          i = b + 1;
        } else {
          this.inString = false;
          i = next + 1;
        }
        continue;
      }
      const c = buf[i] as number;
      const structural = c === 0x7b || c === 0x5b || c === 0x7d || c === 0x5d || c === 0x2c || c === 0x3a;
      const space = c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
      if (!structural && !space) {
        // A string or a literal starts or continues; the first element of a container goes on a new line.
        if (this.pending) {
          if (i > run) sink.raw(buf, run, i);
          sink.text(indent(this.depth));
          this.pending = false;
          run = i;
        }
        if (c === QUOTE) this.inString = true;
        i++;
        continue;
      }
      if (i > run) sink.raw(buf, run, i);
      if (c === 0x7b || c === 0x5b) {
        if (this.pending) sink.text(indent(this.depth));
        this.pending = true;
        this.depth++;
        sink.text(c === 0x7b ? "{" : "[");
      } else if (c === 0x7d || c === 0x5d) {
        this.depth = Math.max(0, this.depth - 1);
        if (this.pending) this.pending = false;
        else sink.text(indent(this.depth));
        sink.text(c === 0x7d ? "}" : "]");
      } else if (c === 0x2c) {
        sink.text("," + indent(this.depth));
      } else if (c === 0x3a) {
        sink.text(": ");
      }
      run = ++i;
    }
    if (to > run) sink.raw(buf, run, to);
    return to;
  }
}

/** buf.indexOf for one byte within [from, to), or -1. */
export function indexOfByte(buf: Uint8Array, byte: number, from: number, to: number): number {
  if (from >= to) return -1;
  const at = Buffer.prototype.indexOf.call(buf, byte, from) as number;
  return at >= 0 && at < to ? at : -1;
}
