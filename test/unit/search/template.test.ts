import { describe, expect, it } from "vitest";
import { argumentTemplate } from "../../../src/catalog/search/template.js";

describe("argumentTemplate", () => {
  it("puts required fields first as placeholders and the rest as null, sorted", () => {
    const t = argumentTemplate({ type: "object", properties: { z: {}, url: {}, a: {} }, required: ["url"] });
    expect(t).toEqual({ required_fields: ["url"], argument_template: { url: "<url>", a: null, z: null }, truncated: false });
    expect(Object.keys(t.argument_template)).toEqual(["url", "a", "z"]);
  });

  it("accepts raw JSON text and rejects anything that is not an object", () => {
    expect(argumentTemplate(JSON.stringify({ properties: { q: {} }, required: ["q"] })).required_fields).toEqual(["q"]);
    expect(argumentTemplate("not json")).toEqual({ required_fields: [], argument_template: {}, truncated: true });
    expect(argumentTemplate(42)).toEqual({ required_fields: [], argument_template: {}, truncated: true });
    expect(argumentTemplate(`{"x":"${"y".repeat(300 * 1024)}"}`).truncated).toBe(true);
    expect(argumentTemplate({ type: "object" })).toEqual({ required_fields: [], argument_template: {}, truncated: false });
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

  it("keeps only required fields when there are more than 48 properties", () => {
    const properties = Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`p${i}`, {}]));
    const t = argumentTemplate({ properties, required: ["p3"] });
    expect(t).toEqual({ required_fields: ["p3"], argument_template: { p3: "<p3>" }, truncated: true });
    const exactly48 = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`p${i}`, {}]));
    expect(argumentTemplate({ properties: exactly48 }).truncated).toBe(false);
  });

  it("rejects empty and over-long names and stops at 2048 bytes of names", () => {
    const long = "n".repeat(129);
    const t = argumentTemplate({ properties: { "": {}, [long]: {}, ok: {} } });
    expect(t.argument_template).toEqual({ ok: null });
    expect(t.truncated).toBe(true);
    const names = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, "0")}${"x".repeat(118)}`); // 120 bytes each
    const big = argumentTemplate({ properties: Object.fromEntries(names.map((n) => [n, {}])) });
    expect(Object.keys(big.argument_template)).toHaveLength(17); // 17 × 120 = 2040 ≤ 2048
    expect(big.truncated).toBe(true);
  });
});
