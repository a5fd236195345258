import { describe, expect, it } from "vitest";
import { argumentTemplate } from "../../../src/catalog/search/template.js";

describe("argumentTemplate", () => {
  it("keeps the required fields as typed placeholders and names the optional ones beside, never null", () => {
    const t = argumentTemplate({
      type: "object",
      properties: { z: { type: "number" }, url: { type: "string" }, a: { type: "boolean" } },
      required: ["url"],
    });
    expect(t).toEqual({ required_fields: ["url"], argument_template: { url: "<url>" }, optional_fields: ["a", "z"], truncated: false });
  });

  it("gives each type a placeholder of its own type", () => {
    const t = argumentTemplate({
      type: "object",
      required: ["n", "i", "b", "e", "c", "list", "obj", "opt", "union", "ref"],
      properties: {
        n: { type: "number", minimum: 2.5 },
        i: { type: "integer", exclusiveMinimum: 0, multipleOf: 5 },
        b: { type: "boolean" },
        e: { type: "string", enum: ["low", "high"], default: "high" },
        c: { const: "v1" },
        list: { type: "array", items: { type: "string" }, minItems: 2, uniqueItems: true },
        obj: { type: "object", properties: { id: { type: "integer" }, note: { type: "string" } }, required: ["id"] },
        opt: { type: ["null", "string"] },
        union: { anyOf: [{ type: "null" }, { type: "array", items: { type: "integer", minimum: 1 } }] },
        ref: { $ref: "#/$defs/point" },
      },
      $defs: { point: { type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"] } },
    });
    expect(t.argument_template).toEqual({
      n: 2.5,
      i: 5,
      b: false,
      e: "high",
      c: "v1",
      list: ["<list1>", "<list2>"],
      obj: { id: 0 },
      opt: "<opt>",
      union: [1],
      ref: { x: 0, y: 0 },
    });
    expect(t.truncated).toBe(false);
  });

  it("respects string length bounds and fills maps that must not be empty", () => {
    const t = argumentTemplate({
      type: "object",
      required: ["code", "tags"],
      properties: { code: { type: "string", minLength: 12, maxLength: 20 }, tags: { type: "object", minProperties: 1, additionalProperties: { type: "string" } } },
    });
    expect((t.argument_template["code"] as string).length).toBeGreaterThanOrEqual(12);
    expect(t.argument_template["tags"]).toEqual({ "<key>": "<value>" });
  });

  it("accepts raw JSON text and rejects anything that is not an object", () => {
    expect(argumentTemplate(JSON.stringify({ properties: { q: {} }, required: ["q"] })).required_fields).toEqual(["q"]);
    expect(argumentTemplate("not json")).toEqual({ required_fields: [], argument_template: {}, optional_fields: [], truncated: true });
    expect(argumentTemplate(42)).toEqual({ required_fields: [], argument_template: {}, optional_fields: [], truncated: true });
    expect(argumentTemplate(`{"x":"${"y".repeat(300 * 1024)}"}`).truncated).toBe(true);
    expect(argumentTemplate({ type: "object" })).toEqual({ required_fields: [], argument_template: {}, optional_fields: [], truncated: false });
  });

  it("bounds required to 48 entries and flags bad entries", () => {
    const required = Array.from({ length: 50 }, (_, i) => `r${String(i).padStart(2, "0")}`);
    const t = argumentTemplate({ required });
    expect(t.required_fields).toHaveLength(48);
    expect(t.truncated).toBe(true);
    const odd = argumentTemplate({ required: ["a", 7, "b"] });
    expect(odd.required_fields).toEqual(["a", "b"]);
    expect(odd.truncated).toBe(true);
    expect(argumentTemplate({ required: "a" }).truncated).toBe(true);
  });

  it("lists at most 16 optional names", () => {
    const properties = Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`p${String(i).padStart(2, "0")}`, {}]));
    const t = argumentTemplate({ properties, required: ["p03"] });
    expect(t.argument_template).toEqual({ p03: "<p03>" });
    expect(t.optional_fields).toHaveLength(16);
    expect(t.optional_fields[0]).toBe("p00");
    expect(t.truncated).toBe(false);
  });

  it("rejects empty and over-long names and stops at 2048 bytes of names", () => {
    const long = "n".repeat(129);
    const t = argumentTemplate({ properties: { "": {}, [long]: {}, ok: {} }, required: ["", long, "ok"] });
    expect(t.argument_template).toEqual({ ok: "<ok>" });
    expect(t.truncated).toBe(true);
    const names = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, "0")}${"x".repeat(118)}`); // 120 bytes each
    const big = argumentTemplate({ properties: Object.fromEntries(names.map((n) => [n, {}])), required: names });
    expect(Object.keys(big.argument_template)).toHaveLength(17); // 17 × 120 = 2040 ≤ 2048
    expect(big.truncated).toBe(true);
  });

  it("bounds a deep or self-referencing schema and says so", () => {
    const t = argumentTemplate({ type: "object", required: ["node"], properties: { node: { $ref: "#/$defs/n" } }, $defs: { n: { type: "object", required: ["child"], properties: { child: { $ref: "#/$defs/n" } } } } });
    expect(t.truncated).toBe(true);
    expect(t.argument_template).toEqual({ node: {} });
  });
});
