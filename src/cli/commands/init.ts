// `init`: write a starter config (commented YAML, or TOML/JSON), or with --from-agents import
// the MCP servers the harnesses on this machine already declare and wire those harnesses to the
// gateway.
import { extname } from "node:path";
import type { Command } from "commander";
import YAML from "yaml";
import { resolveConfigPath, writeNewConfig, RESERVED_SERVER_NAME, type ConfigFormat } from "../../config/index.js";
import { scanHarnesses, type NeutralEntry } from "../../harness/index.js";
import { CliError, printJson, type CliIO } from "../context.js";
import { example, globalsOf, guarded, harnessHomeOf, tildify } from "./common.js";

const SERVER_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export const STARTER_YAML = `# mcphub configuration (reference: docs/cli.md and docs/sync.md)
# One gateway in front of many MCP servers. Edit by hand or with \`mcphub add/enable/pin\`.
version: 1

# all: mount every tool as server__tool. lazy: advertise eight management tools plus pins,
# and let the model resolve/describe/call everything else on demand.
expose: lazy

# Results larger than this are stored (encrypted) and returned as a receipt to page through.
response_budget: 32KB

# Tools advertised directly even in lazy mode: "server", "server__*" or "server__tool".
pin: []

servers:
  # A stdio server: command + args (+ env). Everything mcphub knows about it is here.
  memory:
    command: npx
    args: [-y, "@modelcontextprotocol/server-memory"]
    description: A knowledge graph the model can store facts in
    tags: [memory]
    use_when:
      - remembering facts across sessions
    enabled: false

  # A remote server over streamable HTTP (transport: sse for the older protocol).
  # docs:
  #   url: https://example.com/mcp
  #   headers:
  #     Authorization: vault://docs/TOKEN   # resolved from \`mcphub vault set docs/TOKEN\`

groups:
  coding: [memory]

# Harnesses to wire to the gateway with \`mcphub sync --write\` (see \`mcphub agents\`).
agents:
  claude:
    type: claude
    mode: gateway
`;

const FORMAT_EXT: Record<ConfigFormat, string> = { yaml: ".yaml", toml: ".toml", json: ".json" };

interface InitOptions {
  fromAgents?: boolean;
  format?: string;
  force?: boolean;
}

export function registerInit(program: Command, io: CliIO): void {
  program
    .command("init")
    .description("create a config: a commented starter, or --from-agents to import what your harnesses already use")
    .option("--from-agents", "import the MCP servers declared in installed harnesses and wire them to the gateway")
    .option("--format <format>", "yaml (default, commented), toml or json")
    .option("-f, --force", "replace an existing config (a backup is kept)")
    .addHelpText("after", example(["mcphub init", "mcphub init --from-agents", "mcphub --config ./mcphub.toml init --format toml"]))
    .action(async (opts: InitOptions, cmd: Command) => {
      const g = globalsOf(cmd);
      const format = parseFormat(opts.format);
      const env = process.env;
      let path = resolveConfigPath({ ...(g.config ? { explicit: g.config } : {}), env }).path;
      const ext = extname(path).toLowerCase();
      const current = ext === ".yml" ? "yaml" : ext.slice(1);
      if (format !== undefined && format !== current) {
        if (g.config || env.MCPHUB_CONFIG) {
          throw new CliError(`--format ${format} does not match the config path ${path}; use a ${FORMAT_EXT[format]} file name`);
        }
        path = path.slice(0, path.length - ext.length) + FORMAT_EXT[format];
      }
      const home = harnessHomeOf(env);
      if (!opts.fromAgents) {
        await guarded(() => writeNewConfig(path, { yamlText: STARTER_YAML }, { force: Boolean(opts.force) }));
        if (g.json) return printJson(io, { path, imported_servers: 0, agents: [] });
        io.out(`Wrote a starter config to ${tildify(path, home)}. Next: \`mcphub add\`, then \`mcphub sync\`.`);
        return;
      }
      const imported = await importFromAgents(home);
      const raw = { version: 1, expose: "lazy", servers: imported.servers, agents: imported.agents };
      const header = [
        "# mcphub configuration, imported from your harnesses by `mcphub init --from-agents`.",
        `# Sources: ${imported.sources.join(", ") || "none found"}.`,
        "# Preview the harness changes with `mcphub sync`, apply with `mcphub sync --write`.",
      ];
      const yamlText = `${header.join("\n")}\n${YAML.stringify(raw, { lineWidth: 0 })}`;
      await guarded(() => writeNewConfig(path, format === "yaml" || format === undefined ? { yamlText } : { raw }, { force: Boolean(opts.force) }));
      const nServers = Object.keys(imported.servers).length;
      const nAgents = Object.keys(imported.agents).length;
      if (g.json) {
        return printJson(io, { path, imported_servers: nServers, servers: Object.keys(imported.servers), agents: Object.keys(imported.agents), skipped: imported.skipped });
      }
      const lines = [`Imported ${nServers} server${nServers === 1 ? "" : "s"} across ${nAgents} agent${nAgents === 1 ? "" : "s"} into ${tildify(path, home)}`];
      for (const s of imported.skipped) lines.push(`  skipped ${s.name} (${s.source}): ${s.reason}`);
      lines.push("Next: `mcphub sync` to preview, `mcphub sync --write` to switch those harnesses to the gateway.");
      io.out(lines.join("\n"));
    });
}

function parseFormat(text: string | undefined): ConfigFormat | undefined {
  if (text === undefined) return undefined;
  const t = text.toLowerCase() === "yml" ? "yaml" : text.toLowerCase();
  if (t !== "yaml" && t !== "toml" && t !== "json") throw new CliError(`--format "${text}" must be yaml, toml or json`);
  return t;
}

export interface Imported {
  servers: Record<string, Record<string, unknown>>;
  agents: Record<string, { type: string; path: string; mode: "gateway" }>;
  sources: string[];
  skipped: { name: string; source: string; reason: string }[];
}

/** The union of servers declared by installed harnesses (first declaration wins) and one gateway agent per harness. */
export async function importFromAgents(home: string): Promise<Imported> {
  const found = await scanHarnesses(home);
  const out: Imported = { servers: {}, agents: {}, sources: [], skipped: [] };
  for (const h of found) {
    if (h.error) {
      out.skipped.push({ name: "(file)", source: h.adapter.type, reason: h.error });
      continue;
    }
    out.sources.push(h.adapter.type);
    out.agents[h.adapter.type] = { type: h.adapter.type, path: tildify(h.path, home), mode: "gateway" };
    for (const e of h.entries) {
      if (out.servers[e.name] !== undefined) continue; // first declaration wins
      if (!SERVER_NAME_RE.test(e.name) || e.name.includes("__") || e.name.toLowerCase() === RESERVED_SERVER_NAME) {
        out.skipped.push({ name: e.name, source: h.adapter.type, reason: "not a valid mcphub server name" });
        continue;
      }
      out.servers[e.name] = toServer(e);
    }
    for (const name of h.unreadable) out.skipped.push({ name, source: h.adapter.type, reason: "entry not understood" });
  }
  return out;
}

function toServer(e: NeutralEntry): Record<string, unknown> {
  if (e.url !== undefined) {
    return { url: e.url, ...(e.transport === "sse" ? { transport: "sse" } : {}), ...(e.headers ? { headers: e.headers } : {}) };
  }
  return { command: e.command, ...(e.args?.length ? { args: e.args } : {}), ...(e.env ? { env: e.env } : {}) };
}
