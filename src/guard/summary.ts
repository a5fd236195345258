// The arguments of a call as a person confirming it sees them: short, bounded, and with anything
// that looks like a credential replaced. Values under a key that names a secret (token, password,
// api_key, ...) are never shown; strings are clipped and scanned for credential shapes (bearer
// tokens, `KEY=value`, well-known token prefixes); deep or long structures are summarised.
import { REDACTED, redactPatterns, SENSITIVE_NAME_RE } from "../downstream/sanitize.js";
import { clipUtf8 } from "../util/text.js";

const MAX_STRING = 120;
const MAX_ITEMS = 6;
const MAX_DEPTH = 3;
/** The whole summary, as JSON text. */
export const MAX_SUMMARY_BYTES = 800;

function summarise(value: unknown, depth: number): unknown {
  if (typeof value === "string") {
    const clean = redactPatterns(value);
    return clean.length > MAX_STRING ? `${clipUtf8(clean, MAX_STRING)} (${[...value].length} characters)` : clean;
  }
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? `[${value.length} items]` : "{…}";
  if (Array.isArray(value)) {
    const shown = value.slice(0, MAX_ITEMS).map((v) => summarise(v, depth + 1));
    if (value.length > MAX_ITEMS) shown.push(`… (+${value.length - MAX_ITEMS} more)`);
    return shown;
  }
  const out: Record<string, unknown> = {};
  const keys = Object.keys(value);
  for (const key of keys.slice(0, MAX_ITEMS * 2)) {
    const v = (value as Record<string, unknown>)[key];
    Object.defineProperty(out, key, { value: SENSITIVE_NAME_RE.test(key) ? REDACTED : summarise(v, depth + 1), enumerable: true });
  }
  if (keys.length > MAX_ITEMS * 2) Object.defineProperty(out, "…", { value: `+${keys.length - MAX_ITEMS * 2} more keys`, enumerable: true });
  return out;
}

/** One bounded line of JSON describing the arguments, with secrets redacted. */
export function summariseArguments(args: Record<string, unknown>): string {
  if (Object.keys(args).length === 0) return "(none)";
  const text = JSON.stringify(summarise(args, 0));
  return clipUtf8(text, MAX_SUMMARY_BYTES);
}
