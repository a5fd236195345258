// Semantic search's moving parts, kept apart from ranking: which text of a tool is embedded, the
// vector cache, the endpoint client, and the dense index they fill. Tool vectors are computed once
// per tool text and model (cached in the data dir) and recomputed only for tools whose text
// changed; the query's vector is fetched per request with a short timeout. Every failure leaves
// search lexical and is kept as a one-line reason for list_servers and doctor; none reaches a model.
import { LRUCache } from "lru-cache";
import type { EmbeddingsConfig } from "../../config/schema.js";
import { DenseIndex } from "../search/dense.js";
import { inputFieldNames } from "../search/fields.js";
import type { CatalogEntry } from "../types.js";
import { contentHash, VectorCache } from "./cache.js";
import { EmbeddingsClient, EmbeddingsError } from "./client.js";

/** How long a query waits for its vector unless `query_timeout` says otherwise. */
export const DEFAULT_QUERY_TIMEOUT_MS = 1000;
/** Indexing sends batches of tool texts; each batch gets this long. */
const INDEX_TIMEOUT_MS = 120_000;
/** After a failed query vector, queries skip the endpoint this long (no per-search timeout wait while it is down). */
const QUERY_BACKOFF_MS = 30_000;
/** Tools left without vectors are retried at most this often. */
const INDEX_RETRY_MS = 60_000;
/** Texts sent for one tool are clipped to this many characters (well within common context sizes). */
const MAX_TOOL_TEXT = 2000;
/** Recent query vectors kept in memory: a client that asks the same thing again does not wait for the endpoint. */
const QUERY_CACHE_SIZE = 512;

export type SemanticState = "indexing" | "ready" | "failed";

export interface SemanticStatus {
  model: string;
  url: string;
  state: SemanticState;
  /** Tools in the catalogue, and how many of them have a vector. */
  tools: number;
  vectors: number;
  dimensions?: number;
  /** Vectors in the cache file; vectors taken from it and vectors computed by the endpoint in this process (each listing of a server counts). */
  cached: number;
  reused: number;
  computed: number;
  cache_file: string;
  /** Why search is lexical (or partly so) right now; absent when hybrid search works. */
  reason?: string;
}

/** The text of a tool that is embedded: what it is for, in the words of its author and operator. */
export function toolText(e: CatalogEntry): string {
  const parts = [
    `${e.server} ${e.tool.replace(/[_\-.]+/gu, " ")}`,
    e.title ?? "",
    e.description,
    e.toolUseWhen.join("; "),
    inputFieldNames(e).join(", "),
    e.serverDescription ?? "",
    e.useWhen.join("; "),
  ];
  return parts
    .map((p) => p.replace(/\s+/gu, " ").trim())
    .filter((p) => p.length > 0)
    .join(". ")
    .slice(0, MAX_TOOL_TEXT);
}

export interface SemanticOptions {
  config: EmbeddingsConfig;
  dataDir: string;
  /** The API key (resolved through the vault when it is a vault:// reference). */
  apiKey?: () => Promise<string | undefined>;
  log?: (level: "info" | "warn", msg: string) => void;
}

export class SemanticSearch {
  readonly dense = new DenseIndex();
  private readonly client: EmbeddingsClient;
  private readonly cache: Promise<VectorCache>;
  private readonly queryCache = new LRUCache<string, Float32Array>({ max: QUERY_CACHE_SIZE });
  private readonly toolCounts = new Map<string, number>();
  private readonly missing = new Map<string, CatalogEntry[]>();
  private chain: Promise<void> = Promise.resolve();
  private pendingUpdates = 0;
  private indexError: string | undefined;
  private queryError: { reason: string; at: number } | undefined;
  private lastRetry = 0;
  private fromCache = 0;
  private embedded = 0;
  private cacheFile = "";
  private cacheSize = 0;
  private closed = false;

  constructor(private readonly opts: SemanticOptions) {
    const { url, model, dimensions } = opts.config;
    this.client = new EmbeddingsClient({ url, model, ...(dimensions !== undefined ? { dimensions } : {}), ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) });
    this.cache = VectorCache.open(opts.dataDir, { url, model, dimensions }).then((c) => {
      this.cacheFile = c.file;
      this.cacheSize = c.size;
      return c;
    });
  }

  get queryTimeoutMs(): number {
    return this.opts.config.query_timeout ?? DEFAULT_QUERY_TIMEOUT_MS;
  }

  /** A server's tools changed (or it went away: `entries` undefined). Indexing runs in the background, in order. */
  updateServer(server: string, entries: readonly CatalogEntry[] | undefined): void {
    this.pendingUpdates++;
    this.chain = this.chain
      .then(() => (entries === undefined ? this.drop(server) : this.index(server, entries)))
      .catch((err: unknown) => {
        this.indexError = errorLine(err);
      })
      .finally(() => {
        this.pendingUpdates--;
      });
  }

  /** Resolves when every update given so far has been indexed (or has failed). */
  async whenIdle(): Promise<void> {
    while (this.pendingUpdates > 0) await this.chain;
  }

  /**
   * The vectors of these queries, or the reason there are none (the endpoint failed recently, it
   * failed now, or nothing is indexed yet). Never throws.
   */
  async queryVectors(queries: readonly string[], signal?: AbortSignal): Promise<{ vectors: Map<string, Float32Array> } | { reason: string }> {
    if (this.dense.size() === 0) return { reason: this.indexError ?? (this.pendingUpdates > 0 ? "tool vectors are still being computed" : "no tool vectors yet") };
    const vectors = new Map<string, Float32Array>();
    const wanted = [...new Set(queries.filter((q) => q.trim().length > 0))];
    const todo = wanted.filter((q) => {
      const hit = this.queryCache.get(q);
      if (hit) vectors.set(q, hit);
      return !hit;
    });
    // A query asked before is answered from memory even while the endpoint is down.
    if (todo.length > 0 && this.queryError && Date.now() - this.queryError.at < QUERY_BACKOFF_MS) return { reason: this.queryError.reason };
    if (todo.length > 0) {
      try {
        const got = await this.client.embed(todo, { timeoutMs: this.queryTimeoutMs, ...(signal ? { signal } : {}) });
        todo.forEach((q, i) => {
          const v = got[i];
          if (v && v.length === this.dense.dimensions) {
            vectors.set(q, v);
            this.queryCache.set(q, v);
          }
        });
        if (vectors.size === 0 && wanted.length > 0) {
          throw new EmbeddingsError(`query vectors have ${got[0]?.length ?? 0} dimensions, tool vectors ${this.dense.dimensions ?? 0}`);
        }
      } catch (err) {
        this.queryError = { reason: `query embedding failed: ${errorLine(err)}`, at: Date.now() };
        this.opts.log?.("warn", `semantic search fell back to lexical: ${this.queryError.reason}`);
        return { reason: this.queryError.reason };
      }
    }
    if (todo.length > 0) this.queryError = undefined;
    this.retryMissing();
    return { vectors };
  }

  status(): SemanticStatus {
    let tools = 0;
    for (const n of this.toolCounts.values()) tools += n;
    const vectors = this.dense.size();
    const reason = this.queryError && Date.now() - this.queryError.at < QUERY_BACKOFF_MS ? this.queryError.reason : this.indexError;
    const state: SemanticState = this.pendingUpdates > 0 ? "indexing" : vectors === 0 && reason !== undefined ? "failed" : "ready";
    return {
      model: this.opts.config.model,
      url: this.opts.config.url,
      state,
      tools,
      vectors,
      ...(this.dense.dimensions !== undefined ? { dimensions: this.dense.dimensions } : {}),
      cached: this.cacheSize,
      reused: this.fromCache,
      computed: this.embedded,
      cache_file: this.cacheFile,
      ...(reason !== undefined ? { reason } : {}),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.whenIdle();
    await (await this.cache).save().catch(() => undefined);
  }

  private async drop(server: string): Promise<void> {
    this.toolCounts.delete(server);
    this.missing.delete(server);
    this.dense.removeServer(server);
  }

  private async index(server: string, entries: readonly CatalogEntry[]): Promise<void> {
    if (this.closed) return;
    const cache = await this.cache;
    this.toolCounts.set(server, entries.length);
    const texts = entries.map(toolText);
    const hashes = texts.map(contentHash);
    const vectors: (Float32Array | undefined)[] = hashes.map((h) => cache.get(h));
    this.fromCache += vectors.filter((v) => v !== undefined).length;
    const todo = entries.map((_, i) => i).filter((i) => vectors[i] === undefined);
    let failure: string | undefined;
    if (todo.length > 0) {
      try {
        const got = await this.client.embed(
          todo.map((i) => texts[i] as string),
          { timeoutMs: INDEX_TIMEOUT_MS },
        );
        todo.forEach((i, k) => {
          const v = got[k];
          if (!v) return;
          vectors[i] = v;
          cache.set(hashes[i] as string, v);
        });
        this.embedded += got.length;
        await cache.save().catch((err: unknown) => this.opts.log?.("warn", `embeddings cache not saved: ${errorLine(err)}`));
        this.cacheSize = cache.size;
      } catch (err) {
        failure = `tool embedding failed for ${server}: ${errorLine(err)}`;
        this.opts.log?.("warn", failure);
      }
    }
    const items = entries.flatMap((entry, i) => {
      const vector = vectors[i];
      return vector ? [{ entry, vector }] : [];
    });
    this.dense.setServer(server, items);
    const left = entries.filter((_, i) => vectors[i] === undefined);
    if (left.length > 0) this.missing.set(server, [...entries]);
    else this.missing.delete(server);
    if (failure) this.indexError = failure;
    else if (this.missing.size === 0) this.indexError = undefined;
  }

  /** The endpoint answers again: re-index servers left with tools that have no vector. */
  private retryMissing(): void {
    if (this.missing.size === 0 || Date.now() - this.lastRetry < INDEX_RETRY_MS) return;
    this.lastRetry = Date.now();
    for (const [server, entries] of this.missing) this.updateServer(server, entries);
  }
}

function errorLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.split("\n")[0] ?? msg;
}
