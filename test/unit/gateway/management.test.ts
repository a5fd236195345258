// Issue 15, item 15: the management tools carry behaviour hints, and all eight definitions stay
// well under 4 KiB of JSON (they are in every lazy-mode prompt).
import { describe, expect, it } from "vitest";
import { MANAGEMENT_TOOLS, managementDefinitions } from "../../../src/gateway/management.js";

describe("management tool definitions", () => {
  it("say which tools only read and which may change anything", () => {
    const defs = managementDefinitions("prefixed");
    expect(defs.map((d) => d.name)).toEqual(MANAGEMENT_TOOLS.map((t) => `mcphub_${t}`));
    for (const d of defs) {
      if (d.name === "mcphub_call_tool") expect(d.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
      else expect(d.annotations).toEqual({ readOnlyHint: true });
    }
  });

  it("all eight stay under 4 KiB of JSON with either naming", () => {
    for (const naming of ["prefixed", "clean"] as const) {
      expect(Buffer.byteLength(JSON.stringify(managementDefinitions(naming)))).toBeLessThan(4096);
    }
  });
});
