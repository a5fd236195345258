// What an agent's harness file should contain after a sync.
//  - gateway mode: one `mcphub` entry that launches `mcphub mcp serve [--agent NAME]`, or, when
//    the config sets `listen`, the daemon's URL with this agent's bearer token;
//  - direct mode: the agent's allowed, enabled servers themselves.
import { existsSync, realpathSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CONFIG_FILE_NAMES, defaultConfigDir } from "../config/paths.js";
import { parseListen, type AgentConfig, type Config, type ServerConfig } from "../config/schema.js";
import type { NeutralEntry } from "./types.js";

export const GATEWAY_ENTRY = "mcphub";
/** Stands in for a daemon token that does not exist yet (dry runs never create one). */
export const PENDING_TOKEN = "<new token, created on --write>";

/** How a harness should launch this mcphub install. */
export interface SelfCommand {
  command: string;
  args: string[];
}

/** bin/mcphub.js of this install (src/harness and dist/harness both sit two levels below the root). */
export function installedBin(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "mcphub.js");
}

function realpathOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * `mcphub` when the PATH's mcphub is this very install (short, survives node upgrades); else the
 * absolute node binary running now plus the absolute bin/mcphub.js, which works from any cwd.
 */
export function selfCommand(env: NodeJS.ProcessEnv = process.env): SelfCommand {
  const bin = installedBin();
  const target = realpathOr(bin);
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, "mcphub");
    if (existsSync(candidate) && realpathOr(candidate) === target) return { command: "mcphub", args: [] };
  }
  return { command: process.execPath, args: [bin] };
}

/**
 * `--config PATH` when a harness-launched gateway (no flag, no $MCPHUB_CONFIG, unknown cwd)
 * would not find this config by itself under ~/.config/mcphub.
 */
export function configArgs(configPath: string, home: string): string[] {
  const dir = defaultConfigDir(home);
  for (const name of CONFIG_FILE_NAMES) {
    const p = join(dir, name);
    if (existsSync(p)) return realpathOr(p) === realpathOr(configPath) ? [] : ["--config", configPath];
  }
  return ["--config", configPath];
}

/** An agent with any routing key is scoped: the gateway needs `--agent NAME`. */
export function isScoped(agent: AgentConfig): boolean {
  return (
    agent.servers !== undefined ||
    agent.tools !== undefined ||
    agent.pin !== undefined ||
    agent.tool_schema_budget !== undefined
  );
}

/** The URL a harness uses to reach the daemon (a wildcard bind is reached over loopback). */
export function daemonUrl(listen: string): string {
  const addr = parseListen(listen);
  if (!addr) throw new Error(`listen "${listen}" is not HOST:PORT`);
  let host = addr.host;
  if (host === "0.0.0.0" || host === "") host = "127.0.0.1";
  if (host === "::") host = "::1";
  const hostPart = host.includes(":") ? `[${host}]` : host;
  return `http://${hostPart}:${addr.port}/mcp`;
}

export interface DesiredOptions {
  configPath: string;
  home: string;
  self: SelfCommand;
  /** The agent's daemon token when one is remembered; else PENDING_TOKEN is used. */
  token?: string;
}

export interface DesiredEntries {
  entries: NeutralEntry[];
  /** Servers left out, with the reason (e.g. they need vault secrets a harness cannot supply). */
  skipped: { name: string; reason: string }[];
}

export function desiredEntries(config: Config, agentName: string, agent: AgentConfig, opts: DesiredOptions): DesiredEntries {
  if (agent.mode === "gateway") {
    if (config.listen !== undefined) {
      return {
        entries: [
          {
            name: GATEWAY_ENTRY,
            url: daemonUrl(config.listen),
            transport: "http",
            headers: { Authorization: `Bearer ${opts.token ?? PENDING_TOKEN}` },
          },
        ],
        skipped: [],
      };
    }
    const args = [
      ...opts.self.args,
      ...configArgs(opts.configPath, opts.home),
      "mcp",
      "serve",
      ...(isScoped(agent) ? ["--agent", agentName] : []),
    ];
    return { entries: [{ name: GATEWAY_ENTRY, command: opts.self.command, args }], skipped: [] };
  }
  const allowed = agent.servers ? new Set(agent.servers) : undefined;
  const entries: NeutralEntry[] = [];
  const skipped: DesiredEntries["skipped"] = [];
  for (const [name, server] of Object.entries(config.servers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!server.enabled || (allowed && !allowed.has(name))) continue;
    const problem = directProblem(server);
    if (problem) skipped.push({ name, reason: problem });
    else entries.push(directEntry(name, server));
  }
  return { entries, skipped };
}

function directProblem(s: ServerConfig): string | undefined {
  if (s.vault !== undefined) return `needs secrets from the mcphub vault ("${s.vault}"); use gateway mode for it`;
  if (Object.values(s.headers ?? {}).some((v) => v.startsWith("vault://"))) {
    return "a header comes from the mcphub vault; use gateway mode for it";
  }
  return undefined;
}

function directEntry(name: string, s: ServerConfig): NeutralEntry {
  if (s.url !== undefined) {
    const e: NeutralEntry = { name, url: s.url, transport: s.transport === "sse" ? "sse" : "http" };
    if (s.headers && Object.keys(s.headers).length) e.headers = s.headers;
    return e;
  }
  const e: NeutralEntry = { name, command: s.command ?? "" };
  if (s.args?.length) e.args = s.args;
  if (s.env && Object.keys(s.env).length) e.env = s.env;
  return e;
}
