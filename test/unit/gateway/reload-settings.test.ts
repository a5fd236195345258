// Which changed top-level settings a reload reports, and which of them the warning says need a
// restart: the ones a running hub read once (listen address, result retention, semantic search).
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/config/load.js";
import { settingChanges } from "../../../src/gateway/hub.js";

const base = { servers: { a: { command: "node", args: ["a.js"] } } };

describe("settingChanges", () => {
  it("reports changed settings; servers are reconciled apart", () => {
    const prev = validateConfig(base);
    const next = validateConfig({ ...base, expose: "lazy", servers: { b: { command: "node" } } });
    expect(settingChanges(prev, next)).toEqual({ settings: ["expose"], needsRestart: [] });
  });

  it("listen, result_retention and search.embeddings need a restart", () => {
    const prev = validateConfig(base);
    const next = validateConfig({
      ...base,
      listen: "127.0.0.1:9999",
      result_retention: "2d",
      search: { embeddings: { url: "http://127.0.0.1:11434/v1", model: "nomic-embed-text" } },
    });
    const changes = settingChanges(prev, next);
    expect(changes.needsRestart.sort()).toEqual(["listen", "result_retention", "search"]);
    expect(changes.settings).toEqual(expect.arrayContaining(["listen", "result_retention", "search"]));
  });
});
