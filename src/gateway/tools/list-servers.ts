// mcphub_list_servers: every configured server in the agent's scope with its live state and where
// its catalogue entries come from (live session or cache, and since when), plus the catalogue
// revision, the expose mode, effective pins and the schema budget report. Like the other discovery
// tools it first waits (bounded) for in-scope servers whose tools are not known yet.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { markListingPending } from "../../catalog/search/pending.js";
import type { JsonObject } from "../../catalog/types.js";
import { isNamespaced, isPerSession, type ServerConfig } from "../../config/schema.js";
import type { CatalogEntry } from "../../catalog/types.js";
import { isDefaultPolicy, type Guard } from "../../guard/index.js";
import { conflictsOf, published } from "../listings.js";
import { MANAGEMENT_TOOLS } from "../management.js";
import { serverStatus } from "../server-status.js";
import { jsonResult, type ToolContext } from "./context.js";

export async function listServers(ctx: ToolContext): Promise<CallToolResult> {
  const { hub, view } = ctx;
  const pending = await hub.awaitDiscovery(view, ctx.signal);
  const entries = view.entries();
  const counts = new Map<string, number>();
  const byServer = new Map<string, CatalogEntry[]>();
  for (const e of entries) {
    counts.set(e.server, (counts.get(e.server) ?? 0) + 1);
    const list = byServer.get(e.server);
    if (list) list.push(e);
    else byServer.set(e.server, [e]);
  }
  const servers: JsonObject[] = [];
  let total = 0;
  for (const name of Object.keys(hub.config.servers).sort()) {
    if (!view.scope.allowsServer(name)) continue;
    const st = serverStatus(hub, name);
    if (!st) continue;
    const tools = counts.get(name) ?? 0;
    // Cached entries are routable and callable (the call starts the server), so they count.
    if (st.catalog !== "none") total += tools;
    // The stderr tail stays with the operator (status page); agents get the one-line error.
    servers.push({
      name,
      enabled: st.enabled,
      connected: st.connected,
      state: st.state,
      transport: st.transport,
      tools,
      ...(st.description !== undefined ? { description: st.description } : {}),
      ...(st.tags ? { tags: st.tags } : {}),
      ...(st.use_when ? { use_when: st.use_when } : {}),
      ...passthroughSettings(hub.config.servers[name]),
      ...guardSummary(hub.guard, view.agent, name, byServer.get(name) ?? []),
      ...(st.error ? { error: st.error } : {}),
      ...(st.sign_in ? { sign_in: st.sign_in } : {}),
      catalog: st.catalog,
      ...(st.catalogListedAt !== undefined ? { catalog_listed_at: new Date(st.catalogListedAt).toISOString() } : {}),
    });
  }
  const ad = view.advertisement();
  const doc: JsonObject = {
    contract_version: 1,
    catalog_revision: view.revision(),
    servers,
    total_tools: total,
    expose: hub.config.expose,
    pinned: view.pins,
    management_tools: MANAGEMENT_TOOLS.length,
    advertised_downstream_tools: ad.downstreamCount,
    ...(ad.report ? { tool_schema_budget: ad.report as unknown as JsonObject } : {}),
    ...(view.agent !== undefined ? { agent: view.agent } : {}),
    ...policySummary(hub.guard, view.agent),
  };
  // Semantic search's state: model, vectors, and why search is lexical when it is.
  if (hub.semantic) {
    const status = hub.semantic.status();
    const mode = status.reason === undefined && status.vectors > 0 ? "hybrid" : "lexical";
    doc.search = { mode, ...status } as unknown as JsonObject;
  }
  const conflicts = mountConflicts(ctx);
  if (conflicts.length > 0) doc.mount_conflicts = conflicts;
  const vaultProblem = await hub.vaultProblem();
  if (vaultProblem) doc.vault = { available: false, reason: vaultProblem };
  return jsonResult(markListingPending(doc, pending));
}

/** The pass-through settings that differ from the defaults (docs/protocol.md). */
function passthroughSettings(cfg: ServerConfig | undefined): JsonObject {
  if (!cfg) return {};
  return {
    ...(!isNamespaced(cfg) ? { namespace: false } : {}),
    ...(isPerSession(cfg) ? { connection: "per-session" } : {}),
    ...(cfg.pin_definitions === false ? { pin_definitions: false } : {}),
  };
}

/**
 * A server's tools by effect class, how many this agent's policy refuses or asks about, and the
 * tools an operator must approve (changed definitions with what changed; quarantined tools).
 */
function guardSummary(guard: Guard, agent: string | undefined, server: string, entries: readonly CatalogEntry[]): JsonObject {
  const effects: Record<string, number> = {};
  let refused = 0;
  let confirm = 0;
  for (const e of entries) {
    const f = guard.fields(agent, e);
    const effect = String(f.effect);
    effects[effect] = (effects[effect] ?? 0) + 1;
    if (f.refused !== undefined) refused++;
    else if (f.confirm === true) confirm++;
  }
  const out: JsonObject = {};
  if (guard.quarantined(server)) out.quarantine = true;
  if (entries.length > 0) out.effects = effects;
  if (refused || confirm) out.policy = { ...(refused ? { refused } : {}), ...(confirm ? { confirm } : {}) };
  const report = guard.report(server, entries);
  if (report) {
    out.definitions = {
      ...(report.changed.length ? { changed: report.changed.map((c) => ({ tool: c.namespaced, changes: c.changes, approve: `mcphub approve ${c.namespaced}` })) } : {}),
      ...(report.awaiting_approval.length ? { awaiting_approval: report.awaiting_approval, approve: `mcphub approve ${server}` } : {}),
      ...(report.unreadable ? { unreadable: true } : {}),
    };
  }
  return out;
}

/** This agent's policy when it restricts anything (allow, confirm, deny patterns). */
function policySummary(guard: Guard, agent: string | undefined): JsonObject {
  const p = guard.policy(agent);
  if (isDefaultPolicy(p)) return {};
  return { policy: { allow: p.allow, confirm: p.confirm, ...(p.deny.length ? { deny: p.deny.map((d) => d.pattern) } : {}) } };
}

/** Names a `namespace: false` server could not publish unprefixed (see policy/mounts.ts). */
export function mountConflicts(ctx: Pick<ToolContext, "hub" | "view">): JsonObject[] {
  const all = [...ctx.view.toolMounts().conflicts.values(), ...conflictsOf(published(ctx.hub, ctx.view))];
  return all.map((c) => ({ kind: c.kind, name: c.name, servers: c.servers, message: c.message }));
}
