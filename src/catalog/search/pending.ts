// Honest answers while servers are still starting. A server in scope whose tools are not known
// yet (no live and no cached listing) could hold what the caller asks for, so a discovery answer
// given without it is marked incomplete: the pending servers are named, a retry is suggested, and
// resolve_tool is never `confident` (contract v1 stays valid: `ambiguous` with a recommendation,
// or `no_match` without one; `servers_pending` is an added reason code and an added field).
import type { JsonObject } from "../types.js";

export const SERVERS_PENDING = "servers_pending";

export function pendingHint(pending: readonly string[]): string {
  const list = pending.join(", ");
  const which = pending.length === 1 ? `server ${list} is` : `servers ${list} are`;
  return `${which} still starting and not in this answer yet, so it may be incomplete — do not treat it as final; retry in a few seconds (catalog_revision changes when they arrive)`;
}

/** A resolve_tool document, downgraded and annotated when servers are pending. */
export function markResolvePending(doc: JsonObject, pending: readonly string[]): JsonObject {
  // The oversize-query error has no status: nothing to mark.
  if (pending.length === 0 || typeof doc["status"] !== "string") return doc;
  const codes = Array.isArray(doc["reason_codes"]) ? [...doc["reason_codes"]] : [];
  if (!codes.includes(SERVERS_PENDING)) codes.push(SERVERS_PENDING);
  const out: JsonObject = { ...doc, reason_codes: codes };
  if (doc["status"] === "confident") {
    out["status"] = "ambiguous";
    out["confidence"] = "low";
    out["ambiguous"] = true;
  }
  out["hint"] = pendingHint(pending);
  out["servers_pending"] = [...pending];
  return out;
}

/** search_tools and list_servers: name the pending servers and say to retry. */
export function markListingPending(doc: JsonObject, pending: readonly string[]): JsonObject {
  if (pending.length === 0 || doc["error"] !== undefined) return doc;
  return { ...doc, servers_pending: [...pending], hint: pendingHint(pending) };
}
