// Resolves a tool reference from a management call (`server__tool`, or server + tool, in any
// accepted spelling) to a catalogue entry in the agent's scope. A server that is configured and
// in scope but has no listing yet is started if idle and waited for (bounded), so a call made
// right after startup works instead of failing with "not found". For a call (`live`), a server
// known only from its cache is started first, so the call is checked against its current tools.
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
  opts: { live?: boolean } = {},
): Promise<{ entry: CatalogEntry } | { doc: JsonObject }> {
  if (server === undefined) {
    // A tool of a `namespace: false` server may be named as it is published, without a prefix.
    const mounts = ctx.view.toolMounts();
    const hit = mounts.byPublished.get(tool);
    if (hit && (!opts.live || ctx.hub.catalog.listingOf(hit.item.server)?.source === "live")) return { entry: hit.item };
    if (hit) {
      // Known only from the cache: start the server, then look the name up in what it has now.
      await ctx.hub.ensureLive(hit.item.server, ctx.signal).catch(() => undefined);
      const again = ctx.view.toolMounts().byPublished.get(tool);
      if (again) return { entry: again.item };
    }
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
      await hub.ensureListing(ref.server, ctx.signal);
    } catch (err) {
      return { doc: unavailable(ref.server, err) };
    }
  }
  let found = view.lookup(ref.server, ref.tool);
  if (found.outOfScope) throw new OutOfScope(`tool ${ref.server}__${ref.tool} is out of scope for this agent`);
  // A call needs the server running anyway; a name missing from a cached listing may be a tool
  // added since it was cached. Either way, ask the live server before answering.
  if (opts.live || (!found.entry && hub.catalog.listingOf(ref.server)?.source === "cached")) {
    try {
      await hub.ensureLive(ref.server, ctx.signal);
    } catch (err) {
      if (opts.live) return { doc: unavailable(ref.server, err) };
    }
    found = view.lookup(ref.server, ref.tool);
    if (found.outOfScope) throw new OutOfScope(`tool ${ref.server}__${ref.tool} is out of scope for this agent`);
  }
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

function unavailable(server: string, err: unknown): JsonObject {
  return { error: "server unavailable", server, reason: errorText(err) };
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
