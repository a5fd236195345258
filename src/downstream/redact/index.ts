// Redaction of what a downstream sends back: sanitize.ts cleans text the gateway stores or shows
// (stderr tails, transport errors: known secret values, secret-looking patterns, control
// characters), secret-mask.ts masks the values the gateway itself injected into one connection
// in every message that connection sends upstream.
export {
  explainingLine,
  REDACTED,
  redactPatterns,
  SENSITIVE_NAME_RE,
  sanitizeLine,
  sanitizeText,
  sensitiveEnvValues,
  summarizeStartupStderr,
} from "./sanitize.js";
export { SecretMask } from "./secret-mask.js";
