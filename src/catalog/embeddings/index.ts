// Semantic search (`search.embeddings`): the HTTP client of an OpenAI-compatible embeddings
// endpoint (client.ts), the on-disk vector cache (cache.ts), the service that keeps tool vectors
// current and ranks a query (service.ts), and what `doctor` reports about it (probe.ts). Optional:
// without it, search is lexical only.
export { probeEmbeddings } from "./probe.js";
export { SemanticSearch } from "./service.js";
