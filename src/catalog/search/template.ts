// The argument template a resolve recommendation carries: required fields as "<name>" and the
// other top-level properties as null, bounded so a huge schema never bloats the answer. Mirrors
// the Go `summarizeInputSchema` rules (reference §3.4).
import { utf8Bytes } from "../../util/text.js";

export const TEMPLATE_MAX_FIELDS = 48;
export const TEMPLATE_MAX_NAME_BYTES = 128;
export const TEMPLATE_MAX_TOTAL_BYTES = 2048;
export const TEMPLATE_MAX_SCHEMA_BYTES = 256 * 1024;

export interface ArgumentTemplate {
  required_fields: string[];
  argument_template: Record<string, string | null>;
  truncated: boolean;
}

function asSchemaObject(inputSchema: unknown): Record<string, unknown> | undefined {
  if (typeof inputSchema === "string") {
    if (utf8Bytes(inputSchema) > TEMPLATE_MAX_SCHEMA_BYTES) return undefined;
    try {
      return asSchemaObject(JSON.parse(inputSchema) as unknown);
    } catch {
      return undefined;
    }
  }
  if (inputSchema !== null && typeof inputSchema === "object" && !Array.isArray(inputSchema)) {
    return inputSchema as Record<string, unknown>;
  }
  return undefined;
}

export function argumentTemplate(inputSchema: unknown): ArgumentTemplate {
  const schema = asSchemaObject(inputSchema);
  if (!schema) return { required_fields: [], argument_template: {}, truncated: true };

  const required_fields: string[] = [];
  const argument_template: Record<string, string | null> = Object.create(null) as Record<string, string | null>;
  let truncated = false;
  let fields = 0;
  let nameBytes = 0;

  /** Adds one name if it passes the per-name guards; false when it was rejected. */
  const admit = (name: string, value: string | null): boolean => {
    if (Object.prototype.hasOwnProperty.call(argument_template, name)) return true;
    const bytes = utf8Bytes(name);
    if (name.length === 0 || bytes > TEMPLATE_MAX_NAME_BYTES || fields >= TEMPLATE_MAX_FIELDS || nameBytes + bytes > TEMPLATE_MAX_TOTAL_BYTES) {
      truncated = true;
      return false;
    }
    argument_template[name] = value;
    fields++;
    nameBytes += bytes;
    return true;
  };

  const required = schema["required"];
  if (Array.isArray(required)) {
    if (required.length > TEMPLATE_MAX_FIELDS) truncated = true;
    for (const name of required.slice(0, TEMPLATE_MAX_FIELDS)) {
      if (typeof name !== "string") {
        truncated = true;
        continue;
      }
      if (required_fields.includes(name)) continue;
      if (admit(name, `<${name}>`)) required_fields.push(name);
    }
  } else if (required !== undefined) {
    truncated = true;
  }

  const properties = schema["properties"];
  if (properties !== null && typeof properties === "object" && !Array.isArray(properties)) {
    const names = Object.keys(properties);
    if (names.length > TEMPLATE_MAX_FIELDS) {
      return { required_fields, argument_template: { ...argument_template }, truncated: true };
    }
    for (const name of names.sort()) admit(name, null);
  }
  return { required_fields, argument_template: { ...argument_template }, truncated };
}
