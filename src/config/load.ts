// Reading a config: text → plain data (YAML, TOML or JSON, with line:column on syntax errors)
// → a validated Config (zod, with readable messages). Nothing here interprets the values
// (`~` in a server's cwd is expanded where the server is started, not here).
import { readFile } from "node:fs/promises";
import { dirname } from "node:path";
import YAML from "yaml";
import { parse as parseToml, TomlError } from "smol-toml";
import { parse as parseJsonc, ParseErrorCode, printParseErrorCode, type ParseError } from "jsonc-parser";
import { configSchema, type Config } from "./schema.js";
import { ConfigError, issuesFromZod } from "./errors.js";
import { bareMaps, reservedKeyIssues } from "./reserved-keys.js";
import { resolveServerPaths } from "./relative-paths.js";
import { effectiveSandbox } from "./sandbox.js";
import { displayPath, homeDir, resolveConfigPath, type ConfigFormat } from "./paths.js";

export interface LoadedConfig {
  path: string;
  format: ConfigFormat;
  config: Config;
  /** The file's data before validation and defaults, as written. */
  raw: unknown;
}

export interface LoadOptions {
  /** `--config PATH`. */
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  home?: string;
}

/** Finds, reads, parses and validates the config. Throws ConfigError for every problem. */
export async function loadConfig(opts: LoadOptions = {}): Promise<LoadedConfig> {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const home = homeDir(env, opts.home);
  const found = resolveConfigPath({ explicit: opts.configPath, env, cwd, home });
  const text = await readConfigFile(found.path);
  if (text === undefined) throw missingConfig(found.path);
  const label = displayPath(found.path, cwd, home);
  const raw = parseRawText(text, found.format, label);
  // Relative server paths mean "next to this file", whatever directory mcphub runs in.
  const config = resolveServerPaths(validateConfig(raw, label), dirname(found.path));
  return { path: found.path, format: found.format, config, raw };
}

/** Parses and validates config text. `file` only labels the messages. */
export function parseConfigText(text: string, format: ConfigFormat, file?: string): Config {
  return validateConfig(parseRawText(text, format, file), file);
}

/** Checks plain data against the schema and applies defaults. */
export function validateConfig(raw: unknown, file?: string): Config {
  const input = raw ?? {};
  // Checked first: zod's records would drop such a key without a word.
  const reserved = reservedKeyIssues(input);
  if (reserved.length > 0) throw new ConfigError(reserved, file);
  // jitless: zod compiles a fast path per object schema on its first parse, which pays off only
  // for schemas parsed again and again; a config is parsed once per start (or reload), and that
  // compile was the largest item of a warm gateway start.
  const result = configSchema.safeParse(input, { jitless: true });
  if (!result.success) throw new ConfigError(issuesFromZod(result.error, configSchema, input), file);
  return withSandboxDefaults(bareMaps(result.data));
}

/** Each stdio server's `sandbox` becomes its effective one: its own combined with the top-level default. */
function withSandboxDefaults(config: Config): Config {
  for (const [name, s] of Object.entries(config.servers)) {
    if (s.command === undefined) continue;
    const sandbox = effectiveSandbox(config.sandbox, s.sandbox);
    if (sandbox === undefined) continue;
    config.servers[name] = { ...s, sandbox };
  }
  return config;
}

export function missingConfig(path: string): ConfigError {
  return ConfigError.message(`no config at ${path} — run \`mcphub init\` to create one`);
}

/** The file's text, or undefined when it does not exist. */
export async function readConfigFile(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw ConfigError.message(`cannot read config ${path}: ${(err as Error).message}`);
  }
}

/**
 * Text → plain data, with syntax errors reported at line:column. An empty (or comment-only)
 * YAML file is an empty config; the result is null in that case.
 */
export function parseRawText(text: string, format: ConfigFormat, file?: string): unknown {
  switch (format) {
    case "yaml":
      return toPlainYaml(parseYamlDocument(text, file), file);
    case "toml":
      try {
        return parseToml(text);
      } catch (err) {
        if (err instanceof TomlError) {
          const first = firstLine(err.message).replace(/^Invalid TOML document:\s*/, "");
          throw new ConfigError([{ path: "", message: `TOML syntax error: ${first}`, line: err.line, column: err.column }], file);
        }
        throw err;
      }
    case "json":
      return parseJson(text, file);
  }
}

/** A YAML document with comments, or ConfigError for the first syntax error. */
export function parseYamlDocument(text: string, file?: string): YAML.Document.Parsed {
  const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const pos = error.linePos?.[0];
    const message = firstLine(error.message).replace(/ at line \d+, column \d+:?$/, "");
    throw new ConfigError([{ path: "", message: `YAML syntax error: ${message}`, line: pos?.line, column: pos?.col }], file);
  }
  return doc;
}

/** At most this many alias expansions: a hostile file ("billion laughs") cannot exhaust memory. */
export const MAX_YAML_ALIASES = 100;

/** The document as plain data; an alias bomb is a ConfigError naming the file. */
export function toPlainYaml(doc: YAML.Document, file?: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (err) {
    if (err instanceof ReferenceError && /alias count/i.test(err.message)) {
      throw ConfigError.message(
        `YAML aliases (*name) expand to too many nodes (over ${MAX_YAML_ALIASES}, the way a "billion laughs" file does); write those values out instead of aliasing them`,
        file,
      );
    }
    throw err;
  }
}

function parseJson(text: string, file?: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    // JSON.parse's messages differ by engine version, quote the file's text (newlines included)
    // and sometimes give no position at all; jsonc-parser's scanner says where and what, exactly.
    const found = jsonSyntaxError(text);
    if (found) {
      const { line, column } = lineColumn(text, found.offset);
      throw new ConfigError([{ path: "", message: `JSON syntax error: ${found.message}`, line, column }], file);
    }
    const message = firstLine((err as Error).message).replace(/ in JSON at position \d+.*$/, "").replace(/^Unexpected end of JSON input$/, "unexpected end of file");
    throw new ConfigError([{ path: "", message: `JSON syntax error: ${message}` }], file);
  }
}

/** The first syntax error of strict JSON text: where (an offset) and what, in words. */
export function jsonSyntaxError(text: string): { offset: number; message: string } | undefined {
  const errors: ParseError[] = [];
  parseJsonc(text, errors, { allowTrailingComma: false, disallowComments: true, allowEmptyContent: false });
  const e = errors[0];
  if (!e) return undefined;
  const end = text.trimEnd().length;
  // "Expected }" at the very end means the file stops early: point at its last character.
  const atEnd = e.offset >= end;
  const offset = atEnd ? Math.max(0, end - 1) : e.offset;
  const snippet = text.slice(e.offset, e.offset + Math.max(1, e.length)).split("\n")[0] ?? "";
  const before = text.slice(0, e.offset).trimEnd().slice(-1);
  const words: Partial<Record<number, string>> = {
    [ParseErrorCode.InvalidSymbol]: /^[A-Za-z_]/.test(snippet)
      ? `unexpected ${snippet}: expected a value (text needs double quotes, "${snippet}")`
      : `unexpected ${JSON.stringify(snippet)}`,
    [ParseErrorCode.ValueExpected]: atEnd ? "the file ends where a value is expected" : "expected a value",
    [ParseErrorCode.PropertyNameExpected]: before === "," ? "expected a key after the comma (JSON allows no comma before } or ])" : 'expected a key in double quotes or "}"',
    [ParseErrorCode.CommaExpected]: "expected a comma between two entries",
    [ParseErrorCode.ColonExpected]: 'expected ":" after the key',
    [ParseErrorCode.CloseBraceExpected]: atEnd ? "the file ends before the } that closes an object" : 'expected "," or "}"',
    [ParseErrorCode.CloseBracketExpected]: atEnd ? "the file ends before the ] that closes a list" : 'expected "," or "]"',
    [ParseErrorCode.EndOfFileExpected]: `unexpected ${JSON.stringify(snippet)} after the end of the document`,
    [ParseErrorCode.InvalidCommentToken]: "comments are not allowed in a .json config (a .yaml config keeps comments)",
    [ParseErrorCode.UnexpectedEndOfString]: "a string is not closed on its line",
    [ParseErrorCode.UnexpectedEndOfComment]: "a comment is not closed",
    [ParseErrorCode.InvalidNumberFormat]: `invalid number ${JSON.stringify(snippet)}`,
    [ParseErrorCode.InvalidEscapeCharacter]: "invalid escape sequence in a string",
    [ParseErrorCode.InvalidUnicode]: "invalid \\u escape in a string",
    [ParseErrorCode.InvalidCharacter]: "a control character inside a string (write it escaped, e.g. \\n)",
  };
  const message = words[e.error] ?? printParseErrorCode(e.error).replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
  return { offset, message };
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return { line, column };
}

function firstLine(s: string): string {
  return (s.split("\n")[0] ?? s).trim();
}
