// Small questions the rest of mcphub asks of a validated config.
import type { AgentConfig, Config, ServerConfig, StartMode } from "./schema.js";
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

/** The server's effective start mode: its own `start`, else the top-level default. */
export function startModeOf(config: Config, server: ServerConfig): StartMode {
  return server.start ?? config.start;
}

/**
 * The server's effective idle timeout in ms (0 = never stopped for idleness): its own
 * `idle_timeout`, else the top-level one, except that an `eager` server is kept running unless it
 * sets its own (eager means "always up", the behaviour before start-on-first-use existed).
 */
export function idleTimeoutOf(config: Config, server: ServerConfig): number {
  if (server.idle_timeout !== undefined) return server.idle_timeout;
  return startModeOf(config, server) === "eager" ? 0 : config.idle_timeout;
}
