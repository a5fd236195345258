// The search.embeddings config block: accepted shapes and one precise message per mistake.
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfigText } from "../../../src/config/index.js";

function message(text: string): string {
  try {
    parseConfigText(text, "yaml", "mcphub.yaml");
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected the config to be rejected");
}

describe("search.embeddings", () => {
  it("accepts an endpoint with a model, a vault key, dimensions and a query timeout", () => {
    const config = parseConfigText(
      "search:\n  embeddings:\n    url: http://localhost:11434/v1\n    model: nomic-embed-text\n    api_key: vault://ai/KEY\n    dimensions: 768\n    query_timeout: 750ms\n",
      "yaml",
      "mcphub.yaml",
    );
    expect(config.search?.embeddings).toEqual({ url: "http://localhost:11434/v1", model: "nomic-embed-text", api_key: "vault://ai/KEY", dimensions: 768, query_timeout: 750 });
    expect(parseConfigText("servers: {}\n", "yaml", "mcphub.yaml").search).toBeUndefined();
  });

  it("says what is wrong, one line each", () => {
    expect(message("search:\n  embeddings:\n    url: localhost:11434\n    model: m\n")).toContain("search.embeddings.url: url must be the API base, such as http://localhost:11434/v1");
    expect(message("search:\n  embeddings:\n    url: http://x/v1\n")).toContain("search.embeddings.model");
    expect(message("search:\n  embeddings:\n    url: http://x/v1\n    model: m\n    dimensions: 0\n")).toContain("dimensions must be a positive whole number");
    expect(message("search:\n  embeddings:\n    url: http://x/v1\n    model: m\n    query_timeout: soon\n")).toContain("is not a duration");
    expect(message("search:\n  embedings: {}\n")).toContain('search.embedings: unknown key; did you mean "embeddings"?');
  });
});
