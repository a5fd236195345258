// The retrieval benchmark's hybrid method: the lexical index plus the dense index, filled through
// the real embeddings client and vector cache from the local fixture endpoint
// (test/fixtures/embeddings-server.mjs). The fixture is a hashed bag of words with a small
// synonym table, not a language model: these rows check the plumbing (vectors cached and fused,
// resolve's assessment in hybrid mode), not what a real embedding model would add.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SemanticSearch } from "../src/catalog/embeddings/service.js";
import { HybridRanker } from "../src/catalog/search/fusion.js";
import { SearchIndex } from "../src/catalog/search/index.js";
import { buildResolveResponse } from "../src/catalog/search/responses.js";
import type { CatalogEntry } from "../src/catalog/types.js";
import { startEmbeddingsFixture, type EmbeddingsFixture } from "../test/helpers/embeddings.js";
import type { Method } from "./retrieval.js";

const DEPTH = 100;
const REVISION = "catalog-v1-000000000000000000000000";

/**
 * The alternative the fusion was measured against: reciprocal-rank fusion (1 / (60 + rank) from
 * each list's top 50), ranking only; resolve stays as search's.
 */
function rrfFusion(idx: SearchIndex, semantic: SemanticSearch, vector: Float32Array, query: string): string[] {
  const fused = new Map<string, number>();
  idx.rank(query, { limit: 50 }).matches.forEach((m, r) => fused.set(m.entry.namespaced, 1 / (61 + r)));
  semantic.dense.search(vector, 50).forEach((d, r) => fused.set(d.entry.namespaced, (fused.get(d.entry.namespaced) ?? 0) + 1 / (61 + r)));
  return [...fused].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([name]) => name);
}

export function rrfMethod(): Method {
  const inner = hybridMethod(true);
  return { ...inner, name: "hybrid, RRF (fixture)" };
}

export function hybridMethod(rrf = false): Method {
  let fixture: EmbeddingsFixture | undefined;
  const dirs: string[] = [];
  const services: SemanticSearch[] = [];
  return {
    name: "hybrid (fixture)",
    async build(entries: CatalogEntry[]) {
      fixture ??= await startEmbeddingsFixture({ dims: 256 });
      const dir = mkdtempSync(join(tmpdir(), "mcphub-hybrid-"));
      dirs.push(dir);
      const semantic = new SemanticSearch({ config: { url: fixture.url, model: "fixture-bag-of-concepts", query_timeout: 10_000 }, dataDir: dir });
      services.push(semantic);
      const idx = new SearchIndex();
      const byServer = new Map<string, CatalogEntry[]>();
      for (const e of entries) byServer.set(e.server, [...(byServer.get(e.server) ?? []), e]);
      for (const [server, list] of byServer) {
        idx.setServer(server, list);
        semantic.updateServer(server, list);
      }
      await semantic.whenIdle();
      return async (query: string) => {
        const got = await semantic.queryVectors([query]);
        if ("reason" in got) throw new Error(`hybrid bench: ${got.reason}`);
        const ranker = new HybridRanker(idx, semantic.dense, got.vectors);
        const vector = got.vectors.get(query);
        const ranked =
          rrf && vector ? rrfFusion(idx, semantic, vector, query) : ranker.rank(query, { limit: DEPTH }).matches.map((m) => m.entry.namespaced);
        if (rrf) return { ranked };
        const doc = buildResolveResponse(ranker, { query }, { revision: REVISION });
        const rec = doc["recommendation"] as { namespaced?: string } | null;
        return { ranked, confident: doc["status"] === "confident" ? (rec?.namespaced ?? null) : null };
      };
    },
    async close() {
      for (const s of services) await s.close();
      await fixture?.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}
