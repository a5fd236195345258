// Resolves a tool reference from a management call to a catalogue entry in the agent's scope.
// describe_tool and call_tool take the same forms: `server__tool` (any accepted spelling), server
// + tool, the `name` alias of `tool` (MCP's own field name), and a bare tool name when exactly one
// in-scope tool carries it. A name that matches nothing is an error with a did-you-mean. A server
// that is configured and in scope but has no listing yet is started if idle and waited for
// (bounded), so a call made right after startup works instead of failing with "not found". For a
// call (`live`), a server known only from its cache is started first, so the call is checked
// against its current tools.
import type { CatalogEntry, JsonObject } from "../../catalog/types.js";
import { splitNamespaced } from "../../catalog/names.js";
import { closest } from "../../config/errors.js";
import { errorText } from "../../util/errors.js";
import { advertisedName } from "../management.js";
import { BadRequest, type ToolContext } from "./context.js";

export class OutOfScope extends Error {}

/**
 * `name` is accepted for `tool` (models send MCP's tools/call field name); any other unknown key
 * is refused with a message naming it and the fields to use.
 */
export function normaliseToolName(raw: unknown, known: readonly string[], usage: string): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const obj = raw as Record<string, unknown>;
  const accepted = new Set([...known, "name"]);
  const unknown = Object.keys(obj).filter((k) => !accepted.has(k));
  if (unknown.length > 0) throw new BadRequest(`unknown key \`${unknown[0]}\`; use \`tool\` for the tool name${known.includes("arguments") ? " and `arguments` for its arguments" : ""}. Send ${usage}.`);
  if (!("name" in obj)) return obj;
  const { name, ...rest } = obj;
  if ("tool" in rest && rest["tool"] !== name) throw new BadRequest(`both \`tool\` and \`name\` were sent and differ; send only \`tool\`. Send ${usage}.`);
  return { ...rest, tool: name };
}

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
  const ref = server ? (splitNamespaced(tool, server) ?? { server, tool }) : (splitNamespaced(tool) ?? bareName(ctx, tool));
  if (!ref || ref.tool === "") {
    throw new BadRequest(`need a server and a tool: send {tool: "server__tool"} or {server: "name", tool: "tool"} (got tool "${clip(tool)}")`);
  }
  const { hub, view } = ctx;
  if (!view.scope.allowsServer(ref.server) && hub.config.servers[ref.server] !== undefined) {
    throw new OutOfScope(`tool ${ref.server}__${ref.tool} is out of scope for this agent`);
  }
  const cfg = hub.config.servers[ref.server];
  if (!cfg) throw new BadRequest(unknownName(ctx, `${ref.server}__${ref.tool}`, `unknown server "${clip(ref.server)}"`));
  if (!hub.catalog.hasServer(ref.server)) {
    if (!cfg.enabled) {
      return { doc: { error: "server disabled", server: ref.server, hint: `Server "${ref.server}" is disabled in the gateway config; \`${hub.operatorCommand(["enable", ref.server])}\` enables it.` } };
    }
    try {
      await hub.ensureListing(ref.server, ctx.signal);
    } catch (err) {
      return { doc: unavailable(ctx, ref.server, err) };
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
      if (opts.live) return { doc: unavailable(ctx, ref.server, err) };
    }
    found = view.lookup(ref.server, ref.tool);
    if (found.outOfScope) throw new OutOfScope(`tool ${ref.server}__${ref.tool} is out of scope for this agent`);
  }
  if (!found.entry) throw new BadRequest(unknownName(ctx, `${ref.server}__${ref.tool}`, `server ${ref.server} has no tool "${clip(ref.tool)}"`));
  return { entry: found.entry };
}

/**
 * A name without a server: the in-scope tool whose public name or downstream name it is, when
 * exactly one carries it. Several → an error naming them; none → undefined (the caller says so).
 */
function bareName(ctx: ToolContext, name: string): { server: string; tool: string } | undefined {
  const lower = name.toLowerCase();
  const entries = ctx.view.entries();
  let hits = entries.filter((e) => e.tool === name || e.wire === name);
  if (hits.length === 0) hits = entries.filter((e) => e.tool.toLowerCase() === lower || e.wire.toLowerCase() === lower);
  if (hits.length === 1) {
    const e = hits[0] as CatalogEntry;
    return { server: e.server, tool: e.tool };
  }
  if (hits.length > 1) {
    throw new BadRequest(`several servers have a tool "${clip(name)}": ${hits.slice(0, 8).map((e) => e.namespaced).join(", ")}; send the namespaced name`);
  }
  throw new BadRequest(unknownName(ctx, name, `no tool "${clip(name)}" in this gateway`));
}

/** The message for a name that matches nothing: what was not found, the closest names, how to find the right one. */
function unknownName(ctx: ToolContext, name: string, what: string): string {
  const entries = ctx.view.entries();
  const guesses = new Set<string>();
  const byNs = closest(name, entries.map((e) => e.namespaced));
  if (byNs) guesses.add(byNs);
  const fragment = name.includes("__") ? name.slice(name.indexOf("__") + 2) : name;
  const byTool = closest(
    fragment,
    entries.map((e) => e.tool),
  );
  if (byTool) for (const e of entries) if (e.tool === byTool) guesses.add(e.namespaced);
  // Nothing close in spelling: the tools whose text best matches the name's words.
  if (guesses.size === 0) {
    for (const m of ctx.hub.catalog.index.search(fragment.replace(/[_\-.]+/g, " "), { maxHits: 3, filter: (e) => ctx.view.allows(e) })) guesses.add(m.entry.namespaced);
  }
  const list = [...guesses].slice(0, 3);
  const search = advertisedName("search_tools", ctx.view.naming);
  return `${what}${list.length ? `; did you mean ${list.join(" or ")}?` : ""} (${search} finds tools by what they do)`;
}

function unavailable(ctx: ToolContext, server: string, err: unknown): JsonObject {
  const state = ctx.hub.supervisor.snapshot(server)?.state;
  const fix = state === "needs_auth" ? ctx.hub.signInCommand(server) : ctx.hub.operatorCommand(["doctor", "--server", server]);
  return { error: "server unavailable", server, reason: errorText(err), ...(state ? { state } : {}), hint: `run \`${fix}\`` };
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
