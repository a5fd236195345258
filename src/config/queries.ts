// Small questions the rest of mcphub asks of a validated config.
import type { AgentConfig, Config, ServerConfig } from "./schema.js";
import { ConfigError } from "./errors.js";

export type ServerKind = "stdio" | "remote";

/** The enabled servers as [name, server] pairs, sorted by name (a stable order for everyone). */
export function enabledServers(config: Config): [name: string, server: ServerConfig][] {
  return Object.entries(config.servers)
    .filter(([, s]) => s.enabled)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** "remote" for a server with a url, "stdio" for one with a command. */
export function serverKind(server: ServerConfig): ServerKind {
  return server.url !== undefined ? "remote" : "stdio";
}

/** The agent named by `--agent NAME`; an unknown name is an error that lists the known ones. */
export function resolveAgent(config: Config, name: string): AgentConfig {
  const agent = Object.hasOwn(config.agents, name) ? config.agents[name] : undefined;
  if (agent !== undefined) return agent;
  const known = Object.keys(config.agents).sort();
  const list = known.length > 0 ? `configured: ${known.join(", ")}` : "no agents are configured";
  throw ConfigError.message(`--agent "${name}": no such agent in config (${list})`);
}
