// Public names for one kind of published item (tools, prompts, resources, resource templates).
// A server with `namespace: false` publishes its items under their own names ("bare"); every
// other server under qualified names (`server__tool`, `mcphub://server/uri`). A bare name that
// another item could also be reached by is refused for every claimant, deterministically, and
// never silently shadowed: two unprefixed servers offering the same name, a bare name equal to
// some item's qualified name, or a name the gateway keeps for itself. Refused items stay
// published under their qualified name, and the conflict is reported with both servers named.
import { byteOrder } from "../../util/json/canonical.js";

export type MountKind = "tool" | "prompt" | "resource" | "resource template";

export interface MountInput<T> {
  server: string;
  /** The name the downstream knows the item by (tool wire name, prompt name, URI, URI template). */
  bare: string;
  /** The namespaced public name, unique across servers by construction. */
  qualified: string;
  /** Whether the server asked to be published under its own names (`namespace: false`). */
  unprefixed: boolean;
  item: T;
}

export interface Mounted<T> extends MountInput<T> {
  /** The name the item is published under. */
  published: string;
}

export interface MountConflict {
  kind: MountKind;
  /** The refused bare name. */
  name: string;
  /** Every server involved (sorted); the gateway itself is not listed. */
  servers: string[];
  message: string;
}

export interface MountPlan<T> {
  /** Every item under its published name, sorted by published name (byte order). */
  items: Mounted<T>[];
  /** Inbound lookup by published name. */
  byPublished: ReadonlyMap<string, Mounted<T>>;
  /** Refused bare names, with the precise reason. */
  conflicts: ReadonlyMap<string, MountConflict>;
}

/**
 * Plans the published names of one kind of item. `reserved(name)` says why the gateway keeps a
 * name for itself (e.g. "the gateway's own mcphub_stats tool"), or undefined.
 */
export function planMounts<T>(kind: MountKind, inputs: readonly MountInput<T>[], reserved: (name: string) => string | undefined = () => undefined): MountPlan<T> {
  const unique = dedupe(inputs);
  const qualifiedOwners = new Map<string, MountInput<T>>();
  for (const i of unique) qualifiedOwners.set(i.qualified, i);
  const bareClaims = new Map<string, MountInput<T>[]>();
  for (const i of unique) {
    if (!i.unprefixed) continue;
    const list = bareClaims.get(i.bare) ?? [];
    list.push(i);
    bareClaims.set(i.bare, list);
  }
  const conflicts = new Map<string, MountConflict>();
  for (const [name, claims] of bareClaims) {
    const servers = [...new Set(claims.map((c) => c.server))].sort(byteOrder);
    const quoted = servers.map((s) => `"${s}"`);
    const fallback = claims.map((c) => c.qualified).sort(byteOrder).join(" and ");
    const listedAs = `${claims.length > 1 ? "they are" : "it is"} published as ${fallback}`;
    let message: string | undefined;
    if (servers.length > 1) {
      message = `${kind} "${name}" is offered by servers ${quoted.join(" and ")}, all with namespace: false; neither gets the unprefixed name, ${listedAs} (rename one or set namespace: true on it)`;
    } else {
      const reason = reserved(name);
      const other = qualifiedOwners.get(name);
      const owner = other !== undefined && other !== claims[0] ? other.server : undefined;
      if (reason !== undefined) {
        message = `${kind} "${name}" of server ${quoted[0]} (namespace: false) would shadow ${reason}; ${listedAs}`;
      } else if (owner !== undefined) {
        message = `${kind} "${name}" of server ${quoted[0]} (namespace: false) is also the published name of server "${owner}"'s ${kind}; ${listedAs}`;
        if (!servers.includes(owner)) servers.push(owner);
        servers.sort(byteOrder);
      }
    }
    if (message !== undefined) conflicts.set(name, { kind, name, servers, message });
  }
  const items: Mounted<T>[] = unique.map((i) => ({
    ...i,
    published: i.unprefixed && !conflicts.has(i.bare) ? i.bare : i.qualified,
  }));
  items.sort((a, b) => byteOrder(a.published, b.published));
  const byPublished = new Map(items.map((i) => [i.published, i]));
  return { items, byPublished, conflicts };
}

/** One entry per (server, bare name): a server listing the same name twice is listed once. */
function dedupe<T>(inputs: readonly MountInput<T>[]): MountInput<T>[] {
  const seen = new Set<string>();
  const out: MountInput<T>[] = [];
  for (const i of inputs) {
    const key = `${i.server}\u0000${i.bare}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(i);
  }
  return out;
}
