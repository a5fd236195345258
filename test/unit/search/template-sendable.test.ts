// Every argument template can be sent: filled in with values of each placeholder's type, it
// validates against its tool's own input schema. Checked over every tool of the benchmark
// catalogues (LiveMCPBench 527 + MCP-Zero 2,797 = 3,324 tools, copies of ../shared/bench) and the
// example config's 40, with ajv as the gateway runs it (call_tool's check) and, stricter, with
// string formats validated too (as a downstream may).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { argumentTemplate } from "../../../src/catalog/search/template.js";
import { checkArguments } from "../../../src/gateway/call/validate-args.js";
import type { JsonObject, JsonValue } from "../../../src/catalog/types.js";

const ROOT = join(import.meta.dirname, "../../..");

interface Tool {
  name: string;
  schema: JsonObject;
}

function load(path: string): Tool[] {
  return readFileSync(join(ROOT, path), "utf8")
    .split("\n")
    .filter((l) => l.trim().length > 0)
    .map((l) => JSON.parse(l) as { server: string; tool: string; inputSchema?: JsonObject | null })
    .map((t) => ({ name: `${t.server}__${t.tool}`, schema: t.inputSchema ?? { type: "object" } }));
}

const live = load("bench/data/livemcpbench/catalog.jsonl");
const zero = load("bench/data/mcp-zero/catalog.jsonl");
const example = load("bench/data/example/catalog.jsonl");

// --- The filler: what a model does with the template -------------------------------------------
// A string placeholder ("<path>") becomes a string the schema's string rules accept; every other
// placeholder is already a value of its type and is sent as given.

type Schema = Record<string, unknown>;
const isSchema = (v: unknown): v is Schema => v !== null && typeof v === "object" && !Array.isArray(v);

const FORMAT_EXAMPLES: Record<string, string> = {
  uri: "https://example.com/a",
  url: "https://example.com/a",
  "uri-reference": "https://example.com/a",
  email: "someone@example.com",
  "date-time": "2026-01-02T03:04:05Z",
  date: "2026-01-02",
  time: "03:04:05Z",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  hostname: "example.com",
  uuid: "123e4567-e89b-12d3-a456-426614174000",
};

/** A string matching a simple regular expression (literals, classes, \d \w \s, ?, *, +, {n,m}, anchors). */
function sampleOf(pattern: string): string | undefined {
  let out = "";
  let i = 0;
  const atom = (): string | undefined => {
    const c = pattern[i++];
    if (c === undefined) return undefined;
    if (c === "\\") {
      const e = pattern[i++];
      return e === "d" ? "1" : e === "w" ? "a" : e === "s" ? " " : e;
    }
    if (c === "[") {
      const end = pattern.indexOf("]", i);
      const body = pattern.slice(i, end);
      i = end + 1;
      if (body.startsWith("^")) return "a";
      return body.startsWith("\\d") ? "1" : body[0] === "\\" ? body[1] : body[0];
    }
    if (c === ".") return "a";
    if (c === "(" || c === ")" || c === "|") return undefined;
    return c;
  };
  while (i < pattern.length) {
    if (pattern[i] === "^" || pattern[i] === "$") {
      i++;
      continue;
    }
    const a = atom();
    if (a === undefined) return undefined;
    let times = 1;
    const q = pattern[i];
    if (q === "?" || q === "*") {
      times = q === "?" ? 1 : 1;
      i++;
    } else if (q === "+") i++;
    else if (q === "{") {
      const end = pattern.indexOf("}", i);
      times = Number(pattern.slice(i + 1, end).split(",")[0]);
      i = end + 1;
    }
    out += a.repeat(times);
  }
  return out;
}

function fillString(s: Schema): string {
  const format = typeof s["format"] === "string" ? FORMAT_EXAMPLES[s["format"]] : undefined;
  const anyFormat = Array.isArray(s["anyOf"]) ? s["anyOf"].filter(isSchema).map((b) => (typeof b["format"] === "string" ? FORMAT_EXAMPLES[b["format"]] : undefined)).find(Boolean) : undefined;
  const pattern = typeof s["pattern"] === "string" ? sampleOf(s["pattern"]) : undefined;
  let v = pattern ?? format ?? anyFormat ?? "value";
  const min = typeof s["minLength"] === "number" ? s["minLength"] : 0;
  const max = typeof s["maxLength"] === "number" ? s["maxLength"] : Infinity;
  if (v.length < min) v = v.padEnd(min, "x");
  if (v.length > max) v = v.slice(0, max);
  return v;
}

function deref(s: Schema, root: Schema): Schema {
  let out = s;
  for (let n = 0; typeof out["$ref"] === "string" && n < 16; n++) {
    let at: unknown = root;
    for (const p of (out["$ref"] as string).replace(/^#\/?/, "").split("/").filter(Boolean)) at = isSchema(at) ? at[p] : undefined;
    const { $ref: _r, ...rest } = out;
    out = { ...(isSchema(at) ? at : {}), ...rest };
  }
  return out;
}

/** The schemas a value may be checked against (a value's own and its anyOf/oneOf/allOf branches). */
function branches(s: Schema, root: Schema): Schema[] {
  const d = deref(s, root);
  const out = [d];
  for (const k of ["anyOf", "oneOf", "allOf"]) if (Array.isArray(d[k])) for (const b of d[k]) if (isSchema(b)) out.push(...branches(b, root));
  return out;
}

function fill(value: JsonValue, schema: Schema | undefined, root: Schema): JsonValue {
  const all = schema ? branches(schema, root) : [];
  if (typeof value === "string" && /^<.*>$/su.test(value)) {
    const stringy = all.find((b) => b["type"] === "string" && (b["pattern"] || b["format"] || b["minLength"] || b["maxLength"])) ?? all.find((b) => b["type"] === "string") ?? all[0] ?? {};
    return fillString({ ...(all[0] ?? {}), ...stringy });
  }
  if (Array.isArray(value)) {
    const items = all.map((b) => b["items"]).find(isSchema);
    return value.map((v) => fill(v, items, root));
  }
  if (isSchema(value)) {
    const props: Schema = Object.assign({}, ...all.map((b) => (isSchema(b["properties"]) ? b["properties"] : {})));
    const extra = all.map((b) => b["additionalProperties"]).find(isSchema);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v as JsonValue, isSchema(props[k]) ? props[k] : extra, root)]));
  }
  return value;
}

// --- Validators --------------------------------------------------------------------------------
// ajv-formats is CommonJS: under NodeNext its default export is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;
const strict7 = addFormats(new Ajv({ strict: false, allErrors: true }));
const strict2020 = addFormats(new Ajv2020({ strict: false, allErrors: true }) as unknown as Ajv);

function strictProblems(schema: JsonObject, args: JsonObject): string | undefined {
  const draft = typeof schema["$schema"] === "string" ? schema["$schema"] : "";
  const ajv = draft.includes("2020-12") || draft.includes("2019-09") ? strict2020 : strict7;
  let validate;
  try {
    validate = ajv.compile(schema);
  } catch {
    return undefined; // the gateway cannot compile it either: the downstream decides
  }
  return validate(args) ? undefined : ajv.errorsText(validate.errors);
}

function check(tools: Tool[]): { failures: string[]; truncated: string[]; nulls: string[] } {
  const failures: string[] = [];
  const truncated: string[] = [];
  const nulls: string[] = [];
  for (const t of tools) {
    const tpl = argumentTemplate(t.schema);
    if (tpl.truncated) truncated.push(t.name);
    if (JSON.stringify(tpl.argument_template).includes("null") && !JSON.stringify(t.schema).includes('"null"')) nulls.push(t.name);
    const args = fill(tpl.argument_template, t.schema, t.schema) as JsonObject;
    const gateway = checkArguments(t.schema, args);
    if (gateway) failures.push(`${t.name}: gateway: ${JSON.stringify(gateway)} for ${JSON.stringify(args)}`);
    const strict = strictProblems(t.schema, args);
    if (strict) failures.push(`${t.name}: strict: ${strict} for ${JSON.stringify(args)}`);
  }
  return { failures, truncated, nulls };
}

describe("argument templates can be sent", () => {
  it("covers every tool of the benchmark catalogues (3,324) and the example config (42)", () => {
    expect(live.length + zero.length).toBe(3324);
    expect(example.length).toBe(42);
  });

  for (const [label, tools] of [
    ["LiveMCPBench (527 tools)", live],
    ["MCP-Zero (2,797 tools)", zero],
    ["the example config (42 tools)", example],
  ] as const) {
    it(`validates every template of ${label} once its string placeholders are filled`, () => {
      const { failures, truncated, nulls } = check(tools);
      expect(failures).toEqual([]);
      expect(nulls).toEqual([]);
      expect(truncated).toEqual([]);
    });
  }

  it("gives the example config's tools the templates a model can send", () => {
    const schema = (name: string): JsonObject => (example.find((t) => t.name === name) as Tool).schema;
    expect(argumentTemplate(schema("files__read_text_file"))).toEqual({
      required_fields: ["path"],
      argument_template: { path: "<path>" },
      optional_fields: ["head", "tail"],
      truncated: false,
    });
    expect(argumentTemplate(schema("memory__add_observations")).argument_template).toEqual({
      observations: [{ entityName: "<entityName>", contents: ["<content>"] }],
    });
    expect(argumentTemplate(schema("memory__create_entities")).argument_template).toEqual({
      entities: [{ name: "<name>", entityType: "<entityType>", observations: ["<observation>"] }],
    });
    expect(argumentTemplate(schema("everything__get-sum")).argument_template).toEqual({ a: 0, b: 0 });
    expect(argumentTemplate(schema("everything__get-annotated-message")).argument_template).toEqual({ messageType: "error" });
  });
});
