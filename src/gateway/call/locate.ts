// The locate stage: from what the call names to a catalogue entry. Two kinds of name arrive: a
// published tool name (tools/call of a mounted tool: `server__tool`, or a `namespace: false`
// server's own name) and a management reference (`server__tool`, or server + tool, in any
// accepted spelling). A server that is configured and in scope but has no listing yet is started
// if idle and waited for (bounded), so a call made right after startup works instead of failing
// with "not found"; a server known only from its cache is started first, so the call is checked
// against the tools it has now. A server outside the agent's scope is never started: locate
// reports it and the scope stage refuses it. describe_tool uses the same lookup (`locateTool`),
// so both take the same forms: `server__tool`, server + tool, a `namespace: false` server's own
// name, and a bare tool name that exactly one in-scope tool carries. A name that matches nothing
// is a bad reference with a did-you-mean (the closest names, else the tools its words describe).
import { splitNamespaced } from "../../catalog/names.js";
import { closest } from "../../config/errors.js";
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

/** Time spent waiting for a server to start or list its tools (not the gateway's own time: the metrics leave it out). */
export interface WaitClock {
  ms: number;
}

/** `p`, with the time until it settles added to the clock. */
function waited<T>(clock: WaitClock | undefined, p: Promise<T>): Promise<T> {
  if (!clock) return p;
  const t0 = performance.now();
  return p.finally(() => {
    clock.ms += performance.now() - t0;
  });
}

/**
 * Nearly every call names a tool the agent may call on a server that is up: found here without
 * a promise (two async layers and their hops on every call). Anything else (a server to start or
 * wait for, a name to resolve, a conflict, a refusal to word) is left to the full lookup below,
 * which answers the same for the cases this takes.
 */
function locateNow(ctx: CallContext): CatalogEntry | undefined {
  const { servers } = ctx.ports;
  const view = ctx.view;
  const target = ctx.target;
  if (target.kind === "published") {
    const entry = view.toolMounts().byPublished.get(target.name)?.item;
    return entry && servers.catalog.listingOf(entry.server)?.source === "live" ? entry : undefined;
  }
  if (target.server === undefined) {
    const mounts = view.toolMounts();
    const hit = mounts.byPublished.get(target.tool);
    if (hit) return servers.catalog.listingOf(hit.item.server)?.source === "live" ? hit.item : undefined;
    if (mounts.conflicts.has(target.tool)) return undefined;
  }
  const ref = target.server ? (splitNamespaced(target.tool, target.server) ?? { server: target.server, tool: target.tool }) : splitNamespaced(target.tool);
  if (!ref || ref.tool === "" || !view.scope.allowsServer(ref.server) || servers.config().servers[ref.server] === undefined || !servers.isLive(ref.server)) return undefined;
  const found = view.lookup(ref.server, ref.tool);
  return found.outOfScope ? undefined : found.entry;
}

export function locate(ctx: CallContext): CallOutcome | undefined | Promise<CallOutcome | undefined> {
  const entry = locateNow(ctx);
  if (entry) {
    ctx.found = entry;
    return undefined;
  }
  return locateSlowly(ctx);
}

async function locateSlowly(ctx: CallContext): Promise<CallOutcome | undefined> {
  const { servers } = ctx.ports;
  const clock: WaitClock = { ms: 0 };
  const found =
    ctx.target.kind === "published"
      ? await locatePublished(servers, ctx.view, ctx.target.name, ctx.signal, clock)
      : await locateTool(servers, ctx.view, ctx.target.server, ctx.target.tool, { live: true, signal: ctx.signal, clock });
  ctx.waitMs += clock.ms;
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
async function locatePublished(servers: ServerAccess, view: AgentView, name: string, signal: AbortSignal | undefined, clock: WaitClock): Promise<Found> {
  const search = advertisedName("search_tools", view.naming);
  let mounted = view.toolMounts();
  let hit = mounted.byPublished.get(name);
  if (!hit && !mounted.conflicts.has(name) && !splitNamespaced(name) && (await waited(clock, servers.waitForPending(view, signal)))) {
    mounted = view.toolMounts();
    hit = mounted.byPublished.get(name);
  }
  const conflict = mounted.conflicts.get(name);
  if (!hit && conflict) return { bad: conflict.message, conflict: true };
  let entry = hit?.item;
  if (entry && servers.catalog.listingOf(entry.server)?.source !== "live") {
    // Known only from the cache: start the server, then call against the tools it has now.
    const live = servers.ensureLive(entry.server, signal);
    if (live) await waited(clock, live).catch(() => undefined);
    entry = view.toolMounts().byPublished.get(name)?.item;
  }
  if (entry) return { entry };
  if (!splitNamespaced(name)) return { bad: `unknown tool "${name}"; downstream tools are named server__tool (try ${search})` };
  const found = await locateTool(servers, view, undefined, name, { live: true, signal, clock });
  if ("doc" in found) return { bad: `unknown tool "${name}" (${String(found.doc.error)}); try ${search}` };
  if ("bad" in found && !("conflict" in found)) return { bad: `unknown tool "${name}": ${found.bad}` };
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
  opts: { live?: boolean; signal?: AbortSignal | undefined; clock?: WaitClock } = {},
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
      const live = servers.ensureLive(hit.item.server, signal);
      if (live) await waited(opts.clock, live).catch(() => undefined);
      const again = view.toolMounts().byPublished.get(tool);
      if (again) return { entry: again.item };
    }
    const conflict = mounts.conflicts.get(tool);
    if (conflict) return { bad: conflict.message };
  }
  const bare = server === undefined && !splitNamespaced(tool) && tool !== "" ? bareName(servers, view, tool) : undefined;
  if (bare && "bad" in bare) return bare;
  const ref = bare ?? (server ? (splitNamespaced(tool, server) ?? { server, tool }) : splitNamespaced(tool));
  if (!ref || ref.tool === "") {
    return { bad: `need a server and a tool: send {tool: "server__tool"} or {server: "name", tool: "tool"} (got tool "${clip(tool)}")` };
  }
  const config = servers.config();
  const outside = { outside: `tool ${ref.server}__${ref.tool} is out of scope for this agent` };
  if (!view.scope.allowsServer(ref.server) && config.servers[ref.server] !== undefined) return outside;
  const cfg = config.servers[ref.server];
  if (!cfg) return { bad: unknownName(servers, view, `${ref.server}__${ref.tool}`, `unknown server "${clip(ref.server)}"`) };
  if (!catalog.hasServer(ref.server)) {
    if (!cfg.enabled) {
      return { doc: { error: "server disabled", server: ref.server, hint: `Server "${ref.server}" is disabled in the gateway config; \`${servers.command(["enable", ref.server])}\` enables it.` } };
    }
    try {
      await waited(opts.clock, servers.ensureListing(ref.server, signal));
    } catch (err) {
      return { doc: unavailable(servers, ref.server, err) };
    }
  }
  let found = view.lookup(ref.server, ref.tool);
  if (found.outOfScope) return outside;
  // A call needs the server running anyway; a name missing from a cached listing may be a tool
  // added since it was cached. Either way, ask the live server before answering.
  if (opts.live || (!found.entry && catalog.listingOf(ref.server)?.source === "cached")) {
    try {
      // Every call of a running server passes here: only a server that is not up is waited for.
      const live = servers.ensureLive(ref.server, signal);
      if (live) await waited(opts.clock, live);
    } catch (err) {
      if (opts.live) return { doc: unavailable(servers, ref.server, err) };
    }
    found = view.lookup(ref.server, ref.tool);
    if (found.outOfScope) return outside;
  }
  if (!found.entry) return { bad: unknownName(servers, view, `${ref.server}__${ref.tool}`, `server ${ref.server} has no tool "${clip(ref.tool)}"`) };
  return { entry: found.entry };
}

/**
 * A name without a server: the in-scope tool whose public name or downstream name it is, when
 * exactly one carries it; several, or none, is a bad reference that says so.
 */
function bareName(servers: ServerAccess, view: AgentView, name: string): { server: string; tool: string } | { bad: string } {
  const lower = name.toLowerCase();
  const entries = view.entries();
  let hits = entries.filter((e) => e.tool === name || e.wire === name);
  if (hits.length === 0) hits = entries.filter((e) => e.tool.toLowerCase() === lower || e.wire.toLowerCase() === lower);
  const only = hits.length === 1 ? hits[0] : undefined;
  if (only) return { server: only.server, tool: only.tool };
  if (hits.length > 1) return { bad: `several servers have a tool "${clip(name)}": ${hits.slice(0, 8).map((e) => e.namespaced).join(", ")}; send the namespaced name` };
  return { bad: unknownName(servers, view, name, `no tool "${clip(name)}" in this gateway`) };
}

/** What was not found, the closest names (by spelling, else by what the name's words describe), and how to find the right one. */
function unknownName(servers: ServerAccess, view: AgentView, name: string, what: string): string {
  const entries = view.entries();
  const guesses = new Set<string>();
  const byNamespaced = closest(
    name,
    entries.map((e) => e.namespaced),
  );
  if (byNamespaced) guesses.add(byNamespaced);
  const fragment = name.includes("__") ? name.slice(name.indexOf("__") + 2) : name;
  const byTool = closest(
    fragment,
    entries.map((e) => e.tool),
  );
  if (byTool) for (const e of entries) if (e.tool === byTool) guesses.add(e.namespaced);
  if (guesses.size === 0) {
    for (const m of servers.catalog.index.search(fragment.replace(/[_\-.]+/g, " "), { maxHits: 3, filter: (e) => view.allows(e) })) guesses.add(m.entry.namespaced);
  }
  const list = [...guesses].slice(0, 3);
  return `${what}${list.length ? `; did you mean ${list.join(" or ")}?` : ""} (${advertisedName("search_tools", view.naming)} finds tools by what they do)`;
}

function unavailable(servers: ServerAccess, server: string, err: unknown): JsonObject {
  return { error: "server unavailable", server, reason: errorText(err), hint: `run \`${servers.command(["doctor", "--server", server])}\`` };
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
