// Edge cases of harness documents: missing files, empty or null sections, malformed files.
import { describe, expect, it } from "vitest";
import { adapterFor, allAdapters, HarnessFileError, openDocument } from "../../../src/harness/index.js";

const entry = { name: "mcphub", command: "mcphub", args: ["mcp", "serve"] };

describe.each(allAdapters().map((a) => [a.type, a] as const))("%s document", (_type, adapter) => {
  it("creates the section in a new, empty file and reads the entry back", () => {
    const doc = openDocument(adapter, "/x", "");
    expect(doc.entries().size).toBe(0);
    doc.upsert("mcphub", adapter.codec.encode(entry), adapter.codec.managedKeys);
    const again = openDocument(adapter, "/x", doc.text());
    expect(adapter.codec.decode("mcphub", again.entries().get("mcphub") ?? null)).toEqual(entry);
  });
});

describe("empty or null sections", () => {
  it("YAML `servers:` with no value counts as empty", () => {
    const a = adapterFor("local-agent");
    if (!a) throw new Error("adapter");
    const doc = openDocument(a, "/x", "model: m\nservers:\n");
    expect(doc.entries().size).toBe(0);
    doc.upsert("mcphub", a.codec.encode(entry), a.codec.managedKeys);
    expect(doc.text()).toContain("model: m\n");
    expect(openDocument(a, "/x", doc.text()).entries().has("mcphub")).toBe(true);
  });

  it('JSON `"mcpServers": null` is replaced by a section', () => {
    const a = adapterFor("claude");
    if (!a) throw new Error("adapter");
    const doc = openDocument(a, "/x", '{"theme": "dark", "mcpServers": null}\n');
    doc.upsert("mcphub", a.codec.encode(entry), a.codec.managedKeys);
    expect(JSON.parse(doc.text())).toEqual({ theme: "dark", mcpServers: { mcphub: { command: "mcphub", args: ["mcp", "serve"] } } });
  });
});

describe("malformed files are refused with the file and the problem", () => {
  it.each([
    ["claude", "{ \"a\": ", /\/x:1: invalid JSON/],
    ["claude", "[1, 2]", /top level must be a JSON object/],
    ["claude", '{"mcpServers": [1]}', /"mcpServers" must be an object of servers/],
    ["local-agent", "servers: {a: 1}", /"servers" must be a list of servers/],
    ["hermes", "a: [", /invalid YAML/],
    ["codex", "a = ", /invalid TOML/],
    ["codex", 'mcp_servers = "x"', /must be a table of servers/],
  ] as const)("%s: %s", (type, text, pattern) => {
    const a = adapterFor(type);
    if (!a) throw new Error("adapter");
    expect(() => openDocument(a, "/x", text)).toThrow(HarnessFileError);
    expect(() => openDocument(a, "/x", text)).toThrow(pattern);
  });
});
