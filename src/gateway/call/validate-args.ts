// Argument validation against the downstream's own input schema, before anything is sent.
// A bad call is answered with a normal result the model can act on ({status: invalid_arguments,
// missing, invalid, hint}) and never reaches the downstream.
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { JsonObject } from "../../catalog/types.js";
import { clipUtf8 } from "../../util/text.js";

/** Field names are the caller's own keys: quoted at most this long, and at most this many listed. */
const FIELD_BYTES = 128;
const MAX_LISTED = 50;

export interface ArgumentProblems {
  missing: string[];
  invalid: { field: string; problem: string }[];
}

// Built on the first call, not at import: a gateway answering discovery from its cached
// catalogue right after start should not pay for two validator instances it does not use yet.
let ajvDraft7: Ajv | undefined;
let ajv2020: Ajv2020 | undefined;
// Compiled validators keyed by the schema object itself: catalogue entries are immutable, so
// a re-listed tool gets a new object and a fresh validator, and old ones are collected.
const cache = new WeakMap<object, ValidateFunction | null>();

function compile(schema: JsonObject): ValidateFunction | null {
  let v = cache.get(schema);
  if (v !== undefined) return v;
  const draft = typeof schema.$schema === "string" ? schema.$schema : "";
  try {
    const modern = draft.includes("2020-12") || draft.includes("2019-09");
    const ajv = modern
      ? (ajv2020 ??= new Ajv2020({ strict: false, allErrors: true, validateFormats: false }))
      : (ajvDraft7 ??= new Ajv({ strict: false, allErrors: true, validateFormats: false }));
    v = ajv.compile(schema);
  } catch {
    // A schema our validator cannot compile must not block the call: the downstream validates.
    v = null;
  }
  cache.set(schema, v);
  return v;
}

/** Returns undefined when the arguments are acceptable (or the schema cannot be checked). */
export function checkArguments(schema: JsonObject, args: Record<string, unknown>): ArgumentProblems | undefined {
  const validate = compile(schema);
  if (!validate || validate(args)) return undefined;
  const missing = new Set<string>();
  const invalid = new Map<string, string>();
  for (const e of validate.errors ?? []) {
    if (e.keyword === "required") {
      const prop = (e.params as { missingProperty?: string }).missingProperty ?? "";
      missing.add(joinPath(e.instancePath, prop));
    } else {
      const field = fieldOf(e) || "(arguments)";
      if (!invalid.has(field)) invalid.set(field, describe(e));
    }
  }
  const invalidList = [...invalid].map(([field, problem]) => ({ field: clipUtf8(field, FIELD_BYTES), problem })).sort((a, b) => (a.field < b.field ? -1 : 1));
  if (invalidList.length > MAX_LISTED) {
    const more = invalidList.length - MAX_LISTED;
    invalidList.splice(MAX_LISTED, more, { field: "(more)", problem: `${more} more fields are invalid` });
  }
  return { missing: [...missing].sort().slice(0, MAX_LISTED), invalid: invalidList };
}

function fieldOf(e: ErrorObject): string {
  if (e.keyword === "additionalProperties") {
    return joinPath(e.instancePath, (e.params as { additionalProperty?: string }).additionalProperty ?? "");
  }
  return joinPath(e.instancePath, "");
}

function joinPath(instancePath: string, prop: string): string {
  const parts = instancePath.split("/").filter(Boolean).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (prop) parts.push(prop);
  return parts.join(".");
}

function describe(e: ErrorObject): string {
  switch (e.keyword) {
    case "additionalProperties":
      return "not accepted by this tool";
    case "type":
      return `must be ${(e.params as { type?: string }).type ?? "of another type"}`;
    case "enum":
      return `must be one of ${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)}`;
    default:
      return e.message ?? "invalid";
  }
}
