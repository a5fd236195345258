// The locate stage: from what the call names to a catalogue entry. Two kinds of name arrive: a
// published tool name (tools/call of a mounted tool: `server__tool`, or a `namespace: false`
// server's own name) and a management reference (`server__tool`, or server + tool, in any
// accepted spelling). A server that is configured and in scope but has no listing yet is started
// if idle and waited for (bounded), so a call made right after startup works instead of failing
// with "not found"; a server known only from its cache is started first, so the call is checked
// against the tools it has now. A server outside the agent's scope is never started: locate
// reports it and the scope stage refuses it. describe_tool uses the same lookup (`locateTool`).
import { splitNamespaced } from "../../catalog/names.js";
import type { CatalogEntry, JsonObject } from "../../catalog/types.js";
import { errorText } from "../../util/errors.js";
import { advertisedName } from "../management.js";
import type { AgentView } from "../view.js";
import type { CallContext, CallOutcome, ServerAccess } from "./context.js";

/** What a lookup found: the entry, or why there is none. */
export type Found =
  | { entry: CatalogEntry }
  /** The name is in the agent's view of no server: configured, but outside its scope. */
  | { outside: string }
  /** A soft error the model can act on (unknown server, disabled, unavailable, no such tool). */
  | { doc: JsonObject }
  /** The name cannot be resolved as given. */
  | { bad: string; conflict?: true };

export async function locate(ctx: CallContext): Promise<CallOutcome | undefined> {
  const { servers } = ctx.ports;
  const found =
    ctx.target.kind === "published"
      ? await locatePublished(servers, ctx.view, ctx.target.name, ctx.signal)
      : await locateTool(servers, ctx.view, ctx.target.server, ctx.target.tool, { live: true, signal: ctx.signal });
  if ("entry" in found) {
    ctx.found = found.entry;
    return undefined;
  }
  if ("outside" in found) {
    ctx.outside = found.outside;
    return undefined;
  }
  if ("doc" in found) return { kind: "not_found", document: found.doc };
  return { kind: "bad_reference", message: found.bad, ...(found.conflict ? { conflict: true as const } : {}) };
}

/**
 * A published tool name (tools/call): a mounted tool of the session's listing, or any
 * `server__tool` in scope (a lazy session may call what it has not listed).
 */
async function locatePublished(servers: ServerAccess, view: AgentView, name: string, signal?: AbortSignal): Promise<Found> {
  const search = advertisedName("search_tools", view.naming);
  let mounted = view.toolMounts();
  let hit = mounted.byPublished.get(name);
  if (!hit && !mounted.conflicts.has(name) && !splitNamespaced(name) && (await servers.waitForPending(view, signal))) {
    mounted = view.toolMounts();
    hit = mounted.byPublished.get(name);
  }
  const conflict = mounted.conflicts.get(name);
  if (!hit && conflict) return { bad: conflict.message, conflict: true };
  let entry = hit?.item;
  if (entry && servers.catalog.listingOf(entry.server)?.source !== "live") {
    // Known only from the cache: start the server, then call against the tools it has now.
    await servers.ensureLive(entry.server, signal).catch(() => undefined);
    entry = view.toolMounts().byPublished.get(name)?.item;
  }
  if (entry) return { entry };
  if (!splitNamespaced(name)) return { bad: `unknown tool "${name}"; downstream tools are named server__tool (try ${search})` };
  const found = await locateTool(servers, view, undefined, name, { live: true, signal });
  if ("doc" in found) return { bad: `unknown tool "${name}" (${String(found.doc.error)}); try ${search}` };
  return found;
}

/**
 * A management reference to one tool, resolved within the agent's scope. For a call (`live`),
 * the server is started first when it is not running, so the name is checked against its
 * current tools.
 */
export async function locateTool(
  servers: ServerAccess,
  view: AgentView,
  server: string | undefined,
  tool: string,
  opts: { live?: boolean; signal?: AbortSignal | undefined } = {},
): Promise<Found> {
  const { catalog } = servers;
  const signal = opts.signal;
  if (server === undefined) {
    // A tool of a `namespace: false` server may be named as it is published, without a prefix.
    const mounts = view.toolMounts();
    const hit = mounts.byPublished.get(tool);
    if (hit && (!opts.live || catalog.listingOf(hit.item.server)?.source === "live")) return { entry: hit.item };
    if (hit) {
      // Known only from the cache: start the server, then look the name up in what it has now.
      await servers.ensureLive(hit.item.server, signal).catch(() => undefined);
      const again = view.toolMounts().byPublished.get(tool);
      if (again) return { entry: again.item };
    }
    const conflict = mounts.conflicts.get(tool);
    if (conflict) return { bad: conflict.message };
  }
  const ref = server ? (splitNamespaced(tool, server) ?? { server, tool }) : splitNamespaced(tool);
  if (!ref || ref.tool === "") {
    return { bad: `need a server and a tool: send {tool: "server__tool"} or {server: "name", tool: "tool"} (got tool "${clip(tool)}")` };
  }
  const config = servers.config();
  const outside = { outside: `tool ${ref.server}__${ref.tool} is out of scope for this agent` };
  if (!view.scope.allowsServer(ref.server) && config.servers[ref.server] !== undefined) return outside;
  const cfg = config.servers[ref.server];
  if (!cfg) {
    const known = Object.keys(config.servers).filter((s) => view.scope.allowsServer(s)).sort();
    return { doc: { error: "unknown server", server: ref.server, known_servers: known, hint: `Call ${advertisedName("list_servers", view.naming)} to see the servers.` } };
  }
  if (!catalog.hasServer(ref.server)) {
    if (!cfg.enabled) {
      return { doc: { error: "server disabled", server: ref.server, hint: `Server "${ref.server}" is disabled in the gateway config.` } };
    }
    try {
      await servers.ensureListing(ref.server, signal);
    } catch (err) {
      return { doc: unavailable(ref.server, err) };
    }
  }
  let found = view.lookup(ref.server, ref.tool);
  if (found.outOfScope) return outside;
  // A call needs the server running anyway; a name missing from a cached listing may be a tool
  // added since it was cached. Either way, ask the live server before answering.
  if (opts.live || (!found.entry && catalog.listingOf(ref.server)?.source === "cached")) {
    try {
      await servers.ensureLive(ref.server, signal);
    } catch (err) {
      if (opts.live) return { doc: unavailable(ref.server, err) };
    }
    found = view.lookup(ref.server, ref.tool);
    if (found.outOfScope) return outside;
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
