import { describe, expect, it } from "vitest";
import { capabilitySummary } from "../../../src/catalog/search/summary.js";

describe("capabilitySummary", () => {
  it("uses use_when, else description, else tags, sorted by server name", () => {
    const s = capabilitySummary([
      { name: "zeta", tags: ["x", "y"] },
      { name: "alpha", use_when: ["planning", "  building\n features "], description: "ignored" },
      { name: "mid", description: "Reads   files" },
      { name: "bare" },
    ]);
    expect(s).toBe("alpha: planning; building features | bare | mid: Reads files | zeta: x, y");
  });

  it("writes exact tool scopes in allowlist form and skips empty allowlists", () => {
    const s = capabilitySummary([
      { name: "gh", description: "GitHub", allowedTools: ["create_issue", "list_repos"] },
      { name: "none", description: "hidden", allowedTools: [] },
    ]);
    expect(s).toBe("gh: allowed tools: create_issue, list_repos");
    const many = Array.from({ length: 40 }, (_, i) => `tool_number_${i}`);
    const hint = capabilitySummary([{ name: "x", allowedTools: many }]);
    expect(Buffer.byteLength(hint)).toBeLessThanOrEqual(3 + 256);
    const shown = (hint.match(/tool_number_/g) ?? []).length;
    expect(hint).toContain(`(+${40 - shown} more)`);
  });

  it("clips each hint to 256 bytes with an ellipsis", () => {
    const s = capabilitySummary([{ name: "a", description: "é".repeat(300) }]);
    expect(Buffer.byteLength(s)).toBe(3 + 256 - 1); // "a: " + 253 bytes of 2-byte chars + "…"
    expect(s.endsWith("…")).toBe(true);
  });

  it("stays within 2048 bytes and counts what it left out", () => {
    const servers = Array.from({ length: 40 }, (_, i) => ({ name: `server${String(i).padStart(2, "0")}`, description: "d".repeat(100) }));
    const s = capabilitySummary(servers);
    expect(Buffer.byteLength(s)).toBeLessThanOrEqual(2048);
    const shown = (s.match(/server\d\d:/g) ?? []).length;
    expect(s.endsWith(` | +${40 - shown} more; call list_servers`)).toBe(true);
    expect(shown).toBeGreaterThan(10);
    expect(capabilitySummary([])).toBe("");
  });
});
