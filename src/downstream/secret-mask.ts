// Masking the secret values the gateway injected into one connection (vault env, secret header
// values, OAuth tokens) in everything that connection sends back: results, JSON-RPC errors,
// progress messages, log notifications, server→client requests and listings. A server that echoes
// its API key in an error must not hand it to the model.
//
// Cost: a connection the gateway gave no secret has no mask at all (nothing runs per call). With
// secrets, a result is first only searched (every string, `includes` per value, no allocation);
// it is copied only when a value is found. Both walks use an explicit stack, so a deeply nested
// result cannot overflow the call stack.
import { REDACTED } from "./sanitize.js";

/** Shorter values would shred ordinary text; the stderr redaction uses the same floor. */
const MIN_MASK_LENGTH = 4;
/** A header value such as "Bearer abc…": the credential after the scheme is a secret on its own. */
const SCHEME_RE = /^(?:bearer|basic|token|digest)\s+(\S+)$/i;

export class SecretMask {
  private values: string[] = [];
  private shortest = Infinity;
  private dynamicKey = "";

  private constructor(
    private readonly fixed: readonly string[],
    /** Values that change while the connection lives (OAuth tokens are refreshed). */
    private readonly dynamic: (() => readonly string[]) | undefined,
  ) {
    this.compile([]);
  }

  /** A mask for these values, or undefined when there is nothing to mask (the common case). */
  static of(fixed: Iterable<string>, dynamic?: () => readonly string[]): SecretMask | undefined {
    const values = expand(fixed);
    if (values.length === 0 && !dynamic) return undefined;
    return new SecretMask(values, dynamic);
  }

  /** The values masked now, longest first. */
  get current(): readonly string[] {
    this.refresh();
    return this.values;
  }

  /** The text with every value replaced by `[redacted]` (the same string when none occurs). */
  text(s: string): string {
    this.refresh();
    return this.replace(s);
  }

  /**
   * A JSON-like value with every string (and object key) masked. Returns the value itself when no
   * secret occurs in it; otherwise a masked copy.
   */
  value<T>(v: T): T {
    this.refresh();
    if (this.values.length === 0 || !this.occursIn(v)) return v;
    return this.copy(v);
  }

  private refresh(): void {
    if (!this.dynamic) return;
    const now = this.dynamic();
    // The source is small (at most a few dozen tokens): a joined key is cheaper than a rebuild.
    const key = now.join("\u0000");
    if (key === this.dynamicKey) return;
    this.dynamicKey = key;
    this.compile(now);
  }

  private compile(dynamic: readonly string[]): void {
    const all = [...new Set([...this.fixed, ...expand(dynamic)])].sort((a, b) => b.length - a.length);
    this.values = all;
    this.shortest = all.length ? (all[all.length - 1] as string).length : Infinity;
  }

  private hit(s: string): boolean {
    if (s.length < this.shortest) return false;
    for (const v of this.values) if (s.includes(v)) return true;
    return false;
  }

  private replace(s: string): string {
    if (!this.hit(s)) return s;
    let out = s;
    for (const v of this.values) if (out.includes(v)) out = out.split(v).join(REDACTED);
    return out;
  }

  /** Whether any string or key in the value holds a secret (iterative; no copies). */
  private occursIn(root: unknown): boolean {
    const stack: unknown[] = [root];
    while (stack.length > 0) {
      const v = stack.pop();
      if (typeof v === "string") {
        if (this.hit(v)) return true;
      } else if (Array.isArray(v)) {
        for (const item of v) stack.push(item);
      } else if (v !== null && typeof v === "object") {
        for (const [k, item] of Object.entries(v)) {
          if (this.hit(k)) return true;
          stack.push(item);
        }
      }
    }
    return false;
  }

  /** A copy with masked strings (only made once a secret was found, so rare; linear in size). */
  private copy<T>(root: T): T {
    const holder: { value: unknown } = { value: root };
    const stack: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [{ parent: holder as Record<string, unknown>, key: "value" }];
    while (stack.length > 0) {
      const { parent, key } = stack.pop() as (typeof stack)[number];
      const v = (parent as Record<string | number, unknown>)[key];
      if (typeof v === "string") {
        (parent as Record<string | number, unknown>)[key] = this.replace(v);
      } else if (Array.isArray(v)) {
        const out = v.slice();
        (parent as Record<string | number, unknown>)[key] = out;
        for (let i = 0; i < out.length; i++) stack.push({ parent: out, key: i });
      } else if (v !== null && typeof v === "object") {
        const out: Record<string, unknown> = {};
        for (const [k, item] of Object.entries(v)) out[this.replace(k)] = item;
        (parent as Record<string | number, unknown>)[key] = out;
        for (const k of Object.keys(out)) stack.push({ parent: out, key: k });
      }
    }
    return holder.value as T;
  }
}

/** The values worth masking: long enough, and for "Bearer xyz" also "xyz". */
function expand(values: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const v of values) {
    if (v.length >= MIN_MASK_LENGTH) out.add(v);
    const m = SCHEME_RE.exec(v.trim());
    if (m?.[1] && m[1].length >= MIN_MASK_LENGTH) out.add(m[1]);
  }
  return [...out];
}
