// Issue 15, item 8 at the document level: adding our entry and removing it again gives back the
// exact original bytes, and entries we do not own keep theirs (one-line objects stay one line).
import { describe, expect, it } from "vitest";
import { adapterFor, openDocument } from "../../../src/harness/index.js";

const CASES: [string, string, string[]][] = [
  ["claude", `{\n  "mcpServers": {\n    "other": {"command": "x", "args": ["a", "b"]}, // c\n    "z": { "command": "y" }\n  },\n  "theme": "dark"\n}\n`, ['"other": {"command": "x", "args": ["a", "b"]}, // c', '"z": { "command": "y" }']],
  ["cursor", `{"mcpServers": {"other": {"command": "x", "args": ["a"]}}, "theme": "dark"}\n`, ['"other": {"command": "x", "args": ["a"]}']],
  ["vscode", `{\n\t"servers": {\n\t\t"notes": {"type": "stdio", "command": "n"}, // inline\n\t},\n}\n`, ['"notes": {"type": "stdio", "command": "n"}, // inline']],
  ["claude", `{\r\n  "mcpServers": {\r\n    "a": {"command": "x"}\r\n  }\r\n}\r\n`, ['"a": {"command": "x"}']],
  ["claude", `{\n  "mcpServers": {}\n}\n`, []],
  ["codex", `# top\n[mcp_servers.other]\ncommand = "x"\nargs = ["a"]   # keep\n\n[profile]\nx = 1\n`, ['args = ["a"]   # keep', "[profile]\nx = 1"]],
  ["kimi", `[mcp.other]\ntype = "local"\ncommand = ["x", "y"]\n`, ['command = ["x", "y"]']],
  ["local-agent", `servers:\n  - {name: other, command: x, args: [a]}\n`, ["  - {name: other, command: x, args: [a]}"]],
  ["hermes", `mcp_servers:\n  other: {command: x, args: [a]}  # mine\n`, ["  other: {command: x, args: [a]}  # mine"]],
];

describe("harness documents change only our entry", () => {
  for (const [type, text, kept] of CASES) {
    it(`${type}: ${JSON.stringify(text.slice(0, 40))}…`, () => {
      const adapter = adapterFor(type);
      if (!adapter) throw new Error(type);
      const doc = openDocument(adapter, "/x", text);
      doc.upsert("mcphub", adapter.codec.encode({ name: "mcphub", command: "/usr/bin/mcphub", args: ["mcp", "serve"] }), adapter.codec.managedKeys);
      const added = doc.text();
      for (const k of kept) expect(added).toContain(k);
      expect(openDocument(adapter, "/x", added).entries().has("mcphub")).toBe(true);
      const again = openDocument(adapter, "/x", added);
      again.remove("mcphub");
      expect(again.text()).toBe(text);
    });
  }
});
