// Reads the top-level `id` (and whether there is a top-level `method`) of a JSON-RPC message that
// is too large to keep, while its bytes stream past. Memory is constant: only the id's own text is
// kept (bounded), so a line of any size can be answered with an error that names its request.
// Structural characters of JSON are ASCII, so scanning UTF-8 bytes one by one is exact.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** An id or key longer than this is not one we could echo anyway. */
const MAX_CAPTURE = 256;

export interface ScannedHead {
  /** The top-level id when it is a string or an integer; null when absent or unusable. */
  id: string | number | null;
  /** A top-level `method` key was seen (a request or notification, not a response). */
  hasMethod: boolean;
}

export class TopLevelIdScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** At depth 1: waiting for a key (true) or inside/after a value (false). */
  private expectKey = false;
  private afterColon = false;
  private key: number[] | undefined;
  private currentKey: string | undefined;
  /** Bytes of the id value being read (string contents or a bare number). */
  private idBytes: number[] | undefined;
  private idIsString = false;
  private idInvalid = false;
  private id: string | number | null = null;
  private hasMethod = false;

  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) this.step(bytes[i] as number);
  }

  result(): ScannedHead {
    this.finishBareId();
    return { id: this.idInvalid ? null : this.id, hasMethod: this.hasMethod };
  }

  private step(b: number): void {
    if (this.inString) {
      if (this.escaped) {
        this.escaped = false;
        this.capture(b);
      } else if (b === BACKSLASH) {
        this.escaped = true;
        this.capture(b);
      } else if (b === QUOTE) {
        this.inString = false;
        this.endString();
      } else {
        this.capture(b);
      }
      return;
    }
    const top = this.depth === 1;
    switch (b) {
      case QUOTE:
        this.inString = true;
        if (top && this.expectKey) this.key = [];
        else if (top && this.afterColon && this.currentKey === "id") {
          this.idBytes = [];
          this.idIsString = true;
        }
        return;
      case OPEN_BRACE:
      case OPEN_BRACKET:
        if (top && this.afterColon && this.currentKey === "id") this.idInvalid = true;
        this.depth++;
        if (this.depth === 1) this.expectKey = b === OPEN_BRACE;
        return;
      case CLOSE_BRACE:
      case CLOSE_BRACKET:
        if (top) this.finishBareId();
        this.depth--;
        return;
      case COLON:
        if (top) {
          this.afterColon = true;
          this.expectKey = false;
        }
        return;
      case COMMA:
        if (top) {
          this.finishBareId();
          this.afterColon = false;
          this.expectKey = true;
          this.currentKey = undefined;
        }
        return;
      default:
        if (top && this.afterColon && this.currentKey === "id" && b > 0x20) {
          this.idBytes ??= [];
          this.idIsString = false;
          if (this.idBytes.length < MAX_CAPTURE) this.idBytes.push(b);
          else this.idInvalid = true;
        }
    }
  }

  private capture(b: number): void {
    const into = this.key ?? (this.idIsString ? this.idBytes : undefined);
    if (!into) return;
    if (into.length < MAX_CAPTURE) into.push(b);
    else if (into === this.idBytes) this.idInvalid = true;
  }

  private endString(): void {
    if (this.key) {
      this.currentKey = decode(this.key);
      if (this.currentKey === "method") this.hasMethod = true;
      this.key = undefined;
      return;
    }
    if (this.idBytes && this.idIsString) {
      try {
        this.id = JSON.parse(`"${decode(this.idBytes)}"`) as string;
      } catch {
        this.idInvalid = true;
      }
      this.idBytes = undefined;
    }
  }

  private finishBareId(): void {
    if (!this.idBytes || this.idIsString) return;
    const text = decode(this.idBytes);
    this.idBytes = undefined;
    const n = Number(text);
    if (/^-?\d+$/.test(text) && Number.isSafeInteger(n)) this.id = n;
    else this.idInvalid = true; // null, a float, true: not an id a reply could carry
  }
}

function decode(bytes: number[]): string {
  return Buffer.from(bytes).toString("utf8");
}
