// Resolves a tool reference from a management call (`server__tool`, or server + tool, in any
// accepted spelling) to a catalogue entry in the agent's scope. A server that is configured and
// in scope but still connecting is waited for (bounded), so a call made right after startup
// works instead of failing with "not found".
import type { CatalogEntry, JsonObject } from "../../catalog/types.js";
import { splitNamespaced } from "../../catalog/names.js";
import { errorText } from "../../util/errors.js";
import { advertisedName } from "../management.js";
import { BadRequest, type ToolContext } from "./context.js";

export class OutOfScope extends Error {}

/** Either the entry, or a soft-error document the model can act on. Throws BadRequest/OutOfScope. */
export async function locateTool(
  ctx: ToolContext,
  server: string | undefined,
  tool: string,
): Promise<{ entry: CatalogEntry } | { doc: JsonObject }> {
  if (server === undefined) {
    // A tool of a `namespace: false` server may be named as it is published, without a prefix.
    const mounts = ctx.view.toolMounts();
    const hit = mounts.byPublished.get(tool);
    if (hit) return { entry: hit.item };
    const conflict = mounts.conflicts.get(tool);
    if (conflict) throw new BadRequest(conflict.message);
  }
  const ref = server ? (splitNamespaced(tool, server) ?? { server, tool }) : splitNamespaced(tool);
  if (!ref || ref.tool === "") {
    throw new BadRequest(
      `need a server and a tool: send {tool: "server__tool"} or {server: "name", tool: "tool"} (got tool "${clip(tool)}")`,
    );
  }
  const { hub, view } = ctx;
  if (!view.scope.allowsServer(ref.server) && hub.config.servers[ref.server] !== undefined) {
    throw new OutOfScope(`tool ${ref.server}__${ref.tool} is out of scope for this agent`);
  }
  const cfg = hub.config.servers[ref.server];
  if (!cfg) {
    const known = Object.keys(hub.config.servers).filter((s) => view.scope.allowsServer(s)).sort();
    return { doc: { error: "unknown server", server: ref.server, known_servers: known, hint: `Call ${advertisedName("list_servers", view.naming)} to see the servers.` } };
  }
  if (!hub.catalog.hasServer(ref.server)) {
    if (!cfg.enabled) {
      return { doc: { error: "server disabled", server: ref.server, hint: `Server "${ref.server}" is disabled in the gateway config.` } };
    }
    try {
      await hub.supervisor.waitForServer(ref.server, { timeoutMs: hub.config.connect_timeout + 5000, signal: ctx.signal });
      hub.syncServer(ref.server);
    } catch (err) {
      return { doc: { error: "server unavailable", server: ref.server, reason: errorText(err) } };
    }
  }
  const found = view.lookup(ref.server, ref.tool);
  if (found.outOfScope) throw new OutOfScope(`tool ${ref.server}__${ref.tool} is out of scope for this agent`);
  if (!found.entry) {
    return {
      doc: {
        error: "tool not found",
        server: ref.server,
        tool: ref.tool,
        hint: `Call ${advertisedName("search_tools", view.naming)} or ${advertisedName("resolve_tool", view.naming)} to find the right name.`,
      },
    };
  }
  return { entry: found.entry };
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
