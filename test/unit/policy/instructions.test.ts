import { describe, expect, it } from "vitest";
import { clipUtf8 } from "../../../src/util/text.js";
import {
  buildInstructions,
  MAX_INSTRUCTIONS_BYTES,
  MAX_SUMMARY_BYTES,
  type InstructionsInput,
} from "../../../src/gateway/policy/instructions.js";

const prefixed = (clean: string): string => `mcphub_${clean}`;
const bytes = (s: string): number => Buffer.byteLength(s, "utf8");

const lazy = (over: Partial<InstructionsInput> = {}): string =>
  buildInstructions({ expose: "lazy", summary: "", hasPins: false, toolNames: prefixed, ...over });

describe("buildInstructions", () => {
  it("describes the gateway and the management tools by their advertised names in every mode", () => {
    for (const expose of ["all", "lazy"] as const) {
      const text = buildInstructions({ expose, summary: "", hasPins: false, toolNames: prefixed });
      expect(text).toContain("gateway in front of several MCP servers");
      expect(text).toContain("server__tool");
      for (const t of ["list_servers", "resolve_tool", "search_tools", "stats"]) expect(text).toContain(`\`mcphub_${t}\``);
      expect(text).not.toContain("`resolve_tool`");
    }
  });

  it("uses clean names when those are advertised", () => {
    const text = lazy({ toolNames: (c) => c });
    expect(text).toContain("`resolve_tool`");
    expect(text).not.toContain("mcphub_");
  });

  it("in lazy mode says the tools are callable, when to resolve and when not to auto-run", () => {
    const text = lazy();
    expect(text).toContain("deliberately left out of the tool list");
    expect(text).toContain("callable");
    expect(text).toContain("at the start of each task");
    expect(text).toContain("(research, planning, implementation, verification)");
    expect(text).toContain("without waiting to be asked");
    expect(text).toContain("only when status is `confident` and `ambiguous` is false");
    expect(text).toContain("Never auto-run an ambiguous recommendation");
    expect(text).toContain("`mcphub_call_tool` {server, tool, arguments}");
    expect(text).toContain("`mcphub_describe_tool` when you need a tool's full input schema");
    expect(text).toContain("receipt");
    expect(text).toContain("`mcphub_get_result`");
  });

  it("in all mode leaves out the lazy block and pins, and keeps the capability families", () => {
    // Clients that defer tool schemas show a model only names and instructions: the families
    // are its map of what exists, in all mode too.
    const text = buildInstructions({ expose: "all", summary: "fs: files", hasPins: true, toolNames: prefixed });
    expect(text).not.toContain("Never auto-run");
    expect(text).toContain("Capability families configured for this agent (call `mcphub_list_servers` for live status): fs: files.");
    expect(text).not.toContain("pinned");
    const huge = buildInstructions({ expose: "all", summary: "x".repeat(10_000), hasPins: false, budget: 1, toolNames: prefixed });
    expect(Buffer.byteLength(huge)).toBeLessThan(4096);
  });

  it("adds the capability families, the pins sentence and the budget sentence when they apply", () => {
    const none = lazy();
    expect(none).not.toContain("Capability families");
    expect(none).not.toContain("pinned");
    expect(none).not.toContain("serialized bytes");

    const text = lazy({ summary: "fs: read and write files | web: fetch pages", hasPins: true, budget: 8192 });
    expect(text).toContain(
      "Capability families configured for this agent (call `mcphub_list_servers` for live status): fs: read and write files | web: fetch pages.",
    );
    expect(text).toContain("pinned and listed directly");
    expect(text).toContain("capped at 8192 serialized bytes");
    expect(text).toContain("remains callable through `mcphub_call_tool`");
  });

  it("mentions the budget in all mode too", () => {
    const text = buildInstructions({ expose: "all", summary: "", hasPins: false, budget: 0, toolNames: prefixed });
    expect(text).toContain("capped at 0 serialized bytes");
  });

  it("stays under 4 KiB with a maximal summary, pins and a budget", () => {
    const summary = Array.from({ length: 200 }, (_, i) => `server${i}: ${"hint ".repeat(8)}`).join(" | ");
    const maximal = clipUtf8(summary, MAX_SUMMARY_BYTES);
    expect(bytes(maximal)).toBeGreaterThanOrEqual(MAX_SUMMARY_BYTES - 3);
    for (const s of [maximal, summary, "é".repeat(5000)]) {
      const text = lazy({ summary: s, hasPins: true, budget: 999_999_999_999, toolNames: prefixed });
      expect(bytes(text)).toBeLessThan(MAX_INSTRUCTIONS_BYTES);
      expect(text.endsWith(".")).toBe(true); // nothing got clipped at the end
    }
  });

  it("keeps the 4 KiB promise even with an absurd tool name mapping", () => {
    const text = lazy({ toolNames: (c) => c.repeat(200), summary: "x" });
    expect(bytes(text)).toBeLessThanOrEqual(MAX_INSTRUCTIONS_BYTES);
  });

  it("collapses whitespace in the summary", () => {
    expect(lazy({ summary: "  fs:\n  files\t\tand   dirs " })).toContain("live status): fs: files and dirs.");
  });
});

describe("clipUtf8", () => {
  it("returns short text unchanged", () => {
    expect(clipUtf8("abc", 3)).toBe("abc");
  });

  it("cuts to max-3 bytes on a code point boundary and appends an ellipsis", () => {
    expect(clipUtf8("abcdef", 5)).toBe("ab…");
    // "é" is 2 bytes: 4 of them = 8 bytes; max 6 leaves 3 bytes → one whole "é" + ellipsis.
    expect(clipUtf8("éééé", 6)).toBe("é…");
    expect(bytes(clipUtf8("\u{1F600}".repeat(10), 9))).toBeLessThanOrEqual(9);
    expect(clipUtf8("\u{1F600}".repeat(10), 9)).toBe("\u{1F600}…");
  });
});
