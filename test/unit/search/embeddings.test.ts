// Semantic search's parts against the local OpenAI-compatible fixture endpoint, through the real
// HTTP path: the client, the vector cache on disk, the service that fills the dense index, the
// dense index itself and the fusion with the lexical ranking.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentHash, VectorCache } from "../../../src/catalog/embeddings/cache.js";
import { EmbeddingsClient, normalise } from "../../../src/catalog/embeddings/client.js";
import { SemanticSearch, toolText } from "../../../src/catalog/embeddings/service.js";
import { DenseIndex, EXACT_WORK } from "../../../src/catalog/search/dense.js";
import { HybridRanker } from "../../../src/catalog/search/fusion.js";
import { buildResolveResponse, buildSearchResponse } from "../../../src/catalog/search/responses.js";
import { checkResolveContract } from "../../helpers/resolve-contract.js";
import { startEmbeddingsFixture, type EmbeddingsFixture } from "../../helpers/embeddings.js";
import { entry, indexOf } from "./entries.js";

const REV = "catalog-v1-0123456789abcdef01234567";
const catalogue = () => [
  entry({ server: "weather", tool: "forecast", description: "Get the weather forecast for a city." }),
  entry({ server: "notes", tool: "jot", description: "Save a short note for later." }),
  entry({ server: "calc", tool: "add", description: "Add two numbers." }),
  entry({ server: "calc", tool: "multiply", description: "Multiply two numbers." }),
];

let fx: EmbeddingsFixture;
let dir: string;
beforeAll(async () => {
  fx = await startEmbeddingsFixture({ dims: 64, key: "sk-test-CANARY-123" });
  dir = mkdtempSync(join(tmpdir(), "mcphub-emb-"));
});
afterAll(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

const key = async () => "sk-test-CANARY-123";

describe("embeddings client", () => {
  it("returns unit vectors in input order, in batches, with the bearer key", async () => {
    const client = new EmbeddingsClient({ url: fx.url, model: "m", apiKey: key });
    const texts = Array.from({ length: 70 }, (_, i) => `text number ${i}`); // two batches
    const before = await fx.stats();
    const vs = await client.embed(texts, { timeoutMs: 5000 });
    expect(vs).toHaveLength(70);
    for (const v of vs) expect(Math.abs(Math.hypot(...v) - 1)).toBeLessThan(1e-5);
    expect((await fx.stats()).requests - before.requests).toBe(2);
    const again = await client.embed(["text number 3"], { timeoutMs: 5000 });
    expect([...(again[0] ?? [])]).toEqual([...(vs[3] ?? [])]);
  });

  it("says what failed in one line, never with the key", async () => {
    const wrong = new EmbeddingsClient({ url: fx.url, model: "m", apiKey: async () => "sk-WRONG-CANARY" });
    const err = await wrong.embed(["x"], { timeoutMs: 5000 }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/HTTP 401: invalid api key/);
    expect((err as Error).message).not.toContain("CANARY");
    const down = new EmbeddingsClient({ url: "http://127.0.0.1:9/v1", model: "m" });
    expect(((await down.embed(["x"], { timeoutMs: 2000 }).catch((e: Error) => e)) as Error).message).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9\/v1\/embeddings/);
    await fx.control({ delay: 500 });
    const slow = new EmbeddingsClient({ url: fx.url, model: "m", apiKey: key });
    expect(((await slow.embed(["x"], { timeoutMs: 50 }).catch((e: Error) => e)) as Error).message).toMatch(/within 50 ms/);
    await fx.control({ delay: 0 });
    const sized = new EmbeddingsClient({ url: fx.url, model: "m", apiKey: key, dimensions: 32 });
    expect((await sized.embed(["x"], { timeoutMs: 5000 }))[0]).toHaveLength(32);
  });

  it("normalises, leaving a zero vector at zero", () => {
    expect([...normalise([3, 4])]).toEqual([0.6000000238418579, 0.800000011920929]);
    expect([...normalise([0, 0])]).toEqual([0, 0]);
  });
});

describe("vector cache", () => {
  it("survives a restart, in a 0600 file, and forgets vectors of another size", async () => {
    const id = { url: "http://x/v1", model: "m", dimensions: undefined };
    const a = await VectorCache.open(dir, id);
    a.set(contentHash("one"), normalise([1, 2, 3]));
    a.set(contentHash("two"), normalise([3, 2, 1]));
    await a.save();
    const files = readdirSync(join(dir, "embeddings")).filter((f) => f.endsWith(".vec"));
    expect(files).toHaveLength(1);
    expect(statSync(join(dir, "embeddings", files[0] ?? "")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "embeddings")).mode & 0o777).toBe(0o700);
    const b = await VectorCache.open(dir, id);
    expect(b.size).toBe(2);
    expect([...(b.get(contentHash("one")) ?? [])]).toEqual([...normalise([1, 2, 3])]);
    b.set(contentHash("three"), normalise([1, 0, 0, 0]));
    expect(b.size).toBe(1);
    const other = await VectorCache.open(dir, { ...id, model: "other" });
    expect(other.size).toBe(0);
  });

  it("treats a damaged file as empty", async () => {
    const id = { url: "http://damaged/v1", model: "m", dimensions: undefined };
    const c = await VectorCache.open(dir, id);
    c.set(contentHash("x"), normalise([1, 1]));
    await c.save();
    writeFileSync(c.file, "MCPHUBV1garbage");
    expect((await VectorCache.open(dir, id)).size).toBe(0);
  });
});

describe("semantic search service", () => {
  it("embeds each tool once per text: a restart reads the cache, a change re-embeds only what changed", async () => {
    const data = mkdtempSync(join(tmpdir(), "mcphub-sem-"));
    try {
      const config = { url: fx.url, model: "fixture", api_key: "ignored" };
      const first = new SemanticSearch({ config, dataDir: data, apiKey: key });
      const before = (await fx.stats()).inputs;
      first.updateServer("weather", catalogue().slice(0, 1));
      first.updateServer("calc", catalogue().slice(2));
      await first.whenIdle();
      expect((await fx.stats()).inputs - before).toBe(3);
      expect(first.status()).toMatchObject({ state: "ready", tools: 3, vectors: 3, computed: 3, reused: 0 });
      await first.close();

      const second = new SemanticSearch({ config, dataDir: data, apiKey: key });
      const mid = (await fx.stats()).inputs;
      second.updateServer("weather", catalogue().slice(0, 1));
      const changed = catalogue().slice(2);
      changed[1] = entry({ server: "calc", tool: "multiply", description: "Multiply numbers together." });
      second.updateServer("calc", changed);
      await second.whenIdle();
      expect((await fx.stats()).inputs - mid).toBe(1); // only the changed tool
      expect(second.status()).toMatchObject({ reused: 2, computed: 1, vectors: 3 });
      await second.close();
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  it("falls back with a reason when the endpoint fails, and recovers", async () => {
    const data = mkdtempSync(join(tmpdir(), "mcphub-sem-"));
    try {
      const s = new SemanticSearch({ config: { url: fx.url, model: "fixture", query_timeout: 2000 }, dataDir: data, apiKey: key });
      s.updateServer("weather", catalogue().slice(0, 1));
      await s.whenIdle();
      const ok = await s.queryVectors(["umbrella"]);
      expect("vectors" in ok).toBe(true);
      await fx.control({ fail: true });
      const down = await s.queryVectors(["rain tomorrow"]);
      expect(down).toEqual({ reason: expect.stringMatching(/query embedding failed: .*HTTP 503: model is loading/) });
      expect(s.status().reason).toMatch(/HTTP 503/);
      // Until the backoff ends, new queries do not wait for a dead endpoint; a query asked before
      // is answered from memory.
      expect(await s.queryVectors(["snow on sunday"])).toEqual(down);
      expect("vectors" in (await s.queryVectors(["umbrella"]))).toBe(true);
      await fx.control({ fail: false });
      await s.close();
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  it("embeds what the tool is for: names, description, hints and fields", () => {
    const e = entry({ server: "gh", tool: "create_issue", title: "Create issue", description: "Open an issue.", toolUseWhen: ["report a bug"], useWhen: ["work on GitHub"], serverDescription: "GitHub", inputSchema: { type: "object", properties: { repo: {}, title: {} } } });
    expect(toolText(e)).toBe("gh create issue. Create issue. Open an issue.. report a bug. repo, title. GitHub. work on GitHub");
  });
});

describe("dense index and fusion", () => {
  const vec = (seed: number, dims: number): Float32Array => normalise(Array.from({ length: dims }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233) * 43758.5453 % 1));

  it("the two-step scan finds what the exact scan finds on a large catalogue", () => {
    const dims = 256;
    const n = Math.ceil(EXACT_WORK / dims) + 500;
    const dense = new DenseIndex();
    const items = Array.from({ length: n }, (_, i) => ({ entry: entry({ server: `s${i % 50}`, tool: `t${i}` }), vector: vec(i + 1, dims) }));
    for (let s = 0; s < 50; s++) dense.setServer(`s${s}`, items.filter((_, i) => i % 50 === s));
    let found = 0;
    for (let q = 0; q < 20; q++) {
      const query = vec(q * 7 + 3, dims);
      const exact = new Set(dense.searchExact(query, 10).map((m) => m.entry.namespaced));
      found += dense.search(query, 10).filter((m) => exact.has(m.entry.namespaced)).length;
    }
    expect(found / 200).toBeGreaterThanOrEqual(0.9);
    // An exact vector is always found first.
    const target = items[1234];
    expect(dense.search(target?.vector ?? new Float32Array(dims), 1)[0]?.entry.namespaced).toBe(target?.entry.namespaced);
  });

  it("finds a tool the query shares no word with only when embeddings are on", async () => {
    const data = mkdtempSync(join(tmpdir(), "mcphub-sem-"));
    try {
      const all = catalogue();
      const idx = indexOf(all);
      const s = new SemanticSearch({ config: { url: fx.url, model: "fixture" }, dataDir: data, apiKey: key });
      for (const server of ["weather", "notes", "calc"]) s.updateServer(server, all.filter((e) => e.server === server));
      await s.whenIdle();
      const query = "will I need an umbrella tomorrow";
      const lexical = buildResolveResponse(idx, { query }, { revision: REV });
      expect(lexical).toMatchObject({ status: "no_match", recommendation: null });
      const got = await s.queryVectors([query]);
      if (!("vectors" in got)) throw new Error(got.reason);
      const hybrid = new HybridRanker(idx, s.dense, got.vectors);
      const resolved = buildResolveResponse(hybrid, { query }, { revision: REV });
      expect(checkResolveContract(resolved)).toEqual([]);
      expect((resolved["recommendation"] as { namespaced: string }).namespaced).toBe("weather__forecast");
      // Found by meaning alone: worth showing, never safe to run unasked.
      expect(resolved).toMatchObject({ status: "ambiguous", ambiguous: true });
      expect(resolved["reason_codes"]).toContain("no_lexical_overlap");
      const searched = buildSearchResponse(hybrid, { query }, { revision: REV, all });
      expect((searched["matches"] as { namespaced: string }[])[0]?.namespaced).toBe("weather__forecast");
      // Where the words agree, hybrid resolve is as confident as lexical resolve.
      const both = await s.queryVectors(["multiply two numbers"]);
      if (!("vectors" in both)) throw new Error(both.reason);
      const agreed = buildResolveResponse(new HybridRanker(idx, s.dense, both.vectors), { query: "multiply two numbers" }, { revision: REV });
      expect(agreed).toMatchObject({ status: "confident", recommendation: { namespaced: "calc__multiply" } });
      await s.close();
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
