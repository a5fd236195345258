// The argument template a resolve recommendation carries: the tool's required arguments, each as
// a placeholder of its own JSON type, so that a model that fills in the string placeholders sends
// a call the tool's own schema accepts.
//
//   string   "<name>"                 (an enum: its first value; a const: the const)
//   number   the default, else the least value the bounds allow (0 when unbounded)
//   boolean  the default, else false
//   array    one item's placeholder (as many as minItems asks for)
//   object   its own required properties, recursively
//
// Optional properties are left out (a `null` there is refused by most schemas: "must be number"),
// and named in `optional_fields` so the model knows they exist. Local `$ref`s, `anyOf`/`oneOf`
// (the first branch that is not null) and `allOf` (merged) are followed. The bounds of the Go
// `summarizeInputSchema` (reference §3.4) still apply to the top-level names; the template as a
// whole is bounded in bytes, and a template cut by any bound says so (`truncated`: describe the
// tool before calling it).
import type { JsonObject, JsonValue } from "../types.js";
import { utf8Bytes } from "../../util/text.js";

export const TEMPLATE_MAX_FIELDS = 48;
export const TEMPLATE_MAX_NAME_BYTES = 128;
export const TEMPLATE_MAX_TOTAL_BYTES = 2048;
export const TEMPLATE_MAX_SCHEMA_BYTES = 256 * 1024;
/** The template's JSON stays within this many bytes (nested placeholders of a large schema). */
export const TEMPLATE_MAX_JSON_BYTES = 2048;
/** Optional top-level names listed beside the template (at most this many, and 256 bytes). */
export const TEMPLATE_MAX_OPTIONAL = 16;
/** How deep nested objects and arrays are expanded, and how many `$ref`s are followed. */
const MAX_DEPTH = 6;
const MAX_REFS = 16;

export interface ArgumentTemplate {
  required_fields: string[];
  argument_template: JsonObject;
  /** Top-level properties that may be sent and were left out (sorted, bounded). */
  optional_fields: string[];
  truncated: boolean;
}

type Schema = Record<string, unknown>;

function isSchema(v: unknown): v is Schema {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function asSchemaObject(inputSchema: unknown): Schema | undefined {
  if (typeof inputSchema === "string") {
    if (utf8Bytes(inputSchema) > TEMPLATE_MAX_SCHEMA_BYTES) return undefined;
    try {
      return asSchemaObject(JSON.parse(inputSchema) as unknown);
    } catch {
      return undefined;
    }
  }
  return isSchema(inputSchema) ? inputSchema : undefined;
}

/** Follows local references (`#/definitions/X`, `#/$defs/X`, any JSON pointer into the root). */
class Resolver {
  private refs = 0;
  constructor(private readonly root: Schema) {}

  deref(schema: Schema): Schema | undefined {
    let s: Schema = schema;
    while (typeof s["$ref"] === "string") {
      if (++this.refs > MAX_REFS) return undefined;
      const target = this.pointer(s["$ref"]);
      if (!target) return undefined;
      const { $ref: _ref, ...rest } = s;
      s = { ...target, ...rest };
    }
    return s;
  }

  private pointer(ref: string): Schema | undefined {
    if (!ref.startsWith("#")) return undefined;
    let at: unknown = this.root;
    for (const raw of ref.slice(1).split("/").filter((p) => p.length > 0)) {
      const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      if (!isSchema(at)) return undefined;
      at = at[key];
    }
    return isSchema(at) ? at : undefined;
  }
}

/** The schema with its first non-null `anyOf`/`oneOf` branch and its `allOf` parts merged in. */
function flatten(schema: Schema, r: Resolver, depth: number): Schema | undefined {
  let s = r.deref(schema);
  if (!s || depth > MAX_DEPTH) return s;
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches: unknown = s[key];
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const pick: Schema | undefined = branches
      .filter(isSchema)
      .map((b): Schema | undefined => flatten(b, r, depth + 1))
      .find((b) => b !== undefined && b["type"] !== "null");
    const { [key]: _drop, ...rest } = s;
    s = pick ? mergeSchemas(rest, pick) : rest;
  }
  const parts = s["allOf"];
  if (Array.isArray(parts)) {
    const { allOf: _drop, ...rest } = s;
    s = rest;
    for (const part of parts) {
      const flat = isSchema(part) ? flatten(part, r, depth + 1) : undefined;
      if (flat) s = mergeSchemas(s, flat);
    }
  }
  return s;
}

/** Merges two schemas for one value: properties and required lists are united, other keys kept from `a` first. */
function mergeSchemas(a: Schema, b: Schema): Schema {
  const out: Schema = { ...b, ...a };
  const pa = isSchema(a["properties"]) ? a["properties"] : {};
  const pb = isSchema(b["properties"]) ? b["properties"] : {};
  if (Object.keys(pa).length + Object.keys(pb).length > 0) out["properties"] = { ...pb, ...pa };
  const ra = Array.isArray(a["required"]) ? a["required"] : [];
  const rb = Array.isArray(b["required"]) ? b["required"] : [];
  if (ra.length + rb.length > 0) out["required"] = [...new Set([...rb, ...ra])];
  return out;
}

/** The JSON type a placeholder takes: the declared one (the first that is not null), else inferred from the keywords. */
function typeOf(s: Schema): string | undefined {
  const t = s["type"];
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === "string" && x !== "null") ?? (t.includes("null") ? "null" : undefined);
  if (isSchema(s["properties"]) || Array.isArray(s["required"])) return "object";
  if (s["items"] !== undefined) return "array";
  return undefined;
}

/** The least number the bounds allow (a multiple of multipleOf when one is asked for). */
function numberPlaceholder(s: Schema, integer: boolean): number {
  const num = (k: string): number | undefined => (typeof s[k] === "number" && Number.isFinite(s[k]) ? (s[k] as number) : undefined);
  const min = num("minimum");
  const max = num("maximum");
  const xmin = num("exclusiveMinimum");
  const xmax = num("exclusiveMaximum");
  const step = num("multipleOf");
  let v = min ?? (xmin !== undefined ? xmin + (integer ? 1 : Math.min(1, Math.abs(xmin) * 1e-3 || 1e-3)) : 0);
  if (min === undefined && xmin === undefined) {
    if (max !== undefined && v > max) v = max;
    if (xmax !== undefined && v >= xmax) v = xmax - 1;
  }
  if (integer) v = Math.ceil(v);
  if (step !== undefined && step > 0) v = Math.ceil(v / step) * step;
  return v;
}

/** A string placeholder: "<name>", padded or shortened to the schema's length bounds. */
function stringPlaceholder(s: Schema, name: string): string {
  const min = typeof s["minLength"] === "number" ? s["minLength"] : 0;
  const max = typeof s["maxLength"] === "number" ? s["maxLength"] : Number.POSITIVE_INFINITY;
  let text = `<${name}>`;
  if ([...text].length > max) text = max >= 2 ? "<>" : "x".repeat(Math.max(0, Math.floor(max)));
  if ([...text].length < min) text = `<${name.padEnd(Math.max(1, min - 2), "_")}>`;
  return text;
}

/** Whether a bound (depth, references) cut a nested placeholder short. */
interface Budget {
  cut: boolean;
}

/** The placeholder for one value described by `schema`. */
function placeholder(raw: Schema, name: string, r: Resolver, depth: number, budget: Budget): JsonValue {
  const s = flatten(raw, r, depth);
  if (!s) {
    budget.cut = true;
    return `<${name}>`;
  }
  if ("const" in s) return s["const"] as JsonValue;
  const enumeration = s["enum"];
  if (Array.isArray(enumeration) && enumeration.length > 0) {
    const d = s["default"];
    return (d !== undefined && enumeration.some((x) => JSON.stringify(x) === JSON.stringify(d)) ? d : enumeration[0]) as JsonValue;
  }
  const type = typeOf(s);
  switch (type) {
    case "integer":
    case "number": {
      const d = s["default"];
      if (typeof d === "number" && (type === "number" || Number.isInteger(d))) return d;
      return numberPlaceholder(s, type === "integer");
    }
    case "boolean":
      return typeof s["default"] === "boolean" ? s["default"] : false;
    case "null":
      return null;
    case "array":
      return arrayPlaceholder(s, name, r, depth, budget);
    case "object":
      return objectPlaceholder(s, r, depth, budget);
    default:
      return stringPlaceholder(s, name);
  }
}

function arrayPlaceholder(s: Schema, name: string, r: Resolver, depth: number, budget: Budget): JsonValue[] {
  const minItems = typeof s["minItems"] === "number" ? Math.max(0, Math.floor(s["minItems"])) : 0;
  const maxItems = typeof s["maxItems"] === "number" ? Math.floor(s["maxItems"]) : Number.POSITIVE_INFINITY;
  const count = Math.min(Math.max(1, minItems), maxItems);
  if (count <= 0) return [];
  if (depth >= MAX_DEPTH) {
    budget.cut = true;
    return [];
  }
  const items = s["items"];
  const prefix = Array.isArray(s["prefixItems"]) ? s["prefixItems"] : Array.isArray(items) ? items : undefined;
  const out: JsonValue[] = [];
  for (let i = 0; i < count; i++) {
    const item: unknown = prefix ? prefix[i] : items;
    out.push(isSchema(item) ? placeholder(item, singular(name), r, depth + 1, budget) : `<${singular(name)}>`);
  }
  // Identical items would break uniqueItems: number the placeholders of a longer array.
  if (s["uniqueItems"] === true && out.length > 1) {
    return out.map((v, i) => (typeof v === "string" ? `${v.slice(0, -1)}${i + 1}>` : typeof v === "number" ? v + i : v));
  }
  return out;
}

/** "observations" → "observation", for the item placeholder's name. */
function singular(name: string): string {
  if (name.endsWith("ies") && name.length > 4) return `${name.slice(0, -3)}y`;
  if (name.endsWith("s") && !name.endsWith("ss") && name.length > 3) return name.slice(0, -1);
  return name;
}

function objectPlaceholder(s: Schema, r: Resolver, depth: number, budget: Budget): JsonObject {
  const value: JsonObject = {};
  const properties = isSchema(s["properties"]) ? s["properties"] : {};
  const required = Array.isArray(s["required"]) ? s["required"].filter((n): n is string => typeof n === "string") : [];
  if (depth >= MAX_DEPTH && required.length > 0) {
    budget.cut = true;
    return value;
  }
  for (const name of [...new Set(required)]) {
    const prop = properties[name];
    value[name] = isSchema(prop) ? placeholder(prop, name, r, depth + 1, budget) : additionalPlaceholder(s, name, r, depth, budget);
  }
  // An object that must have properties but names none (a map) gets one entry of its value type.
  const minProperties = typeof s["minProperties"] === "number" ? s["minProperties"] : 0;
  if (Object.keys(value).length === 0 && minProperties > 0) value["<key>"] = additionalPlaceholder(s, "value", r, depth, budget);
  return value;
}

function additionalPlaceholder(s: Schema, name: string, r: Resolver, depth: number, budget: Budget): JsonValue {
  const extra = s["additionalProperties"];
  return isSchema(extra) ? placeholder(extra, name, r, depth + 1, budget) : `<${name}>`;
}

export function argumentTemplate(inputSchema: unknown): ArgumentTemplate {
  const schema = asSchemaObject(inputSchema);
  if (!schema) return { required_fields: [], argument_template: {}, optional_fields: [], truncated: true };
  const r = new Resolver(schema);
  const flat = flatten(schema, r, 0) ?? {};
  const budget: Budget = { cut: false };

  const required_fields: string[] = [];
  const argument_template: JsonObject = {};
  let truncated = false;
  let nameBytes = 0;
  const properties = isSchema(flat["properties"]) ? flat["properties"] : {};
  const required = flat["required"];
  if (required !== undefined && !Array.isArray(required)) truncated = true;
  const names: unknown[] = Array.isArray(required) ? required : [];
  if (names.length > TEMPLATE_MAX_FIELDS) truncated = true;
  for (const name of names.slice(0, TEMPLATE_MAX_FIELDS)) {
    if (typeof name !== "string") {
      truncated = true;
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(argument_template, name)) continue;
    const bytes = utf8Bytes(name);
    if (name.length === 0 || bytes > TEMPLATE_MAX_NAME_BYTES || nameBytes + bytes > TEMPLATE_MAX_TOTAL_BYTES) {
      truncated = true;
      continue;
    }
    const prop = properties[name];
    argument_template[name] = isSchema(prop) ? placeholder(prop, name, r, 1, budget) : additionalPlaceholder(flat, name, r, 0, budget);
    required_fields.push(name);
    nameBytes += bytes;
  }
  // A template over its byte bound keeps its names, each a shallow placeholder: describe first.
  if (budget.cut || utf8Bytes(JSON.stringify(argument_template)) > TEMPLATE_MAX_JSON_BYTES) {
    truncated = true;
    for (const name of required_fields) {
      const prop = properties[name];
      const s = isSchema(prop) ? flatten(prop, r, 1) : undefined;
      const type = s ? typeOf(s) : undefined;
      argument_template[name] = type === "array" ? [] : type === "object" ? {} : s ? placeholder(s, name, r, MAX_DEPTH, { cut: false }) : `<${name}>`;
    }
  }
  const optional_fields: string[] = [];
  let optionalBytes = 0;
  for (const n of Object.keys(properties).sort()) {
    if (required_fields.includes(n) || names.includes(n) || n.length === 0) continue;
    if (optional_fields.length >= TEMPLATE_MAX_OPTIONAL || optionalBytes + utf8Bytes(n) > 256) break;
    optional_fields.push(n);
    optionalBytes += utf8Bytes(n);
  }
  return { required_fields, argument_template, optional_fields, truncated };
}
