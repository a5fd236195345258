// Which ranker a discovery request uses: hybrid (lexical + dense) when semantic search is
// configured and the query vectors arrive in time, lexical otherwise. When semantic search is
// configured, the answer says which ranking it got and, on fallback, why (`search_mode`,
// `fallback_reason`); the model always gets results, never an embeddings error.
import type { JsonObject } from "../../catalog/types.js";
import { HybridRanker } from "../../catalog/search/fusion.js";
import type { Ranker } from "../../catalog/search/responses.js";
import { boundQuery } from "../../catalog/search/responses.js";
import type { ToolContext } from "./context.js";

export async function rankerFor(ctx: ToolContext, queries: readonly string[]): Promise<{ ranker: Ranker; note: JsonObject }> {
  const { hub } = ctx;
  const semantic = hub.semantic;
  if (!semantic) return { ranker: hub.catalog.index, note: {} };
  // The builders cut long queries before ranking: embed exactly what they will rank.
  const bounded = queries.map((q) => boundQuery(q).query);
  const got = await semantic.queryVectors(bounded, ctx.signal);
  if ("reason" in got) return { ranker: hub.catalog.index, note: { search_mode: "lexical", fallback_reason: got.reason } };
  return { ranker: new HybridRanker(hub.catalog.index, semantic.dense, got.vectors), note: { search_mode: "hybrid" } };
}
