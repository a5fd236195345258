// When are a harness entry and a gateway server the same MCP server? By what they run or reach:
// command, args, url and the *names* of their env variables, never by name alone. Names clash
// across harnesses (Cursor's `memory` need not be Claude's `memory`), and values may differ only
// because mcphub moved a secret into its vault (`GITHUB_TOKEN` is then a vault secret, not a
// literal): so values are left out, names kept.
import type { AgentConfig, Config, ServerConfig } from "../config/schema.js";
import type { NeutralEntry } from "./types.js";

/** The identity of a harness entry, as a canonical string. */
export function entryIdentity(e: NeutralEntry): string {
  return identity(e.command, e.args, e.url, Object.keys(e.env ?? {}));
}

/** The identity of a configured server: its env names include the vault secrets it is given by name. */
export function serverIdentity(s: ServerConfig): string {
  const names = [...Object.keys(s.env ?? {}), ...(s.vault !== undefined ? (s.vault_only ?? []) : [])];
  return identity(s.command, s.args, s.url, names);
}

function identity(command: string | undefined, args: string[] | undefined, url: string | undefined, envNames: string[]): string {
  if (url !== undefined) return JSON.stringify({ url: normalizeUrl(url) });
  return JSON.stringify({ command: command ?? "", args: args ?? [], env: [...new Set(envNames)].sort() });
}

/** `https://x/mcp/` and `https://x/mcp` are one endpoint; so are `HTTPS://X` and `https://x`. */
function normalizeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}${u.search}`;
  } catch {
    return url;
  }
}

/** What a server runs or reaches, for messages ("npx -y @modelcontextprotocol/server-memory"). */
export function describeTarget(e: { command?: string | undefined; args?: string[] | undefined; url?: string | undefined }): string {
  if (e.url !== undefined) return e.url;
  return [e.command ?? "", ...(e.args ?? [])].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(" ");
}

export interface Duplicate {
  /** The entry's name in the harness file. */
  name: string;
  /** The gateway server that runs the same thing (its name may differ). */
  server: string;
}

export interface NameClash {
  /** The entry's name in the harness file, which is also a configured server's name. */
  name: string;
  /** What the entry runs, and what the gateway's server of that name runs. */
  entry: string;
  server: string;
}

/**
 * Entries of a gateway agent's harness file that the gateway already serves to that agent (an
 * enabled server in its scope with the same identity): the model would see their tools twice.
 * Also the entries that only share a name with a server: those are different servers and stay.
 */
export function findDuplicates(
  config: Config,
  agent: AgentConfig,
  entries: Iterable<NeutralEntry>,
  skip: ReadonlySet<string>,
): { duplicates: Duplicate[]; clashes: NameClash[] } {
  const allowed = agent.servers ? new Set(agent.servers) : undefined;
  const served = new Map<string, string>();
  for (const [name, s] of Object.entries(config.servers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!s.enabled || (allowed && !allowed.has(name))) continue;
    const id = serverIdentity(s);
    if (!served.has(id)) served.set(id, name);
  }
  const duplicates: Duplicate[] = [];
  const clashes: NameClash[] = [];
  for (const e of entries) {
    if (skip.has(e.name)) continue;
    const server = served.get(entryIdentity(e));
    if (server !== undefined) duplicates.push({ name: e.name, server });
    else {
      const same = config.servers[e.name];
      if (same && same.enabled) clashes.push({ name: e.name, entry: describeTarget(e), server: describeTarget(same) });
    }
  }
  return { duplicates, clashes };
}
