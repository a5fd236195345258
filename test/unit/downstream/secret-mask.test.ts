// The per-connection secret mask: nothing to mask means no mask at all; a clean value comes back
// as the very same object (no copy on the hot path); a value holding a secret comes back masked
// in strings and keys, longest value first, the credential of "Bearer x" on its own too; a deeply
// nested value neither overflows the stack nor escapes; values that change (OAuth) are followed.
import { describe, expect, it } from "vitest";
import { SecretMask } from "../../../src/downstream/secret-mask.js";

describe("SecretMask", () => {
  it("is absent without values worth masking", () => {
    expect(SecretMask.of([])).toBeUndefined();
    expect(SecretMask.of(["abc"])).toBeUndefined();
  });

  it("returns a clean value itself and masks strings and keys of a dirty one", () => {
    const mask = SecretMask.of(["Bearer tok-123456", "sk-short"]) as SecretMask;
    const clean = { content: [{ type: "text", text: "nothing here" }], structuredContent: { a: [1, null, true] } };
    expect(mask.value(clean)).toBe(clean);
    const dirty = { content: [{ type: "text", text: "sent Bearer tok-123456, then tok-123456 and sk-short" }], structuredContent: { "sk-short": { deep: ["x tok-123456"] } } };
    const before = JSON.stringify(dirty);
    const out = mask.value(dirty);
    expect(out).toEqual({ content: [{ type: "text", text: "sent [redacted], then [redacted] and [redacted]" }], structuredContent: { "[redacted]": { deep: ["x [redacted]"] } } });
    // The original is not changed (it may be shared).
    expect(JSON.stringify(dirty)).toBe(before);
  });

  it("walks a 100,000-deep value without overflowing the stack", () => {
    const mask = SecretMask.of(["secret-value"]) as SecretMask;
    let deep: unknown = "the secret-value";
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { k: deep };
    const out = mask.value(deep);
    let v: unknown = out;
    while (typeof v !== "string") v = Array.isArray(v) ? v[0] : (v as { k: unknown }).k;
    expect(v).toBe("the [redacted]");
  });

  it("follows values that change while the connection lives", () => {
    const tokens = ["first-token"];
    const mask = SecretMask.of([], () => tokens) as SecretMask;
    expect(mask.text("a first-token b")).toBe("a [redacted] b");
    tokens.push("second-token");
    expect(mask.text("second-token")).toBe("[redacted]");
  });
});
