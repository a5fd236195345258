import { describe, expect, it } from "vitest";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import {
  definitionBytes,
  mountedDefinition,
  selectAdvertised,
  type AdvertiseInput,
} from "../../../src/gateway/policy/advertise.js";
import { planPublicNames } from "../../../src/catalog/names.js";
import { canonicalJson } from "../../../src/util/json/canonical.js";
import type { CatalogEntry } from "../../../src/catalog/types.js";
import { entry, shuffled } from "./helpers.js";

// A mounted definition with no title/annotations serializes canonically as
//   {"description":"D [s]","inputSchema":{"type":"object"},"name":"N"}
// = 64 bytes of frame + len(N) + len(D). With one-letter servers and the names below:
//   a__big  (6)  + D 230 → 300 bytes
//   a__mid  (6)  + D 130 → 200 bytes
//   b__one  (6)  + D  30 → 100 bytes
//   b__two  (6)  + D  80 → 150 bytes
//   c__tiny (7)  + D   9 →  80 bytes          total 830
const sized = (server: string, fragment: string, descBytes: number): CatalogEntry =>
  entry(server, fragment, { description: "d".repeat(descBytes) });

const fixture = (): CatalogEntry[] => [
  sized("a", "big", 230),
  sized("a", "mid", 130),
  sized("b", "one", 30),
  sized("b", "two", 80),
  sized("c", "tiny", 9),
];

const names = (tools: Tool[]): string[] => tools.map((t) => t.name);
const budgeted = (budget: number, over: Partial<AdvertiseInput> = {}) =>
  selectAdvertised({ entries: fixture(), expose: "all", pins: [], budget, ...over });

describe("mountedDefinition", () => {
  it("renames, prefixes the description and keeps everything else", () => {
    const e = entry(
      "gh",
      "search",
      {
        title: "Search",
        description: "Find issues",
        inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
        outputSchema: { type: "object" },
        annotations: { readOnlyHint: true },
        icons: [{ src: "https://example.com/i.png" }],
        _meta: { "x/y": 1 },
      },
      "gh_search",
    );
    expect(mountedDefinition(e)).toEqual({
      name: "gh__search",
      title: "Search",
      description: "Find issues [gh]",
      inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      outputSchema: { type: "object" },
      annotations: { readOnlyHint: true },
      icons: [{ src: "https://example.com/i.png" }],
      _meta: { "x/y": 1 },
    });
  });

  it("leaves out the output schema when a receipt may replace the result", () => {
    const e = entry("gh", "search", { description: "Find issues", inputSchema: { type: "object" }, outputSchema: { type: "object" } }, "gh_search");
    expect(mountedDefinition(e, { keepOutputSchema: false })).toEqual({ name: "gh__search", description: "Find issues [gh]", inputSchema: { type: "object" } });
    expect(selectAdvertised({ entries: [e], expose: "all", pins: [], resultsUnchanged: false }).tools[0]).not.toHaveProperty("outputSchema");
    expect(selectAdvertised({ entries: [e], expose: "all", pins: [], resultsUnchanged: true }).tools[0]).toHaveProperty("outputSchema");
  });

  it("measures the canonical JSON exactly as the fixture comment computes", () => {
    const big = mountedDefinition(sized("a", "big", 230));
    expect(canonicalJson(big)).toBe(`{"description":"${"d".repeat(230)} [a]","inputSchema":{"type":"object"},"name":"a__big"}`);
    expect(fixture().map((e) => definitionBytes(mountedDefinition(e)))).toEqual([300, 200, 100, 150, 80]);
  });
});

describe("selectAdvertised", () => {
  it("expose all without a budget mounts every entry, sorted, with no report", () => {
    const out = selectAdvertised({ entries: shuffled(fixture(), 7), expose: "all", pins: [] });
    expect(names(out.tools)).toEqual(["a__big", "a__mid", "b__one", "b__two", "c__tiny"]);
    expect(out.report).toBeUndefined();
  });

  it("expose all ignores pins", () => {
    const out = selectAdvertised({ entries: fixture(), expose: "all", pins: ["b__one"] });
    expect(out.tools).toHaveLength(5);
  });

  it("expose lazy mounts only pinned entries", () => {
    expect(names(selectAdvertised({ entries: fixture(), expose: "lazy", pins: ["a"] }).tools)).toEqual(["a__big", "a__mid"]);
    expect(names(selectAdvertised({ entries: fixture(), expose: "lazy", pins: ["b__two", "c__*"] }).tools)).toEqual([
      "b__two",
      "c__tiny",
    ]);
    expect(selectAdvertised({ entries: fixture(), expose: "lazy", pins: [] }).tools).toEqual([]);
  });

  // Expected sets computed by hand from the sizes 300/200/100/150/80 in name order, first fit.
  it("budget 380: big fits (300), mid/one/two do not, tiny fits (380)", () => {
    const { tools, report } = budgeted(380);
    expect(names(tools)).toEqual(["a__big", "c__tiny"]);
    expect(report).toEqual({
      budget_bytes: 380,
      eligible_tools: 5,
      advertised_tools: 2,
      omitted_tools: 3,
      eligible_definition_bytes: 830,
      advertised_definition_bytes: 380,
      eligible_estimated_tokens: 208,
      advertised_estimated_tokens: 95,
      advertised_names: ["a__big", "c__tiny"],
      omitted_names: ["a__mid", "b__one", "b__two"],
    });
  });

  it("budget 450: big (300) + one (400); tiny would make 480", () => {
    expect(names(budgeted(450).tools)).toEqual(["a__big", "b__one"]);
  });

  it("budget 299: big is skipped, the scan continues: mid (200) + tiny (280)", () => {
    const { tools, report } = budgeted(299);
    expect(names(tools)).toEqual(["a__mid", "c__tiny"]);
    expect(report?.omitted_names).toEqual(["a__big", "b__one", "b__two"]);
  });

  it("a budget equal to the total admits everything; one byte less drops the last", () => {
    expect(budgeted(830).report).toMatchObject({ advertised_tools: 5, omitted_tools: 0 });
    expect(budgeted(830).report?.omitted_names).toBeUndefined();
    expect(budgeted(829).report?.omitted_names).toEqual(["c__tiny"]);
  });

  it("budget 0 advertises no downstream tool", () => {
    const { tools, report } = budgeted(0);
    expect(tools).toEqual([]);
    expect(report).toMatchObject({ budget_bytes: 0, eligible_tools: 5, advertised_tools: 0, advertised_definition_bytes: 0 });
    expect(report?.advertised_names).toBeUndefined();
    expect(report?.advertised_estimated_tokens).toBe(0);
  });

  it("lazy with pin: [] has nothing eligible, even with a large budget", () => {
    const { tools, report } = budgeted(10_000, { expose: "lazy", pins: [] });
    expect(tools).toEqual([]);
    expect(report).toEqual({
      budget_bytes: 10_000,
      eligible_tools: 0,
      advertised_tools: 0,
      omitted_tools: 0,
      eligible_definition_bytes: 0,
      advertised_definition_bytes: 0,
      eligible_estimated_tokens: 0,
      advertised_estimated_tokens: 0,
    });
  });

  it("the budget applies to pinned tools in lazy mode", () => {
    expect(names(budgeted(350, { expose: "lazy", pins: ["a", "b__one"] }).tools)).toEqual(["a__big"]);
  });

  it("with plans, a legacy stutter pin selects only the tool it names", () => {
    const entries = [entry("live", "echo"), entry("live", "live_echo")];
    const plan = planPublicNames("live", ["echo", "live_echo"]);
    const pinned = (planOf?: AdvertiseInput["planOf"]) =>
      names(selectAdvertised({ entries, expose: "lazy", pins: ["live__live_echo"], ...(planOf ? { planOf } : {}) }).tools);
    expect(pinned((s) => (s === "live" ? plan : undefined))).toEqual(["live__live_echo"]);
    expect(pinned()).toEqual(["live__echo", "live__live_echo"]); // without a plan the alias is ambiguous
  });

  it("never truncates a definition", () => {
    for (const budget of [0, 50, 299, 380, 450, 829]) {
      const { tools } = budgeted(budget);
      for (const t of tools) {
        const original = fixture().find((e) => e.namespaced === t.name);
        expect(t.description).toBe(`${original?.description} [${original?.server}]`);
      }
    }
  });

  it("is deterministic: shuffled entries and key orders give byte-identical output", () => {
    const reordered = (e: CatalogEntry): CatalogEntry => {
      const d = e.definition;
      // Same content, keys inserted in a different order.
      const def = { inputSchema: { type: "object" as const }, description: d.description, name: d.name };
      return { ...e, definition: def };
    };
    const first = canonicalJson(selectAdvertised({ entries: fixture(), expose: "all", pins: [], budget: 380 }));
    for (let seed = 1; seed <= 20; seed++) {
      const entries = shuffled(fixture(), seed).map((e, i) => (i % 2 ? reordered(e) : e));
      const again = selectAdvertised({ entries, expose: "all", pins: [], budget: 380 });
      expect(canonicalJson(again)).toBe(first);
      // The returned objects themselves have canonical key order, so plain JSON.stringify (what
      // the SDK sends) is identical too.
      expect(JSON.stringify(again.tools)).toBe(JSON.stringify(selectAdvertised({ entries: fixture(), expose: "all", pins: [], budget: 380 }).tools));
    }
  });

  it("rejects a negative or fractional budget", () => {
    expect(() => budgeted(-1)).toThrow(/non-negative whole number/);
    expect(() => budgeted(1.5)).toThrow(/non-negative whole number/);
  });
});
