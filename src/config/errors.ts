// ConfigError: every problem with a config file, as one readable line per issue
// (`mcphub.yaml: servers.github.url: url must start with http:// or https://`). Zod issues are
// translated here so the rest of mcphub never shows a raw zod message or a stack trace.
import { z } from "zod";

export interface ConfigIssue {
  /** Dotted location inside the config (`servers.github.args[0]`); "" for the file as a whole. */
  path: string;
  message: string;
  /** 1-based position in the file, for syntax errors. */
  line?: number;
  column?: number;
}

export class ConfigError extends Error {
  readonly issues: ConfigIssue[];
  /** The file the issues are about, when there is one. */
  readonly file?: string;

  constructor(issues: ConfigIssue[], file?: string) {
    super(formatIssues(issues, file));
    this.name = "ConfigError";
    this.issues = issues;
    if (file !== undefined) this.file = file;
    // A config problem is the user's input, not a bug: whoever prints `stack` (an uncaught
    // rejection, a test reporter) shows the readable lines and nothing else.
    this.stack = `${this.name}: ${this.message}`;
  }

  /** A ConfigError with one issue that is not about a location inside the config. */
  static message(message: string, file?: string): ConfigError {
    return new ConfigError([{ path: "", message }], file);
  }
}

function formatIssues(issues: ConfigIssue[], file: string | undefined): string {
  const lines = issues.map((i) => {
    let where = file ?? "";
    if (i.line !== undefined) where += `${where ? ":" : "line "}${i.line}${i.column !== undefined ? `:${i.column}` : ""}`;
    const parts = [where, i.path].filter((p) => p !== "");
    return parts.length ? `${parts.join(": ")}: ${i.message}` : i.message;
  });
  return [...new Set(lines)].join("\n");
}

/** `["servers", "github", "args", 0]` → `servers.github.args[0]`; odd keys are quoted. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else {
      const key = String(seg);
      if (/^[A-Za-z0-9_-]+$/.test(key)) out += out === "" ? key : `.${key}`;
      else out += `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Zod issues → ConfigIssues

/**
 * Translates zod issues for `schema` (the schema `input` was checked against) into readable
 * issues. `input` is the raw value, used to say what was found instead of what was expected.
 */
export function issuesFromZod(error: z.ZodError, schema: z.ZodType, input: unknown): ConfigIssue[] {
  const issues: (ConfigIssue & { at: readonly PropertyKey[] })[] = [];
  // Objects whose unknown key is a likely typo of a known key: their own object-level rules
  // ("needs a command or a url") would only repeat the typo's consequence, so they are dropped.
  const typoAt = new Set<string>();
  const flat = expandUnions(error.issues);
  for (const issue of flat) {
    if (issue.code !== "unrecognized_keys") continue;
    const allowed = objectKeysAt(schema, issue.path);
    for (const key of issue.keys) {
      const suggestion = closest(key, allowed);
      if (suggestion !== undefined) typoAt.add(formatPath(issue.path));
    }
  }
  for (const issue of flat) {
    const path = issue.path;
    switch (issue.code) {
      case "unrecognized_keys": {
        const allowed = objectKeysAt(schema, path);
        for (const key of issue.keys) {
          const suggestion = closest(key, allowed);
          const message =
            suggestion !== undefined
              ? `unknown key; did you mean "${suggestion}"?`
              : `unknown key; allowed keys: ${allowed.join(", ")}`;
          issues.push({ path: formatPath([...path, key]), message, at: [...path, key] });
        }
        break;
      }
      case "invalid_type":
      case "invalid_union": {
        // A fraction where a whole number belongs is a number too: say which kind of number.
        const whole = issue.code === "invalid_type" && (issue as { expected?: string }).expected === "int";
        const message = whole ? `expected a whole number, got ${describeValue(valueAt(input, path))}` : typeMessage(schema, path, input);
        issues.push({ path: formatPath(path), message, at: path });
        break;
      }
      case "invalid_value": {
        const found = valueAt(input, path);
        let message = issue.message;
        if (typeof found === "string") {
          const options = issue.values.filter((v): v is string => typeof v === "string");
          const suggestion = closest(found, options);
          message += suggestion !== undefined ? ` (got "${found}"; did you mean "${suggestion}"?)` : ` (got "${found}")`;
        }
        issues.push({ path: formatPath(path), message, at: path });
        break;
      }
      case "custom":
        if (path.length > 0 && typoAt.has(formatPath(path))) break;
        issues.push({ path: formatPath(path), message: issue.message, at: path });
        break;
      default:
        issues.push({ path: formatPath(path), message: issue.message, at: path });
    }
  }
  // Report in the order the file is written (parsers keep key order), not in schema order.
  const order = issues.map((i) => documentOrder(input, i.at));
  return issues
    .map((issue, n) => ({ issue, key: order[n] ?? [] }))
    .sort((a, b) => compareOrder(a.key, b.key))
    .map(({ issue: { path, message } }) => ({ path, message }));
}

/**
 * A union such as `sandbox: off | {network, read, ...}` fails as a whole ("invalid input"), with
 * one list of issues per option. When the value has the shape of exactly one option (every other
 * option rejects it at its root), that option's issues are the real ones: they are reported in its
 * place, at their own paths (`sandbox.network: ...` rather than `sandbox: expected ...`).
 */
function expandUnions(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const out: z.core.$ZodIssue[] = [];
  for (const issue of issues) {
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const shaped = issue.errors.filter((branch) => !branch.some((b) => b.path.length === 0 && (b.code === "invalid_type" || b.code === "invalid_value")));
      const only = shaped.length === 1 ? shaped[0] : undefined;
      if (only !== undefined && only.length > 0) {
        out.push(...expandUnions(only.map((b) => ({ ...b, path: [...issue.path, ...b.path] }) as z.core.$ZodIssue)));
        continue;
      }
    }
    out.push(issue);
  }
  return out;
}

/** The position of each path segment among its siblings in the input (Infinity when absent). */
function documentOrder(input: unknown, path: readonly PropertyKey[]): number[] {
  const out: number[] = [];
  let cur = input;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") {
      out.push(Infinity);
      break;
    }
    const index = Array.isArray(cur) ? Number(seg) : Object.keys(cur).indexOf(String(seg));
    out.push(index < 0 ? Infinity : index);
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return out;
}

function compareOrder(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

function typeMessage(schema: z.ZodType, path: readonly PropertyKey[], input: unknown): string {
  const target = schemaAt(schema, path);
  const expected = target ? describeSchema(target) : "a different kind of value";
  const got = describeValue(valueAt(input, path));
  if (path.length === 0) return `the config must be ${expected}, got ${got}`;
  return `expected ${expected}, got ${got}`;
}

/** Follows a data path through the schema (objects, records, arrays and their wrappers). */
function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let cur: z.ZodType | undefined = schema;
  for (const seg of path) {
    cur = cur && unwrap(cur);
    // Inside a union, keys belong to its map-shaped option.
    if (cur instanceof z.ZodUnion) cur = (cur.options as z.ZodType[]).map(unwrap).find((o) => o instanceof z.ZodObject);
    if (cur instanceof z.ZodObject) cur = (cur.shape as Record<string, z.ZodType>)[String(seg)];
    else if (cur instanceof z.ZodRecord) cur = cur.valueType as z.ZodType;
    else if (cur instanceof z.ZodArray) cur = cur.element as z.ZodType;
    else return undefined;
  }
  return cur;
}

/** Strips optional/default/nullable and input-side pipes down to the schema that shapes data. */
function unwrap(schema: z.ZodType): z.ZodType {
  let cur = schema;
  for (;;) {
    if (cur instanceof z.ZodOptional || cur instanceof z.ZodDefault || cur instanceof z.ZodNullable) {
      cur = cur.unwrap() as z.ZodType;
    } else if (cur instanceof z.ZodPipe) {
      cur = cur.in as z.ZodType;
    } else return cur;
  }
}

function objectKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const target = schemaAt(schema, path);
  let obj = target && unwrap(target);
  if (obj instanceof z.ZodUnion) obj = (obj.options as z.ZodType[]).map(unwrap).find((o) => o instanceof z.ZodObject);
  return obj instanceof z.ZodObject ? Object.keys(obj.shape as Record<string, unknown>) : [];
}

/** A human phrase for what a schema accepts: "a list of strings", "true or false", ... */
export function describeSchema(schema: z.ZodType): string {
  if (schema.description) return schema.description;
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault || schema instanceof z.ZodNullable) {
    return describeSchema(schema.unwrap() as z.ZodType);
  }
  if (schema instanceof z.ZodPipe) {
    // A transform's output says nothing about accepted input; a validating pipe (string → enum) does.
    const out = schema.out as z.ZodType;
    return describeSchema(out instanceof z.ZodTransform ? (schema.in as z.ZodType) : out);
  }
  if (schema instanceof z.ZodString) return "a string";
  if (schema instanceof z.ZodNumber) return "a number";
  if (schema instanceof z.ZodBoolean) return "true or false";
  if (schema instanceof z.ZodEnum) return `one of ${schema.options.map((o) => JSON.stringify(o)).join(", ")}`;
  if (schema instanceof z.ZodLiteral) return schema.values.size === 1 ? JSON.stringify([...schema.values][0]) : "a fixed value";
  if (schema instanceof z.ZodArray) return `a list of ${plural(describeSchema(schema.element as z.ZodType))}`;
  if (schema instanceof z.ZodRecord) return `a map of names to ${plural(describeSchema(schema.valueType as z.ZodType))}`;
  if (schema instanceof z.ZodObject) return "a map of settings";
  if (schema instanceof z.ZodUnion) {
    const parts = [...new Set((schema.options as z.ZodType[]).map(describeSchema))];
    return parts.length <= 1 ? (parts[0] ?? "a value") : `${parts.slice(0, -1).join(", ")} or ${parts[parts.length - 1]}`;
  }
  return "a different kind of value";
}

/** "a string" → "strings", "a string or a number" → "strings or numbers". */
function plural(phrase: string): string {
  if (phrase === "true or false") return "true/false values";
  return phrase
    .split(/(, | or )/)
    .map((part) => {
      const m = /^an? (\w+)(.*)$/.exec(part);
      if (!m) return part;
      const noun = m[1] ?? "";
      return `${noun.endsWith("s") ? noun : `${noun}s`}${m[2] ?? ""}`;
    })
    .join("");
}

/** What was found, for "got ...": `a string ("a b")`, `a list`, `nothing`. */
export function describeValue(v: unknown): string {
  if (v === null || v === undefined) return "nothing (an empty value)";
  if (Array.isArray(v)) return "a list";
  switch (typeof v) {
    case "string":
      return `a string (${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)})`;
    case "number":
      return `a number (${v})`;
    case "boolean":
      return String(v);
    case "object":
      return "a map";
    default:
      return typeof v;
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur = input;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

// ---------------------------------------------------------------------------------------------
// did-you-mean

/**
 * The allowed word closest to `word`, when it is close enough to be a typo: equal after
 * ignoring case, "-" and "_", or within an edit distance of about a third of its length.
 */
export function closest(word: string, allowed: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_]/g, "");
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of allowed) {
    if (norm(candidate) === norm(word)) return candidate;
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  const limit = Math.min(3, Math.max(1, Math.floor(Math.max(word.length, best?.length ?? 0) / 3)));
  return best !== undefined && bestDistance <= limit ? best : undefined;
}

/** Optimal-string-alignment distance: Levenshtein plus adjacent transpositions ("comamnd"). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number): number => d[i * cols + j] ?? 0;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      d[i * cols + j] = v;
    }
  }
  return at(a.length, b.length);
}
