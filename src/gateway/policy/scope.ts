// An agent's scope: which servers it may start and see, and which tools it may list or call.
// `mcphub mcp serve --agent NAME` builds one from `agents.NAME`; every surface (server startup,
// tools/list, the management tools, receipts, detached calls) asks the same object. Omitted lists
// mean "all", `[]` means "none". Scope is curation, not a security boundary.
import type { Config } from "../../config/schema.js";
import { namespacedAliases, NAMESPACE_SEPARATOR, type NamePlan } from "../../catalog/names.js";
import { byteOrder } from "../../util/json/canonical.js";

export class Scope {
  /** The agent the scope was built for; undefined when serving without `--agent`. */
  readonly agent?: string;
  /** Exact `server__tool` names from `agents.NAME.tools`, as spelled; undefined = every tool. */
  readonly toolAllowlist?: string[];
  /** True when nothing is restricted (no agent, or an agent without `servers`/`tools`). */
  readonly isUnscoped: boolean;

  private readonly servers?: ReadonlySet<string>;
  private readonly tools?: ReadonlySet<string>;
  /** Servers named by at least one allowlisted tool (only with a tool allowlist). */
  private readonly toolServers?: ReadonlySet<string>;

  /**
   * Builds the scope for `agentName` (none → unscoped). Throws a one-line Error for an unknown
   * or disabled agent, so a stale `--agent` in a harness file fails at startup instead of
   * silently serving everything or nothing.
   */
  constructor(
    private readonly config: Config,
    agentName?: string,
  ) {
    if (agentName === undefined) {
      this.isUnscoped = true;
      return;
    }
    const agent = config.agents[agentName];
    if (agent === undefined) {
      const known = Object.keys(config.agents).sort(byteOrder);
      throw new Error(
        `--agent "${agentName}": no such agent in config ${known.length ? `(configured: ${known.join(", ")})` : "(no agents are configured)"}`,
      );
    }
    if (agent.disabled) {
      throw new Error(`--agent "${agentName}": this agent is disabled in config; set disabled: false to serve it`);
    }
    this.agent = agentName;
    if (agent.servers !== undefined) this.servers = new Set(agent.servers);
    if (agent.tools !== undefined) {
      this.toolAllowlist = [...agent.tools];
      this.tools = new Set(agent.tools);
      this.toolServers = new Set(
        agent.tools.map((t) => t.slice(0, Math.max(0, t.indexOf(NAMESPACE_SEPARATOR)))).filter((s) => s !== ""),
      );
    }
    this.isUnscoped = this.servers === undefined && this.tools === undefined;
  }

  /**
   * Whether the server is in scope at all. With a tool allowlist a server must also own at least
   * one allowlisted tool: starting a server none of whose tools may be used only costs time.
   */
  allowsServer(server: string): boolean {
    if (this.servers !== undefined && !this.servers.has(server)) return false;
    if (this.toolServers !== undefined && !this.toolServers.has(server)) return false;
    return true;
  }

  /**
   * Whether one tool is in scope. Allowlist entries may use any accepted spelling of the tool
   * (public, wire, legacy stutter); pass the server's plan so a stutter alias cannot match a
   * different tool of the same server.
   */
  allowsTool(server: string, fragment: string, wire: string, plan?: NamePlan): boolean {
    if (!this.allowsServer(server)) return false;
    if (this.tools === undefined) return true;
    const tools = this.tools;
    return namespacedAliases(server, fragment, wire, plan).some((alias) => tools.has(alias));
  }

  /** Enabled servers in scope, sorted: the only servers this gateway ever starts. */
  startableServers(): string[] {
    return Object.entries(this.config.servers)
      .filter(([name, server]) => server.enabled && this.allowsServer(name))
      .map(([name]) => name)
      .sort(byteOrder);
  }

  /**
   * The allowlisted names (as spelled, after `server__`) for one server, sorted; undefined when
   * tools are not restricted. Used by the capability summary and list_servers.
   */
  allowedToolNames(server: string): string[] | undefined {
    if (this.toolAllowlist === undefined) return undefined;
    if (!this.allowsServer(server)) return [];
    const prefix = server + NAMESPACE_SEPARATOR;
    return this.toolAllowlist
      .filter((t) => t.startsWith(prefix) && t.length > prefix.length)
      .map((t) => t.slice(prefix.length))
      .sort(byteOrder);
  }
}
