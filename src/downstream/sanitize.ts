// Redaction of text that came from a downstream (stderr, transport errors) before it is stored or
// shown anywhere. Two layers: exact values we know are secret, then shapes that look like
// credentials (bearer tokens, KEY=value assignments, URL userinfo, private keys, JSON fields).
import type { ServerConfig } from "../config/schema.js";

export const REDACTED = "[redacted]";

/** Env var names whose values are treated as secrets. */
export const SENSITIVE_NAME_RE = /pass|token|secret|key|auth|credential|bearer|cookie|session|(?:^|_)pat(?:_|$)/i;

/** Values this short would shred ordinary text if redacted everywhere; they are left alone. */
const MIN_REDACT_LENGTH = 4;

// eslint-disable-next-line no-control-regex
const ANSI_RE = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)|[@-Z\\-_])/g;
const PRIVATE_KEY_RE = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;
const AUTH_HEADER_RE = /\b(authorization|proxy-authorization|x-api-key|api-key|cookie|set-cookie)(\s*[:=]\s*)("?)[^\r\n"]+/gi;
const BEARER_RE = /\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=-]{6,}/gi;
const JSON_FIELD_RE = /("[A-Za-z0-9_.-]*(?:pass|token|secret|key|auth|credential|cookie|session)[A-Za-z0-9_.-]*"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;
const ASSIGNMENT_RE = /\b([A-Za-z_][A-Za-z0-9_.-]*(?:pass|token|secret|key|auth|credential|bearer|cookie|session)[A-Za-z0-9_.-]*)(\s*[=:]\s*)("[^"\r\n]*"|'[^'\r\n]*'|[^\s,;&"']+)/gi;
const URL_USERINFO_RE = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@:]*(?::[^/\s@]*)?@/gi;
const WELL_KNOWN_TOKEN_RE = /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b/g;
// eslint-disable-next-line no-control-regex
const CONTROL_EXCEPT_NEWLINE_RE = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** Values of env vars whose names look like credentials (for redaction). */
export function sensitiveEnvValues(env: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && SENSITIVE_NAME_RE.test(k)) out.push(v);
  }
  return out;
}

/** Replaces each exact secret value (longest first, so a value containing another goes whole). */
export function redactValues(text: string, secrets: Iterable<string>): string {
  const values = [...new Set([...secrets].filter((s) => s.length >= MIN_REDACT_LENGTH))].sort((a, b) => b.length - a.length);
  let out = text;
  for (const v of values) out = out.split(v).join(REDACTED);
  return out;
}

/** Removes shapes that look like credentials; keeps line structure. */
export function redactPatterns(text: string): string {
  return text
    .replace(ANSI_RE, "")
    .replace(PRIVATE_KEY_RE, REDACTED)
    .replace(AUTH_HEADER_RE, (_m, name: string, sep: string, q: string) => `${name}${sep}${q}${REDACTED}`)
    .replace(BEARER_RE, (_m, scheme: string, sp: string) => `${scheme}${sp}${REDACTED}`)
    .replace(JSON_FIELD_RE, (_m, field: string) => `${field}"${REDACTED}"`)
    .replace(ASSIGNMENT_RE, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`)
    .replace(URL_USERINFO_RE, (_m, scheme: string) => `${scheme}${REDACTED}@`)
    .replace(WELL_KNOWN_TOKEN_RE, REDACTED);
}

/** Full sanitising of multi-line text (a stderr tail): values, patterns, control characters. */
export function sanitizeText(text: string, secrets: Iterable<string>): string {
  return redactPatterns(redactValues(text, secrets)).replace(/\r\n?/g, "\n").replace(CONTROL_EXCEPT_NEWLINE_RE, "");
}

/** Sanitised and flattened to one line, for error messages. */
export function sanitizeLine(text: string, secrets: Iterable<string>, maxBytes = 1024): string {
  const flat = sanitizeText(text, secrets).replace(/\s+/g, " ").trim();
  return capBytes(flat, maxBytes);
}

export function capBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  // Cut on a character boundary, then mark the cut.
  let cut = Buffer.from(text, "utf8").subarray(0, Math.max(0, maxBytes - 3)).toString("utf8");
  if (cut.endsWith("\uFFFD")) cut = cut.slice(0, -1);
  return `${cut}...`;
}

/**
 * The one-line summary put into `error` when a stdio handshake fails and the child wrote to
 * stderr. The raw text never leaves: only a fixed sentence chosen by what the text looks like.
 * A variable name is shown only when the operator configured it (env key or vault_only name).
 */
export function summarizeStartupStderr(tail: string, truncated: boolean, cfg: ServerConfig): string {
  const text = tail.replace(/\s+/g, " ");
  let summary: string;
  const envName = missingEnvName(text);
  if (/vault[^.]*\blocked\b|\blocked vault\b/i.test(text)) {
    summary = "the downstream reported a locked vault; unlock it (mcphub vault) and retry";
  } else if (envName !== undefined) {
    const known = new Set([...Object.keys(cfg.env ?? {}), ...(cfg.vault_only ?? [])]);
    summary = known.has(envName.name)
      ? `the downstream needs environment variable ${envName.name}, which is unavailable`
      : "the downstream needs an environment variable that is unavailable";
  } else if (/permission denied|\bEACCES\b|\bEPERM\b|operation not permitted/i.test(text)) {
    summary = "the downstream hit a permission error during startup";
  } else if (/\bENOENT\b|no such file|cannot find module|module not found|file not found/i.test(text)) {
    summary = "the downstream could not find a file it needs during startup";
  } else if (/unknown (?:option|flag|argument)|unrecognized (?:option|argument)|invalid (?:option|argument)|^\s*usage:/im.test(text)) {
    summary = "the downstream rejected a startup option";
  } else {
    summary = "the downstream wrote diagnostics to stderr during startup (detail withheld; see the stderr tail)";
  }
  if (truncated) summary += " (stderr exceeded the capture limit)";
  return capBytes(summary, 1024);
}

// A line that states a problem, as opposed to a stack frame, a banner or a progress message.
const PROBLEM_RE = /\b(?:error|exception|cannot|can't|could not|couldn't|not found|no such|denied|missing|required|invalid|unknown|unrecognized|usage|fatal|panic|failed|refused|not set|unavailable|EACCES|EPERM|ENOENT)\b/i;
const FRAME_RE = /^\s*(?:at\s|File "|\^+\s*$|~+\s*$|Traceback\b|node:internal|Node\.js v\d)/;

/**
 * The one line of a (sanitised) stderr tail that explains a failed start: the first line stating
 * a problem that is not a stack frame, else the last non-empty line; at most 300 bytes.
 */
export function explainingLine(tail: string): string | undefined {
  const lines = tail.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const pick = lines.find((l) => PROBLEM_RE.test(l) && !FRAME_RE.test(l)) ?? lines.filter((l) => !FRAME_RE.test(l)).pop();
  return pick === undefined ? undefined : capBytes(pick.replace(/\s+/g, " "), 300);
}

function missingEnvName(text: string): { name: string } | undefined {
  const m =
    /\b([A-Z][A-Z0-9_]{2,})\b[^.]{0,40}?\b(?:is not set|not set|is required|is missing|missing|must be set|is undefined|not defined|unavailable)\b/.exec(text) ??
    /\b(?:missing|required|set|define|provide)\b[^.]{0,40}?\b(?:env(?:ironment)?(?: variable)?)\s+([A-Z][A-Z0-9_]{2,})\b/i.exec(text);
  // ENOENT, EACCES...: an errno code, not a variable.
  if (m?.[1] && /^[A-Z][A-Z0-9_]*$/.test(m[1]) && !/^E[A-Z]{3,}$/.test(m[1])) return { name: m[1] };
  if (/environment variable|env var/i.test(text) && /missing|required|not set|unset|undefined/i.test(text)) return { name: "" };
  return undefined;
}
