import { describe, expect, it } from "vitest";
import { catalogRevision } from "../../../src/catalog/revision.js";
import type { CatalogEntry } from "../../../src/catalog/types.js";

function entry(server: string, tool: string, extra: Partial<CatalogEntry> = {}): CatalogEntry {
  const inputSchema = extra.inputSchema ?? { type: "object" };
  return {
    server,
    tool,
    namespaced: `${server}__${tool}`,
    wire: tool,
    description: "",
    inputSchema,
    definition: { name: tool, inputSchema: { type: "object" } },
    tags: [],
    useWhen: [],
    toolUseWhen: [],
    ...extra,
  };
}

// The three-entry routing fixture of the Go implementation (internal/mcp/catalog_test.go) under
// public names (hitspec_fetch on hitspec → hitspec__fetch); its revision was derived independently
// in the reference notes, so this pins the exact algorithm.
const routingFixture = (): CatalogEntry[] => [
  entry("hitspec", "fetch", {
    wire: "hitspec_fetch",
    description: "Fetch one direct HTTP URL or one saved request as raw, text, Markdown, or JSON.",
    serverDescription: "Bounded HTTP fetches and saved-request validation",
    tags: ["web", "http", "markdown"],
    useWhen: ["fetch a public HTTP URL as raw, text, Markdown, or JSON"],
  }),
  entry("cortex", "investigate", {
    wire: "cortex_investigate",
    description: "Investigate a task using multiple evidence sources.",
    serverDescription: "Evidence-guided agent kernel",
    tags: ["research", "orchestration"],
    useWhen: ["analyze sources from codebases, databases, and CLI results"],
  }),
  entry("bob", "plan", {
    wire: "bob_plan",
    title: "Plan repository construction",
    description: "Plan a repository change from inspected state.",
    serverDescription: "Deterministic repository factory",
    tags: ["builder", "code"],
    useWhen: ["plan or implement a feature in a repository"],
  }),
];

const rich = (): CatalogEntry[] => [
  entry("fs", "read", {
    title: "Read",
    description: "Read a file",
    inputSchema: { type: "object", properties: { path: { type: "string" }, encoding: { type: "string" } } },
    toolUseWhen: ["read one file"],
    annotations: { readOnlyHint: true },
    outputSchema: { type: "object" },
  }),
  entry("fs", "write", { description: "Write a file", tags: ["files"] }),
  entry("web", "fetch", { description: "Fetch a URL", useWhen: ["fetch pages"] }),
];

describe("catalogRevision", () => {
  it("matches the reference vector of the Go implementation", () => {
    expect(catalogRevision(routingFixture())).toBe("catalog-v1-a7abe7c1ddd8c932a8ed2b27");
  });

  it("has the catalog-v1- prefix and 24 lowercase hex digits", () => {
    expect(catalogRevision(rich())).toMatch(/^catalog-v1-[0-9a-f]{24}$/);
    expect(catalogRevision([])).toMatch(/^catalog-v1-[0-9a-f]{24}$/);
  });

  it("does not depend on entry order", () => {
    const base = catalogRevision(rich());
    const list = rich();
    for (const order of [[2, 1, 0], [1, 0, 2], [0, 2, 1], [2, 0, 1]]) {
      expect(catalogRevision(order.map((i) => list[i] as CatalogEntry))).toBe(base);
    }
  });

  it("does not depend on the order of input schema properties", () => {
    const swapped = rich();
    const first = swapped[0] as CatalogEntry;
    first.inputSchema = { type: "object", properties: { encoding: { type: "string" }, path: { type: "string" } } };
    expect(catalogRevision(swapped)).toBe(catalogRevision(rich()));
  });

  const routingChanges: [string, (e: CatalogEntry) => void][] = [
    ["namespaced", (e) => (e.namespaced = "fs__read2")],
    ["title", (e) => (e.title = "Read!")],
    ["title added", (e) => (e.title = undefined)],
    ["description", (e) => (e.description = "Read a file.")],
    ["server description", (e) => (e.serverDescription = "Files")],
    ["tag", (e) => (e.tags = ["files"])],
    ["use_when", (e) => (e.useWhen = ["files"])],
    ["tool_use_when", (e) => (e.toolUseWhen = ["read two files"])],
    ["input field added", (e) => (e.inputSchema = { type: "object", properties: { path: {}, encoding: {}, x: {} } })],
    ["input field renamed", (e) => (e.inputSchema = { type: "object", properties: { path: {}, charset: {} } })],
  ];
  for (const [what, change] of routingChanges) {
    it(`changes when the ${what} changes`, () => {
      const changed = rich();
      change(changed[0] as CatalogEntry);
      expect(catalogRevision(changed)).not.toBe(catalogRevision(rich()));
    });
  }

  it("changes when an entry is added or removed", () => {
    expect(catalogRevision(rich().slice(1))).not.toBe(catalogRevision(rich()));
    expect(catalogRevision([...rich(), entry("web", "search")])).not.toBe(catalogRevision(rich()));
  });

  const irrelevantChanges: [string, (e: CatalogEntry) => void][] = [
    ["annotations", (e) => (e.annotations = { readOnlyHint: false, destructiveHint: true })],
    ["output schema", (e) => (e.outputSchema = { type: "object", properties: { text: { type: "string" } } })],
    ["input property types", (e) => (e.inputSchema = { type: "object", properties: { path: { type: "number" }, encoding: {} } })],
    ["wire name", (e) => (e.wire = "fs_read")],
    ["downstream definition (icons, _meta)", (e) => (e.definition = { ...e.definition, _meta: { x: 1 }, icons: [] })],
  ];
  for (const [what, change] of irrelevantChanges) {
    it(`stays the same when only the ${what} changes`, () => {
      const changed = rich();
      change(changed[0] as CatalogEntry);
      expect(catalogRevision(changed)).toBe(catalogRevision(rich()));
    });
  }
});
