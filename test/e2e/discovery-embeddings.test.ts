// Semantic search end to end: `mcphub mcp serve` with search.embeddings pointing at the local
// OpenAI-compatible fixture endpoint, the API key taken from the vault, a real SDK client. A
// request that shares no word with its tool is found only when embeddings are on; with the
// endpoint down, search stays lexical and says why (in the answer, in list_servers, in doctor).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddingsFixture, type EmbeddingsFixture } from "../helpers/embeddings.js";
import { doc, FIXTURES, runMcphub, startGateway, tempHome, waitReady, type TempHome } from "../helpers/gateway.js";
import { checkResolveContract } from "../helpers/resolve-contract.js";

const node = process.execPath;
const KEY = "sk-e2e-CANARY-7f3a9c";
const QUERY = "will I need an umbrella in Oslo tomorrow";

function catalogueFile(home: TempHome): string {
  const path = join(home.dir, "tools.jsonl");
  const rows = [
    { server: "weather", tool: "forecast", description: "Get the weather forecast for a place.", inputSchema: { type: "object", properties: { place: { type: "string" } }, required: ["place"] } },
    { server: "calc", tool: "add", description: "Add two numbers.", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } },
    { server: "calc", tool: "multiply", description: "Multiply two numbers.", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } },
  ];
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}

describe("semantic search through mcp serve", () => {
  let home: TempHome;
  let fx: EmbeddingsFixture;
  let tools: string;
  beforeAll(async () => {
    home = tempHome();
    fx = await startEmbeddingsFixture({ dims: 64, key: KEY });
    tools = catalogueFile(home);
    const set = await runMcphub(home, ["vault", "set", "emb/API_KEY"], { input: `${KEY}\n` });
    expect(set.code).toBe(0);
  });
  afterAll(async () => {
    await fx?.close();
    home?.cleanup();
  });

  const config = (name: string, embeddings: Record<string, unknown> | undefined): string =>
    home.writeConfig(
      {
        expose: "lazy",
        ...(embeddings ? { search: { embeddings } } : {}),
        servers: {
          weather: { command: node, args: [join(FIXTURES, "catalog-server.mjs"), "--catalog", tools, "--server", "weather"] },
          calc: { command: node, args: [join(FIXTURES, "catalog-server.mjs"), "--catalog", tools, "--server", "calc"] },
        },
      },
      name,
    );

  async function waitHybrid(call: (n: string, a?: Record<string, unknown>) => Promise<unknown>): Promise<Record<string, unknown>> {
    for (let i = 0; i < 200; i++) {
      const listed = doc((await call("mcphub_list_servers")) as never);
      const search = listed.search as { mode: string; vectors: number } | undefined;
      if (search?.mode === "hybrid" && search.vectors === 3) return listed;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("semantic search never became ready");
  }

  it("finds a tool the request shares no word with only when embeddings are on", async () => {
    const lexical = await startGateway(home, config("lexical.yaml", undefined));
    try {
      await waitReady(lexical, ["weather", "calc"]);
      const r = doc(await lexical.call("mcphub_resolve_tool", { query: QUERY }));
      expect(checkResolveContract(r)).toEqual([]);
      expect(r).toMatchObject({ status: "no_match", recommendation: null });
      expect(r.search_mode).toBeUndefined();
    } finally {
      await lexical.close();
    }

    const gw = await startGateway(home, config("hybrid.yaml", { url: fx.url, model: "fixture", api_key: "vault://emb/API_KEY" }));
    try {
      await waitReady(gw, ["weather", "calc"]);
      const listed = await waitHybrid((n, a) => gw.call(n, a));
      expect(listed.search).toMatchObject({ mode: "hybrid", model: "fixture", state: "ready", tools: 3, vectors: 3, dimensions: 64 });
      const r = doc(await gw.call("mcphub_resolve_tool", { query: QUERY }));
      expect(checkResolveContract(r)).toEqual([]);
      expect(r).toMatchObject({ search_mode: "hybrid", status: "ambiguous", recommendation: { namespaced: "weather__forecast" } });
      const s = doc(await gw.call("mcphub_search_tools", { query: QUERY }));
      expect((s.matches as { namespaced: string }[])[0]?.namespaced).toBe("weather__forecast");
      // The key came from the vault and went only to the endpoint.
      expect((await fx.stats()).unauthorized).toBe(0);
      expect(JSON.stringify([listed, r, s]) + gw.stderr()).not.toContain(KEY);
    } finally {
      await gw.close();
    }
  });

  it("stays lexical with the reason when the endpoint is down, and doctor says so", async () => {
    const down = await startEmbeddingsFixture({ dims: 64 });
    const url = down.url;
    const cfg = config("down.yaml", { url, model: "fixture", query_timeout: "2s" });
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["weather", "calc"]);
      await waitHybrid((n, a) => gw.call(n, a));
      await down.close();
      const r = doc(await gw.call("mcphub_resolve_tool", { query: "multiply two numbers" }));
      expect(checkResolveContract(r)).toEqual([]);
      expect(r).toMatchObject({ search_mode: "lexical", recommendation: { namespaced: "calc__multiply" } });
      expect(String(r.fallback_reason)).toMatch(/query embedding failed: cannot reach/);
      const s = doc(await gw.call("mcphub_search_tools", { query: "add numbers" }));
      expect(s).toMatchObject({ search_mode: "lexical" });
      expect((s.matches as { namespaced: string }[])[0]?.namespaced).toBe("calc__add");
      const listed = doc(await gw.call("mcphub_list_servers"));
      expect(listed.search).toMatchObject({ mode: "lexical", reason: expect.stringMatching(/cannot reach/) });
    } finally {
      await gw.close();
    }
    const doctor = await runMcphub(home, ["--config", cfg, "doctor", "--json"]);
    const checks = JSON.parse(doctor.stdout) as { name: string; ok: boolean; detail: string }[];
    const emb = checks.find((c) => c.name === "search:embeddings");
    expect(emb).toMatchObject({ ok: false });
    expect(emb?.detail).toMatch(/model fixture at .*cannot reach.*search falls back to lexical; cache: 3 vectors/);

    const good = await runMcphub(home, ["--config", config("good.yaml", { url: fx.url, model: "fixture", api_key: "vault://emb/API_KEY" }), "doctor", "--json"]);
    const ok = (JSON.parse(good.stdout) as { name: string; ok: boolean; detail: string }[]).find((c) => c.name === "search:embeddings");
    expect(ok).toMatchObject({ ok: true });
    expect(ok?.detail).toMatch(/model fixture at http:\/\/127\.0\.0\.1:\d+\/v1: 64-dimensional vectors in \d+ms; cache: 3 vectors/);
    expect(good.stdout + good.stderr).not.toContain(KEY);
  });
});
