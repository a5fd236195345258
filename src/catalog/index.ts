// The catalogue: every downstream tool under its public name (names.ts: de-stuttering, the
// collision plan, inbound aliases), with its metadata (types.ts), per server (catalog.ts), and
// the catalog_revision hash clients cache against (revision.ts). Below it sit the on-disk
// listing cache (cache/), search and ranking (search/) and semantic search (embeddings/). It
// never spawns anything and knows no transport.
export { Catalog } from "./catalog.js";
export { NAMESPACE_SEPARATOR, namespacedAliases, planPublicNames, splitNamespaced, stripSelfPrefix, type NamePlan } from "./names.js";
export { catalogRevision } from "./revision.js";
export type { CatalogEntry, JsonObject, JsonValue, ServerMeta } from "./types.js";
