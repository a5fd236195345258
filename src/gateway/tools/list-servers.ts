// mcphub_list_servers: every configured server in the agent's scope with its live state, plus the
// catalogue revision, the expose mode, effective pins and the schema budget report.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../catalog/types.js";
import { MANAGEMENT_TOOLS } from "../management.js";
import { jsonResult, type ToolContext } from "./context.js";

export async function listServers(ctx: ToolContext): Promise<CallToolResult> {
  const { hub, view } = ctx;
  const entries = view.entries();
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(e.server, (counts.get(e.server) ?? 0) + 1);
  const servers: JsonObject[] = [];
  let total = 0;
  for (const name of Object.keys(hub.config.servers).sort()) {
    if (!view.scope.allowsServer(name)) continue;
    const cfg = hub.config.servers[name];
    if (!cfg) continue;
    const snap = hub.supervisor.snapshot(name);
    const connected = snap?.connected === true;
    const tools = counts.get(name) ?? 0;
    if (connected) total += tools;
    servers.push({
      name,
      enabled: cfg.enabled,
      connected,
      state: cfg.enabled ? (snap?.state ?? "connecting") : "disabled",
      transport: cfg.url ? (cfg.transport ?? "http") : "stdio",
      tools,
      ...(cfg.description !== undefined ? { description: cfg.description } : {}),
      ...(cfg.tags?.length ? { tags: cfg.tags } : {}),
      ...(cfg.use_when?.length ? { use_when: cfg.use_when } : {}),
      ...(snap?.error ? { error: snap.error } : {}),
      ...(snap?.state === "needs_auth" ? { sign_in: hub.signInCommand(name) } : {}),
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
  };
  const vaultProblem = await hub.vaultProblem();
  if (vaultProblem) doc.vault = { available: false, reason: vaultProblem };
  return jsonResult(doc);
}
