// Builds the view index of a stored CallToolResult while its bytes are written (or, for a result
// stored before indexes existed, while they are read back once). A streaming JSON tokenizer walks
// the bytes exactly once with bounded memory, whatever the size:
//  - `content[i]` blocks: their type and media type, where their text or base64 data sits;
//  - the text of text blocks (and of embedded text resources) is measured in characters, lines
//    and UTF-8 bytes, with a mark every ~64 KiB of stored bytes;
//  - `structuredContent`, when no text came before it, is measured as pretty JSON (pretty.ts).
// Key order inside a block does not matter: what a block holds is decided when it closes, so its
// text is measured relative to its own start and placed in the view only then.
import { PrettyPrinter, type PrettySink } from "./pretty.js";
import { emptyView, MARK_SPACING, type Mark, type ViewBlock, type ViewIndex, type ViewSegment } from "./types.js";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const KEY_CAP = 64;
const TYPE_CAP = 64;
const MIME_CAP = 256;
const URI_CAP = 2048;

const enum Mode {
  Value,
  ValueOrEnd,
  KeyOrEnd,
  Key,
  Colon,
  AfterValue,
  Str,
  Lit,
  Done,
  Failed,
}

const enum Role {
  Root,
  Content,
  Block,
  Resource,
  Other,
}

const enum Use {
  Skip,
  Key,
  Capture,
  Count,
  Range,
}

interface Range {
  at: number;
  end: number;
  escaped: boolean;
  /** Trailing "=" of base64 padding (0-2). */
  padding: number;
}

interface Measured {
  at: number;
  end: number;
  chars: number;
  bytes: number;
  newlines: number;
  endsNl: boolean;
  /** [char, newlines, stored] relative to the string's start. */
  marks: [number, number, number][];
}

interface BlockBuild {
  index: number;
  start: number;
  type?: string;
  mimeType?: string;
  uri?: string;
  text?: Measured;
  data?: Range;
  resMime?: string;
  resUri?: string;
  resText?: Measured;
  blob?: Range;
}

interface Frame {
  obj: boolean;
  role: Role;
  key: string | undefined;
  index: number;
  block: BlockBuild | undefined;
}

/** Measures the decoded text of one JSON string body: characters, UTF-8 bytes, newlines, marks. */
class TextCounter implements Measured {
  chars = 0;
  bytes = 0;
  newlines = 0;
  endsNl = false;
  end = 0;
  marks: [number, number, number][] = [];
  private nextMark: number;
  /** The previous character was an escaped high surrogate (a pair must not be split by a mark). */
  private highPending = false;

  constructor(readonly at: number) {
    this.nextMark = at + MARK_SPACING;
  }

  /** Raw UTF-8 bytes [from, to) of `buf`, which starts at stored offset `base`. */
  raw(buf: Buffer, from: number, to: number, base: number): void {
    if (to <= from) return;
    let i = from;
    while (i < to) {
      const stop = base + to > this.nextMark ? Math.max(i, this.nextMark - base) : to;
      let n = 0;
      for (let k = i; k < stop; k++) if (((buf[k] as number) & 0xc0) !== 0x80) n++;
      this.chars += n;
      this.bytes += stop - i;
      i = stop;
      if (i < to) {
        while (i < to && ((buf[i] as number) & 0xc0) === 0x80) {
          this.bytes++;
          i++;
        }
        if (i < to) {
          this.marks.push([this.chars, this.newlines, base + i]);
          this.nextMark = base + i + MARK_SPACING;
        }
      }
    }
    this.endsNl = false;
    this.highPending = false;
  }

  /** An escape sequence starts at stored offset `at`: a mark may go there. */
  beforeEscape(at: number): void {
    if (at >= this.nextMark && !this.highPending) {
      this.marks.push([this.chars, this.newlines, at]);
      this.nextMark = at + MARK_SPACING;
    }
  }

  /** The UTF-16 unit an escape sequence stands for. */
  unit(u: number): void {
    if (u === 0x0a) {
      this.chars++;
      this.bytes++;
      this.newlines++;
      this.endsNl = true;
      this.highPending = false;
      return;
    }
    this.endsNl = false;
    if (u >= 0xdc00 && u <= 0xdfff && this.highPending) {
      // Completes a pair: one character of 4 bytes, not two U+FFFD of 3.
      this.bytes += 1;
      this.highPending = false;
      return;
    }
    this.chars++;
    this.bytes += u < 0x80 ? 1 : u < 0x800 ? 2 : 3;
    this.highPending = u >= 0xd800 && u <= 0xdbff;
  }
}

/** Counts what the pretty printer emits and marks its state every ~64 KiB of input. */
class PrettyCounter implements PrettySink {
  chars = 0;
  bytes = 0;
  newlines = 0;
  /** [char, newlines, stored, state] relative to the value's start. */
  marks: [number, number, number, number][] = [];
  readonly printer = new PrettyPrinter(this);
  private nextMark: number;
  end = 0;

  constructor(readonly at: number) {
    this.nextMark = at + MARK_SPACING;
  }

  raw(buf: Uint8Array, from: number, to: number): void {
    let n = 0;
    for (let k = from; k < to; k++) if (((buf[k] as number) & 0xc0) !== 0x80) n++;
    this.chars += n;
    this.bytes += to - from;
  }

  text(s: string): void {
    this.chars += s.length;
    this.bytes += s.length;
    for (let i = s.indexOf("\n"); i >= 0; i = s.indexOf("\n", i + 1)) this.newlines++;
  }

  feed(buf: Buffer, from: number, to: number, base: number): void {
    let i = from;
    while (i < to) {
      const stop = this.nextMark - base;
      const r = this.printer.feed(buf, i, to, stop);
      if (r >= to) return;
      this.marks.push([this.chars, this.newlines, base + r, this.printer.state()]);
      this.nextMark = base + r + MARK_SPACING;
      i = r;
    }
  }
}

export class ResultScanner {
  private offset = 0;
  private mode = Mode.Value;
  private readonly stack: Frame[] = [];
  private rootSeen = false;
  private notObject = false;

  // The string being read.
  private use = Use.Skip;
  private strAt = 0;
  private esc = 0; // 0: none; 1: after a backslash; 2-5: reading \u hex digits
  private escUnit = 0;
  private capture: number[] = [];
  private captureCap = 0;
  private captureOver = false;
  private counter: TextCounter | undefined;
  private range: Range | undefined;
  private lastBytes = 0; // the last two bytes of a ranged string, for base64 padding

  // The view being built.
  private readonly segs: ViewSegment[] = [];
  private readonly marks: Mark[] = [];
  private readonly blocks: ViewBlock[] = [];
  private readonly kinds: Record<string, number> = {};
  private chars = 0;
  private bytes = 0;
  private newlines = 0;

  // structuredContent.
  private sc: PrettyCounter | undefined;
  private scFrom = -1;
  private scDone = false;

  /** Feeds the next stored bytes. `bytes` is only read during the call. */
  feed(bytes: Uint8Array): void {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (this.mode !== Mode.Failed) this.scan(buf);
    if (this.sc && this.scFrom >= 0) {
      this.sc.feed(buf, this.scFrom, buf.length, this.offset);
      this.scFrom = 0;
    }
    this.offset += buf.length;
  }

  /** The finished index (an empty one when the bytes were not a JSON object). */
  finish(): ViewIndex {
    if (this.mode === Mode.Lit) this.valueEnd(this.offset);
    const ok = this.mode === Mode.Done && !this.notObject;
    if (!ok) return emptyView(false);
    let source: ViewIndex["source"] = "none";
    if (this.segs.length > 0) source = "text";
    else if (this.sc && this.scDone) {
      source = "structured";
      const sc = this.sc;
      this.addSegment("json", sc.at, sc.end, sc, sc.marks);
    }
    const last = this.segs[this.segs.length - 1];
    const endsNl = last ? (last.chars > 0 ? last.endsNl : this.segs.length > 1) : false;
    return {
      v: 1,
      ok: true,
      source,
      chars: this.chars,
      bytes: this.bytes,
      newlines: this.newlines,
      lines: this.chars === 0 ? 0 : this.newlines + (endsNl ? 0 : 1),
      segs: this.segs,
      marks: this.marks,
      blocks: this.blocks,
      kinds: this.kinds,
    };
  }

  private fail(): void {
    this.mode = Mode.Failed;
    this.sc = undefined;
  }

  private scan(buf: Buffer): void {
    const len = buf.length;
    let i = 0;
    while (i < len) {
      switch (this.mode) {
        case Mode.Str:
          i = this.scanString(buf, i);
          continue;
        case Mode.Lit: {
          const c = buf[i] as number;
          if ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x2d || c === 0x2b || c === 0x2e) {
            i++;
            continue;
          }
          this.valueEnd(this.offset + i, buf, i);
          continue; // the delimiter is read in AfterValue
        }
        case Mode.Failed:
          return;
        default:
          break;
      }
      const c = buf[i] as number;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
        i++;
        continue;
      }
      const at = this.offset + i;
      switch (this.mode) {
        case Mode.Value:
        case Mode.ValueOrEnd:
          if (this.mode === Mode.ValueOrEnd && c === 0x5d) {
            this.close(false, at, buf, i);
            break;
          }
          this.valueStart(c, at, buf, i);
          break;
        case Mode.KeyOrEnd:
        case Mode.Key:
          if (c === QUOTE) this.stringStart(at, true);
          else if (c === 0x7d && this.mode === Mode.KeyOrEnd) this.close(true, at, buf, i);
          else this.fail();
          break;
        case Mode.Colon:
          if (c === 0x3a) this.mode = Mode.Value;
          else this.fail();
          break;
        case Mode.AfterValue: {
          const top = this.stack[this.stack.length - 1];
          if (!top) this.fail();
          else if (c === 0x2c) {
            if (top.obj) this.mode = Mode.Key;
            else {
              top.index++;
              this.mode = Mode.Value;
            }
          } else if (c === 0x7d || c === 0x5d) this.close(c === 0x7d, at, buf, i);
          else this.fail();
          break;
        }
        case Mode.Done:
          this.fail();
          break;
        default:
          this.fail();
      }
      if ((this.mode as Mode) === Mode.Failed) return;
      i++;
    }
  }

  /** The role a value starting now plays, from its parent and key. */
  private childRole(obj: boolean): Role {
    const parent = this.stack[this.stack.length - 1];
    if (!parent) return obj ? Role.Root : Role.Other;
    if (parent.role === Role.Root && parent.key === "content" && !obj) return Role.Content;
    if (parent.role === Role.Content && obj) return Role.Block;
    if (parent.role === Role.Block && parent.key === "resource" && obj) return Role.Resource;
    return Role.Other;
  }

  private valueStart(c: number, at: number, buf: Buffer, i: number): void {
    const parent = this.stack[this.stack.length - 1];
    if (!parent) {
      if (this.rootSeen) return this.fail();
      this.rootSeen = true;
      if (c !== 0x7b) this.notObject = true;
    }
    if (parent?.role === Role.Root && parent.key === "structuredContent" && !this.sc && this.segs.length === 0 && !this.scDone) {
      this.sc = new PrettyCounter(at);
      this.scFrom = i;
    }
    if (c === 0x7b || c === 0x5b) {
      const obj = c === 0x7b;
      const role = this.childRole(obj);
      let block: BlockBuild | undefined;
      if (role === Role.Block && parent) block = { index: parent.index, start: at };
      else if (role === Role.Resource) block = parent?.block;
      this.stack.push({ obj, role, key: undefined, index: 0, block });
      this.mode = obj ? Mode.KeyOrEnd : Mode.ValueOrEnd;
      return;
    }
    if (c === QUOTE) {
      this.stringStart(at, false);
      return;
    }
    if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x74 || c === 0x66 || c === 0x6e) {
      this.mode = Mode.Lit;
      return;
    }
    this.fail();
  }

  /** A value ended just before stored offset `end` (`buf[i]` is the byte at `end`, if any). */
  private valueEnd(end: number, buf?: Buffer, i?: number): void {
    this.mode = this.stack.length === 0 ? Mode.Done : Mode.AfterValue;
    const parent = this.stack[this.stack.length - 1];
    if (parent?.role === Role.Root && parent.key === "structuredContent" && this.sc && !this.scDone) {
      if (buf !== undefined && i !== undefined && this.scFrom >= 0) this.sc.feed(buf, this.scFrom, i, this.offset);
      this.sc.end = end;
      this.scFrom = -1;
      this.scDone = true;
    }
  }

  private close(obj: boolean, at: number, buf: Buffer, i: number): void {
    const top = this.stack.pop();
    if (!top || top.obj !== obj) return this.fail();
    if (top.role === Role.Block && top.block) this.finishBlock(top.block, at + 1);
    this.valueEnd(at + 1, buf, i + 1);
  }

  private stringStart(at: number, isKey: boolean): void {
    this.mode = Mode.Str;
    this.strAt = at + 1;
    this.esc = 0;
    this.counter = undefined;
    this.range = undefined;
    if (isKey) {
      this.use = Use.Key;
      this.startCapture(KEY_CAP);
      return;
    }
    const parent = this.stack[this.stack.length - 1];
    const key = parent?.key;
    this.use = Use.Skip;
    if (parent?.role === Role.Block) {
      if (key === "type") this.startCapture(TYPE_CAP);
      else if (key === "mimeType") this.startCapture(MIME_CAP);
      else if (key === "uri") this.startCapture(URI_CAP);
      else if (key === "text") this.startCount();
      else if (key === "data") this.startRange();
    } else if (parent?.role === Role.Resource) {
      if (key === "mimeType") this.startCapture(MIME_CAP);
      else if (key === "uri") this.startCapture(URI_CAP);
      else if (key === "text") this.startCount();
      else if (key === "blob") this.startRange();
    }
  }

  private startCapture(cap: number): void {
    if (this.use !== Use.Key) this.use = Use.Capture;
    this.capture = [];
    this.captureCap = cap;
    this.captureOver = false;
  }

  private startCount(): void {
    this.use = Use.Count;
    this.counter = new TextCounter(this.strAt);
  }

  private startRange(): void {
    this.use = Use.Range;
    this.range = { at: this.strAt, end: this.strAt, escaped: false, padding: 0 };
    this.lastBytes = 0;
  }

  private collect(buf: Buffer, from: number, to: number): void {
    if (this.captureOver) return;
    for (let k = from; k < to; k++) {
      if (this.capture.length >= this.captureCap * 6) {
        this.captureOver = true;
        return;
      }
      this.capture.push(buf[k] as number);
    }
  }

  /** Reads string bytes from `i`; returns where scanning continues. */
  private scanString(buf: Buffer, i: number): number {
    const len = buf.length;
    const base = this.offset;
    // The next quote and backslash at or after i (len when none), found once and reused until
    // passed: text with an escape every few bytes would otherwise rescan for both each time.
    let q = -1;
    let b = -1;
    while (i < len) {
      if (this.esc > 0) {
        const c = buf[i] as number;
        if (this.use === Use.Key || this.use === Use.Capture) this.collect(buf, i, i + 1);
        if (this.esc === 1) {
          if (c === 0x75) {
            this.esc = 2;
            this.escUnit = 0;
          } else {
            this.esc = 0;
            this.counter?.unit(c === 0x6e ? 0x0a : c === 0x74 ? 0x09 : c === 0x72 ? 0x0d : c === 0x62 ? 0x08 : c === 0x66 ? 0x0c : c);
          }
        } else {
          const h = c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
          if (h < 0 || h > 15) {
            this.fail();
            return len;
          }
          this.escUnit = this.escUnit * 16 + h;
          if (++this.esc === 6) {
            this.esc = 0;
            this.counter?.unit(this.escUnit);
          }
        }
        i++;
        continue;
      }
      if (q < i) {
        q = buf.indexOf(QUOTE, i);
        if (q < 0) q = len;
      }
      if (b < i) {
        b = buf.indexOf(BACKSLASH, i);
        if (b < 0) b = len;
      }
      const next = b < q ? b : q;
      if (next > i) {
        switch (this.use) {
          case Use.Count:
            this.counter?.raw(buf, i, next, base);
            break;
          case Use.Key:
          case Use.Capture:
            this.collect(buf, i, next);
            break;
          case Use.Range:
            this.lastBytes = ((next - i >= 2 ? (buf[next - 2] as number) : this.lastBytes & 0xff) << 8) | (buf[next - 1] as number);
            break;
          default:
            break;
        }
      }
      if (next === len) return len;
      if (next === b && b < q) {
        if (this.use === Use.Count) this.counter?.beforeEscape(base + b);
        else if (this.use === Use.Range && this.range) this.range.escaped = true;
        else if (this.use === Use.Key || this.use === Use.Capture) this.collect(buf, b, b + 1);
        this.esc = 1;
        i = b + 1;
        continue;
      }
      this.stringEnd(base + q, buf, q);
      if (this.mode === Mode.Failed) return len;
      return q + 1;
    }
    return i;
  }

  private captured(): string | undefined {
    if (this.captureOver) return undefined;
    try {
      return JSON.parse(`"${Buffer.from(this.capture).toString("utf8")}"`) as string;
    } catch {
      return undefined;
    }
  }

  /** The string closed at stored offset `q` (its closing quote), which is `buf[local]`. */
  private stringEnd(q: number, buf: Buffer, local: number): void {
    const parent = this.stack[this.stack.length - 1];
    if (this.use === Use.Key) {
      if (!parent || !parent.obj) return this.fail();
      const key = this.captured();
      parent.key = key === undefined || key.length > KEY_CAP ? undefined : key;
      this.mode = Mode.Colon;
      return;
    }
    const block = parent?.block;
    const key = parent?.key;
    if (this.use === Use.Capture && block) {
      const value = this.captured();
      if (value !== undefined) {
        if (parent.role === Role.Block) {
          if (key === "type") block.type = value;
          else if (key === "mimeType") block.mimeType = value;
          else if (key === "uri") block.uri = value;
        } else if (key === "mimeType") block.resMime = value;
        else if (key === "uri") block.resUri = value;
      }
    } else if (this.use === Use.Count && this.counter && block) {
      this.counter.end = q;
      if (parent.role === Role.Block) block.text = this.counter;
      else block.resText = this.counter;
    } else if (this.use === Use.Range && this.range && block) {
      this.range.end = q;
      this.range.padding = (this.lastBytes & 0xff) === 0x3d ? ((this.lastBytes >> 8) === 0x3d ? 2 : 1) : 0;
      if (parent.role === Role.Block) block.data = this.range;
      else block.blob = this.range;
    }
    this.counter = undefined;
    this.range = undefined;
    this.valueEnd(q + 1, buf, local + 1);
  }

  private finishBlock(b: BlockBuild, end: number): void {
    const type = b.type ?? "unknown";
    this.kinds[type] = (this.kinds[type] ?? 0) + 1;
    if (type === "text" && b.text) {
      this.addText(b.text);
      return;
    }
    if (type === "resource" && b.resText) {
      this.addText(b.resText);
      return;
    }
    const ranged = type === "resource" ? b.blob : type === "image" || type === "audio" ? b.data : undefined;
    const mimeType = type === "resource" ? b.resMime : b.mimeType;
    const uri = type === "resource" ? b.resUri : b.uri;
    if (type === "text") return; // a text block without a text string: nothing to read
    if (ranged && !ranged.escaped) {
      const n = ranged.end - ranged.at;
      const bytes = Math.max(0, Math.floor(n / 4) * 3 + (n % 4 === 0 ? 0 : (n % 4) - 1) - (n % 4 === 0 ? ranged.padding : 0));
      this.blocks.push({ index: b.index, type, ...(mimeType ? { mimeType } : {}), ...(uri ? { uri } : {}), bytes, enc: "base64", at: ranged.at, end: ranged.end });
      return;
    }
    this.blocks.push({ index: b.index, type, mimeType: "application/json", ...(uri ? { uri } : {}), bytes: end - b.start, enc: "json", at: b.start, end });
  }

  private addText(m: Measured): void {
    this.addSegment("str", m.at, m.end, m, m.marks.map(([c, n, s]) => [c, n, s, 0]));
  }

  private addSegment(kind: "str" | "json", at: number, end: number, m: { chars: number; bytes: number; newlines: number; endsNl?: boolean }, local: [number, number, number, number][]): void {
    const sep = this.segs.length > 0 ? 1 : 0;
    const char = this.chars + sep;
    const line = this.newlines + sep;
    const seg = this.segs.length;
    this.segs.push({ kind, at, end, char, line, chars: m.chars, bytes: m.bytes, newlines: m.newlines, endsNl: m.endsNl === true });
    this.marks.push([char, line, at, seg, 0]);
    for (const [c, n, s, state] of local) this.marks.push([char + c, line + n, s, seg, state]);
    this.chars = char + m.chars;
    this.bytes += sep + m.bytes;
    this.newlines = line + m.newlines;
  }
}

/** Indexes bytes already in memory (tests, and small results). */
export function scanBytes(bytes: Uint8Array): ViewIndex {
  const s = new ResultScanner();
  s.feed(bytes);
  return s.finish();
}
