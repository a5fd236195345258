// What `doctor` says about semantic search: does the endpoint answer with vectors of the expected
// size, and what does the vector cache hold for this model. One embedding request of one word.
import type { EmbeddingsConfig } from "../../config/schema.js";
import { cacheFileName, describeCacheDir, type CacheFileInfo } from "./cache.js";
import { EmbeddingsClient } from "./client.js";
import { join } from "node:path";

const PROBE_TIMEOUT_MS = 10_000;

export interface EmbeddingsProbe {
  ok: boolean;
  model: string;
  url: string;
  dimensions?: number;
  latency_ms?: number;
  error?: string;
  /** The cache file of this endpoint + model, when one exists. */
  cache?: CacheFileInfo;
}

export async function probeEmbeddings(config: EmbeddingsConfig, dataDir: string, apiKey?: () => Promise<string | undefined>): Promise<EmbeddingsProbe> {
  const { url, model, dimensions } = config;
  const client = new EmbeddingsClient({ url, model, ...(dimensions !== undefined ? { dimensions } : {}), ...(apiKey ? { apiKey } : {}) });
  const file = join(dataDir, "embeddings", cacheFileName({ url, model, dimensions }));
  const cache = (await describeCacheDir(dataDir)).find((c) => c.file === file);
  const started = Date.now();
  try {
    const [v] = await client.embed(["mcphub doctor"], { timeoutMs: PROBE_TIMEOUT_MS });
    return { ok: true, model, url, dimensions: v?.length ?? 0, latency_ms: Date.now() - started, ...(cache ? { cache } : {}) };
  } catch (err) {
    return { ok: false, model, url, error: (err as Error).message, ...(cache ? { cache } : {}) };
  }
}
