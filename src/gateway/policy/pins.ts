// Pins: the downstream tools a lazy gateway lists directly beside the management tools. A pin is
// `server` (every tool of it), `server__*` (the same) or an exact `server__tool` in any accepted
// spelling. An agent's own `pin` replaces the global list (omitted = inherit, `[]` = none), and
// what is reported as "effective" is projected through the agent's scope.
import type { Config } from "../../config/schema.js";
import { pinServer } from "../../config/schema.js";
import { namespacedAliases, NAMESPACE_SEPARATOR, stripSelfPrefix, type NamePlan } from "../../catalog/names.js";
import { byteOrder } from "../../util/json/canonical.js";
import { Scope } from "./scope.js";

/** The pin list that applies to an agent before scoping: its own `pin`, else the global one. */
export function configuredPins(config: Config, agentName?: string): string[] {
  const own = agentName === undefined ? undefined : config.agents[agentName]?.pin;
  return [...(own ?? config.pin ?? [])];
}

/**
 * The agent's pins as list_servers reports them and lazy advertisement uses them:
 * - unscoped: the configured pins as written;
 * - scoped by servers only: the pins whose server is in scope;
 * - with an exact tool allowlist: the allowlisted names (as spelled) that some pin matches,
 *   sorted, so a whole-server pin expands to exactly the tools that can be listed.
 * Throws like `new Scope` for an unknown or disabled agent.
 */
export function effectivePins(config: Config, agentName?: string): string[] {
  return scopePins(configuredPins(config, agentName), new Scope(config, agentName));
}

/** `effectivePins` for an already-built scope and pin list. */
export function scopePins(pins: readonly string[], scope: Scope): string[] {
  if (scope.isUnscoped) return [...pins];
  const allowlist = scope.toolAllowlist;
  if (allowlist === undefined) return pins.filter((p) => scope.allowsServer(pinServer(p)));
  return [...new Set(allowlist)]
    .filter((name) => {
      const sep = name.indexOf(NAMESPACE_SEPARATOR);
      const server = name.slice(0, sep);
      return scope.allowsServer(server) && pins.some((p) => pinCoversSpelling(p, server, name.slice(sep + 2)));
    })
    .sort(byteOrder);
}

/**
 * Whether any pin selects this tool. Exact pins may use any alias of the tool (public, wire,
 * legacy stutter); with the server's plan, an alias that names a different tool does not count.
 */
export function pinMatches(pins: readonly string[], server: string, fragment: string, wire: string, plan?: NamePlan): boolean {
  if (pins.length === 0) return false;
  const aliases = namespacedAliases(server, fragment, wire, plan);
  return pins.some((p) => p === server || p === `${server}${NAMESPACE_SEPARATOR}*` || aliases.includes(p));
}

/**
 * Pin-versus-allowlist-entry check when no catalogue is at hand (the entry is only a spelling):
 * whole-server pins match; an exact pin matches when both spellings name the same tool part once a
 * stuttered self-prefix is removed (`bob__bob_plan` ~ `bob__plan`).
 */
function pinCoversSpelling(pin: string, server: string, tool: string): boolean {
  if (pin === server || pin === `${server}${NAMESPACE_SEPARATOR}*`) return true;
  const prefix = server + NAMESPACE_SEPARATOR;
  if (!pin.startsWith(prefix)) return false;
  const pinned = pin.slice(prefix.length);
  return pinned === tool || stripSelfPrefix(server, pinned) === stripSelfPrefix(server, tool);
}
