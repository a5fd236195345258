// A literal that every match of a regular expression must contain, when one can be read off the
// pattern safely. find uses it to look for candidate lines in the stored bytes (no decoding) and
// runs the expression only on those lines: a 200 MB result is then searched at the speed of
// decrypting it. The reading is deliberately conservative: any construct it does not understand,
// and anything that could match a newline (find works line by line), gives no literal, and find
// falls back to decoding and scanning everything.

/** Escapes after which the next character means itself (punctuation). */
const SELF_ESCAPE = /[\^$\\.*+?()[\]{}|/\-=!:,#<>'"@%&~`;_ ]/;
/** Escapes that can match a newline, or whose extent this reader does not follow. */
const UNSAFE_ESCAPE = /[sSDWnrPpcux0-9kfvtB]/;
const MIN_LITERAL = 3;

export function requiredLiteral(source: string, flags: string): string | undefined {
  if (flags.includes("i") || flags.includes("s")) return undefined;
  let best = "";
  let cur = "";
  const flush = () => {
    if (cur.length > best.length) best = cur;
    cur = "";
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    let token: string | undefined; // a character that must appear, or undefined for something else
    if (c === "|") return undefined; // an alternative may avoid any literal
    if (c === "\\") {
      const n = source[i + 1];
      if (n === undefined) return undefined;
      if (UNSAFE_ESCAPE.test(n)) return undefined;
      if (n === "d" || n === "w" || n === "b") {
        i += 2;
        flush();
        skipQuantifier();
        continue;
      }
      if (!SELF_ESCAPE.test(n)) return undefined;
      token = n;
      i += 2;
    } else if (c === "[") {
      const close = classEnd(source, i);
      if (close < 0) return undefined;
      i = close + 1;
      flush();
      skipQuantifier();
      continue;
    } else if (c === "(") {
      const close = groupEnd(source, i);
      if (close < 0) return undefined;
      i = close + 1;
      flush();
      skipQuantifier();
      continue;
    } else if (c === "^" || c === "$" || c === ".") {
      i++;
      flush();
      skipQuantifier();
      continue;
    } else if ("*+?{)]}".includes(c)) {
      return undefined; // a quantifier or bracket where none can be: not understood
    } else {
      const cp = source.codePointAt(i) as number;
      if (cp < 0x20) return undefined;
      token = String.fromCodePoint(cp);
      i += token.length;
    }
    // The token's own quantifier decides whether it must appear.
    const q = source[i];
    if (q === "?" || q === "*" || q === "{") {
      flush();
      skipQuantifier();
    } else if (q === "+") {
      cur += token;
      flush();
      skipQuantifier();
    } else cur += token;
  }
  flush();
  return best.length >= MIN_LITERAL ? best : undefined;

  function skipQuantifier(): void {
    const q = source[i];
    if (q === "?" || q === "*" || q === "+") i++;
    else if (q === "{") {
      const close = source.indexOf("}", i);
      i = close < 0 ? source.length : close + 1;
    } else return;
    if (source[i] === "?") i++; // lazy
  }
}

/** Index of the "]" closing the class at `open`, or -1; -1 too for a class that could match a newline. */
function classEnd(source: string, open: number): number {
  let i = open + 1;
  if (source[i] === "^") return -1; // a negated class matches "\n"
  if (source[i] === "]") i++;
  for (; i < source.length; i++) {
    const c = source[i] as string;
    if (c === "\\") return -1; // escapes in a class (\s, \n, \x0a...): not followed
    if (c === "[") return -1; // v-flag set notation
    if (c === "]") return i;
    if (c.charCodeAt(0) < 0x20) return -1;
  }
  return -1;
}

/** Index of the ")" closing the group at `open`, or -1; -1 too when the group holds an unsafe construct. */
function groupEnd(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i] as string;
    if (c === "\\") {
      const n = source[i + 1];
      if (n === undefined || UNSAFE_ESCAPE.test(n)) return -1;
      i++;
    } else if (c === "[") {
      const close = classEnd(source, i);
      if (close < 0) return -1;
      i = close;
    } else if (c === "(") depth++;
    else if (c === ")") {
      depth--;
      if (depth === 0) return i;
    } else if (c.charCodeAt(0) < 0x20) return -1;
  }
  return -1;
}
