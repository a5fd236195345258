// Public tool names. A downstream tool `bob_context` on server `bob` is advertised as
// `bob__context`: the redundant self-prefix is stripped (underscore or hyphen) unless stripping
// would collide with another tool of the same server, in which case the wire name is kept. The
// same plan answers the inbound direction, so every name we advertise (and every legacy spelling
// of it) resolves back to exactly one wire name.
import { byteOrder } from "../util/json/canonical.js";

/** Separates server and tool in every public name. Server names never contain it. */
export const NAMESPACE_SEPARATOR = "__";

export interface NamePlan {
  readonly server: string;
  /** The public fragment for a wire name (the part after `server__`). */
  publicOf(wire: string): string;
  /**
   * Inbound: maps a tool name as a client spelled it — public fragment, wire name, or a legacy
   * stutter (`server_x`, `server-x`, `server__x`) — to the wire name; undefined when unknown.
   */
  resolve(name: string): string | undefined;
  /** Every tool of the server, sorted by fragment (byte order). */
  entries(): { wire: string; fragment: string }[];
}

/** The self-prefix-stripped fragment, ignoring collisions (`bob-context` on `bob` → `context`). */
export function stripSelfPrefix(server: string, wire: string): string {
  for (const sep of ["_", "-"]) {
    const prefix = server + sep;
    if (wire.startsWith(prefix) && wire.length > prefix.length) return wire.slice(prefix.length);
  }
  return wire;
}

/**
 * Builds the collision plan for one server:
 * 1. sort the wire names in byte order;
 * 2. reserve every exact wire name as its own fragment;
 * 3. in sorted order give each name its stripped fragment unless a different tool already claims
 *    it, in which case the wire name is kept.
 * Reserving wire names first makes the mapping injective and independent of input order.
 */
export function planPublicNames(server: string, wireNames: string[]): NamePlan {
  const wires = [...new Set(wireNames)].sort(byteOrder);
  const owner = new Map<string, string>(wires.map((w) => [w, w])); // fragment → wire
  const fragmentOf = new Map<string, string>(); // wire → fragment
  for (const wire of wires) {
    const stripped = stripSelfPrefix(server, wire);
    const claimant = owner.get(stripped);
    if (claimant === undefined || claimant === wire) {
      owner.set(stripped, wire);
      fragmentOf.set(wire, stripped);
    } else {
      fragmentOf.set(wire, wire);
    }
  }
  // `owner` still holds reservations for wire names that ended up stripped (`test-foo` once it
  // became `foo`); they are not public fragments but do resolve, as wire names.
  const byFragment = new Map<string, string>();
  for (const [wire, fragment] of fragmentOf) byFragment.set(fragment, wire);

  const exact = (name: string): string | undefined => byFragment.get(name) ?? (fragmentOf.has(name) ? name : undefined);

  return {
    server,
    publicOf: (wire) => fragmentOf.get(wire) ?? stripSelfPrefix(server, wire),
    resolve(name) {
      const hit = exact(name);
      if (hit !== undefined) return hit;
      // Legacy spellings: the server name repeated in front of the tool part. Strip it once and
      // look the remainder up exactly (never recursively, so one spelling has one meaning).
      for (const sep of [NAMESPACE_SEPARATOR, "_", "-"]) {
        const prefix = server + sep;
        if (name.startsWith(prefix) && name.length > prefix.length) {
          const inner = exact(name.slice(prefix.length));
          if (inner !== undefined) return inner;
        }
      }
      return undefined;
    },
    entries: () =>
      [...fragmentOf].map(([wire, fragment]) => ({ wire, fragment })).sort((a, b) => byteOrder(a.fragment, b.fragment)),
  };
}

/**
 * Splits `server__tool` on the first `__`. Undefined unless both sides are non-empty. When
 * `server` is given the name must belong to it, and a redundant second `server__` in front of the
 * tool (`bob__bob__plan`, as written by clients that prefix names themselves) is removed.
 */
export function splitNamespaced(name: string, server?: string): { server: string; tool: string } | undefined {
  const i = name.indexOf(NAMESPACE_SEPARATOR);
  if (i <= 0 || i + NAMESPACE_SEPARATOR.length >= name.length) return undefined;
  const head = name.slice(0, i);
  let tool = name.slice(i + NAMESPACE_SEPARATOR.length);
  if (server !== undefined) {
    if (head !== server) return undefined;
    const again = server + NAMESPACE_SEPARATOR;
    if (tool.startsWith(again) && tool.length > again.length) tool = tool.slice(again.length);
  }
  return { server: head, tool };
}

/**
 * Every `server__…` spelling accepted for one tool in scope (`tools:`) and pin checks:
 * `server__fragment`, `server__wire`, `server__server_fragment`, `server__server-fragment`
 * (deduplicated, in that order). With a plan, spellings that the plan resolves to a *different*
 * tool are dropped, so a legacy alias can never widen a scope to a neighbour (`live__live_echo`
 * names the wire tool `live_echo`, not the stripped `echo`).
 */
export function namespacedAliases(server: string, fragment: string, wire: string, plan?: NamePlan): string[] {
  const parts = [fragment, wire, `${server}_${fragment}`, `${server}-${fragment}`];
  const out: string[] = [];
  for (const part of parts) {
    if (plan && plan.resolve(part) !== undefined && plan.resolve(part) !== wire) continue;
    const name = `${server}${NAMESPACE_SEPARATOR}${part}`;
    if (!out.includes(name)) out.push(name);
  }
  return out;
}
