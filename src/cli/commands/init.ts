// `init`: write a starter config (commented YAML, or TOML/JSON), or with --from-agents import
// the MCP servers the harnesses on this machine already declare and wire those harnesses to the
// gateway.
import { existsSync } from "node:fs";
import { extname } from "node:path";
import type { Command } from "commander";
import YAML from "yaml";
import { resolveConfigPath, writeNewConfig, type ConfigFormat } from "../../config/index.js";
import { allAdapters, harnessInstalled, scanHarnesses } from "../../harness/index.js";
import { planImport } from "../../harness/import.js";
import { openKeyring } from "../../vault/keys.js";
import { SecretStore } from "../../vault/secrets.js";
import { CliError, printJson, type CliIO } from "../context.js";
import { dataDirOf, example, globalsOf, guarded, harnessHomeOf, tildify } from "./common.js";

/** The starter config: every server commented out (nothing runs until you add one), one agent per installed harness. */
export function starterYaml(agents: { name: string; type: string }[]): string {
  const agentBlock = `agents:\n${agents.map((a) => `  ${a.name}:\n    type: ${a.type}\n    mode: gateway`).join("\n")}\n`;
  return `# mcphub configuration (reference: docs/config.md, docs/cli.md and docs/sync.md)
# One gateway in front of many MCP servers. Edit by hand or with \`mcphub add/enable/pin\`.
version: 1

# all: mount every tool as server__tool. lazy: advertise eight management tools plus pins,
# and let the model resolve/describe/call everything else on demand.
expose: lazy

# Results larger than this are stored (encrypted) and returned as a receipt to page through.
response_budget: 32KB

# Tools advertised directly even in lazy mode: "server", "server__*" or "server__tool".
pin: []

# No servers yet: add them with \`mcphub add\`, e.g.
#   mcphub add memory npx -y @modelcontextprotocol/server-memory
#   mcphub add docs --url https://example.com/mcp
# A remote server's secret header comes from the vault (\`mcphub vault set docs/TOKEN\`):
#   docs:
#     url: https://example.com/mcp
#     headers:
#       Authorization: vault://docs/TOKEN
servers: {}

# Harnesses to wire to the gateway with \`mcphub sync --write\` (see \`mcphub agents\`).
${agentBlock}`;
}

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
      const force = Boolean(opts.force);
      if (!force && existsSync(path)) {
        throw new CliError(`a config already exists at ${path}; pass --force to replace it (the old one is kept as a backup)`);
      }
      if (!opts.fromAgents) {
        const agents: { name: string; type: string; path: string }[] = [];
        for (const adapter of allAdapters()) {
          if (await harnessInstalled(adapter, home)) agents.push({ name: adapter.type, type: adapter.type, path: adapter.defaultPath(home) });
        }
        // Nothing found: Claude Code is the likeliest harness, and saying so beats an empty sync.
        const assumed = agents.length === 0;
        const claude = allAdapters().find((a) => a.type === "claude");
        if (assumed && claude) agents.push({ name: "claude", type: "claude", path: claude.defaultPath(home) });
        await guarded(() => writeNewConfig(path, { yamlText: starterYaml(agents) }, { force }));
        const declared = (await scanHarnesses(home)).reduce((n, h) => n + h.entries.length, 0);
        if (g.json) return printJson(io, { path, servers: [], enabled: [], agents: agents.map((a) => a.name), harness_servers: declared });
        const lines = [
          `Wrote a starter config to ${tildify(path, home)}`,
          "  servers  none yet, so nothing is enabled (examples are commented in the file)",
          `  agents   ${agents.map((a) => `${a.name} (${tildify(a.path, home)})`).join(", ")}: gateway mode${assumed ? " (no harness was found here, so Claude Code is assumed; edit agents: in the file, see `mcphub agents`)" : ""}`,
          "Next:",
          "  mcphub add memory npx -y @modelcontextprotocol/server-memory    # or any MCP server",
          `  mcphub sync --write                                            # wires ${agents.map((a) => a.name).join(", ")} to the gateway`,
        ];
        if (declared > 0) {
          lines.push(`Your harnesses already declare ${declared} server${declared === 1 ? "" : "s"}: \`mcphub init --from-agents --force\` imports them instead.`);
        }
        io.out(lines.join("\n"));
        return;
      }
      const imported = await planImport(home, (p) => tildify(p, home));
      // The secrets go into the vault first: a config must never refer to a secret that is not there.
      const data = dataDirOf(env);
      let vaultLine: string | undefined;
      const replaced: string[] = [];
      if (imported.secrets.length) {
        let store;
        try {
          const keyring = await openKeyring(data, env);
          store = await SecretStore.open({ dataDir: data, env, keyring });
          vaultLine = `vault key: ${keyring.status.detail.split(home).join("~")}${keyring.status.warning ? ` (warning: ${keyring.status.warning})` : ""}`;
        } catch (err) {
          throw new CliError(
            `${imported.secrets.length} secret${imported.secrets.length === 1 ? "" : "s"} found in harness files must go into the vault, which cannot be opened (${(err as Error).message.split("\n")[0]}); nothing was written`,
          );
        }
        for (const sec of imported.secrets) {
          const before = await store.get(sec.ref);
          if (before !== undefined && before !== sec.value) replaced.push(sec.ref);
          await store.set(sec.ref, sec.value);
        }
      }
      const raw = { version: 1, expose: "lazy", servers: imported.servers, agents: imported.agents };
      const header = [
        "# mcphub configuration, imported from your harnesses by `mcphub init --from-agents`.",
        `# Sources: ${imported.sources.join(", ") || "none found"}.`,
        ...imported.notes.filter((n) => n.kind !== "skipped").map((n) => `# - ${n.text}`),
        "# Preview the harness changes with `mcphub sync`, apply with `mcphub sync --write --yes`.",
      ];
      const yamlText = `${header.join("\n")}\n${YAML.stringify(raw, { lineWidth: 0 })}`;
      await guarded(() => writeNewConfig(path, format === "yaml" || format === undefined ? { yamlText } : { raw }, { force }));
      const nServers = Object.keys(imported.servers).length;
      const nAgents = Object.keys(imported.agents).length;
      if (g.json) {
        return printJson(io, {
          path,
          imported_servers: nServers,
          servers: Object.keys(imported.servers),
          agents: Object.keys(imported.agents),
          sources: imported.perSource.map((p) => ({ agent: p.source, path: p.path, servers: p.servers })),
          secrets: imported.secrets.map((s) => ({ ref: s.ref, from: s.from })),
          notes: imported.notes.map(({ source, name, kind, as, text }) => ({ source, name, kind, ...(as ? { as } : {}), text })),
          skipped: imported.notes.filter((n) => n.kind === "skipped").map((n) => ({ name: n.name, source: n.source, reason: n.text })),
        });
      }
      const lines = [`Imported ${nServers} server${nServers === 1 ? "" : "s"} across ${nAgents} agent${nAgents === 1 ? "" : "s"} into ${tildify(path, home)}`];
      for (const p of imported.perSource) {
        const list = p.servers.map((x) => (x.as === x.name ? x.name : `${x.name} → ${x.as}`)).join(", ") || "(no servers)";
        lines.push(`  ${p.source.padEnd(12)} ${tildify(p.path, home)}: ${list}`);
      }
      for (const n of imported.notes) lines.push(`  ${n.kind === "secret" ? "secret" : n.kind === "skipped" ? "skipped" : n.kind === "warning" ? "warning" : "note"}: ${n.text}`);
      if (imported.secrets.length) {
        lines.push(`  The config refers to ${imported.secrets.length === 1 ? "it" : "them"} as vault://SERVER/KEY (env secrets through vault: SERVER); the harness files still hold the plaintext until sync removes those entries.`);
        if (replaced.length) lines.push(`  replaced what the vault held before under ${replaced.join(", ")}`);
        if (vaultLine) lines.push(`  ${vaultLine}`);
      }
      lines.push(
        nServers
          ? "Next: `mcphub sync` to preview, `mcphub sync --write --yes` to switch those harnesses to the gateway and remove the entries it now serves (a backup is kept; `mcphub sync --rollback PLAN` undoes it)."
          : "Next: `mcphub add NAME COMMAND [ARGS...]`, then `mcphub sync --write`.",
      );
      io.out(lines.join("\n"));
    });
}

function parseFormat(text: string | undefined): ConfigFormat | undefined {
  if (text === undefined) return undefined;
  const t = text.toLowerCase() === "yml" ? "yaml" : text.toLowerCase();
  if (t !== "yaml" && t !== "toml" && t !== "json") throw new CliError(`--format "${text}" must be yaml, toml or json`);
  return t;
}

