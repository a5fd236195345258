// Server commands: list, add, remove, enable, disable. Each edit goes through editConfig, which
// validates the whole result before writing (so a bad value writes nothing) and keeps YAML
// comments and a backup.
import type { Command } from "commander";
import { editConfig, pinServer, type ServerConfig } from "../../config/index.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import { absolutizeTyped } from "../../config/relative-paths.js";
import { SENSITIVE_NAME_RE } from "../../downstream/sanitize.js";
import { findCommand } from "../../downstream/stdio/spawn-plan.js";
import { ADD_OPTIONS, misplacedAddOptions } from "../add-argv.js";
import { parseSandboxSpecs } from "../sandbox-spec.js";
import { CatalogCache } from "../../catalog/cache/store.js";
import { collect, example, globalsOf, guarded, load, nextSteps, parseEnvPairs, requireServer, table } from "./common.js";
import { withConfiguredStore } from "./shared-store.js";

function target(s: ServerConfig): string {
  if (s.url !== undefined) return `${s.url}${s.transport === "sse" ? " (sse)" : ""}`;
  return [s.command ?? "", ...(s.args ?? [])].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(" ");
}

export function listView(name: string, s: ServerConfig) {
  return {
    name,
    enabled: s.enabled,
    kind: s.url !== undefined ? "remote" : "stdio",
    ...(s.command !== undefined ? { command: s.command, args: s.args ?? [] } : {}),
    ...(s.url !== undefined ? { url: s.url, transport: s.transport ?? "http" } : {}),
    // Values may be secrets: show only the names.
    ...(s.env ? { env_keys: Object.keys(s.env).sort() } : {}),
    ...(s.headers ? { header_keys: Object.keys(s.headers).sort() } : {}),
    ...(s.vault ? { vault: s.vault } : {}),
    ...(s.sandbox !== undefined ? { sandbox: s.sandbox === false ? "off" : s.sandbox } : {}),
    tags: s.tags ?? [],
    description: s.description ?? "",
    use_when: s.use_when ?? [],
  };
}

export function registerServers(program: Command, io: CliIO): void {
  program
    .command("list")
    .alias("ls")
    .description("list configured servers")
    .addHelpText("after", example(["mcphub list", "mcphub list --json"]))
    .action(async (_opts: object, cmd: Command) => {
      const { config } = await load(cmd);
      const names = Object.keys(config.servers).sort();
      if (globalsOf(cmd).json) return printJson(io, names.map((n) => listView(n, config.servers[n] as ServerConfig)));
      if (names.length === 0) return io.out("No servers configured. Add one with `mcphub add NAME COMMAND [ARGS...]`.");
      const c = colors(io);
      const rows = names.map((n) => {
        const s = config.servers[n] as ServerConfig;
        return [
          n,
          s.enabled ? c.green("on") : c.dim("off"),
          s.url !== undefined ? "remote" : "stdio",
          `${target(s)}${s.vault ? ` [vault:${s.vault}]` : ""}`,
          (s.tags ?? []).join(","),
          s.description ?? "",
        ];
      });
      io.out(table(["SERVER", "STATE", "KIND", "TARGET", "TAGS", "DESCRIPTION"], rows));
    });

  const add = program
    .command("add")
    .description("add a server (stdio: NAME COMMAND [ARGS...]; remote: NAME --url URL)")
    .argument("<name>", "server name (letters, digits, '.', '_', '-')")
    .argument("[command]", "the command that starts a stdio server; everything after it is passed to the server")
    .argument("[args...]", "its arguments, options included (mcphub's own options go before COMMAND)");
  for (const o of ADD_OPTIONS) {
    if (o.repeatable) add.option(o.flags, o.description, collect, []);
    else add.option(o.flags, o.description);
  }
  add
    .addHelpText(
      "after",
      [
        "\nA relative path typed here (COMMAND like ./bin/server, or an argument ., .., ./x, ../x) means",
        "your current folder, as it would at the shell: it is stored as an absolute path, and add says so.",
        "(In the config file itself, relative paths are relative to the config file's folder.)",
        "A -h/--help after COMMAND is refused unless you write -- before COMMAND (then the server gets it).",
        example([
          "mcphub add memory npx -y @modelcontextprotocol/server-memory",
          "mcphub add cortex cortex serve --profile all        # --profile all goes to cortex",
          "mcphub add here npx -y @modelcontextprotocol/server-filesystem .   # . = this folder, stored absolute",
          "mcphub add github --url https://api.githubcopilot.com/mcp --tag code",
          "mcphub add notes --env NOTES_DIR=/srv/notes --use-when \"reading my notes\" notes-mcp serve",
          "mcphub add files --sandbox network=none,write=~/projects npx -y @modelcontextprotocol/server-filesystem ~/projects",
          "mcphub add legacy --sandbox off ./bin/legacy-server   # not sandboxed even under a top-level default",
          "mcphub add x -- some-server --help                  # --help goes to some-server",
        ]),
      ].join("\n"),
    )
    .action(async (name: string, command: string | undefined, rawArgs: string[], opts: AddOptions, cmd: Command) => {
      refuseSecretArgs(rawArgs);
      // Typed at a shell, a relative path means the shell's folder: store it absolute.
      const typed = command !== undefined ? absolutizeTyped(command, rawArgs, process.cwd()) : { command, args: rawArgs, changed: [] };
      const server = buildServer(typed.command, typed.args, opts);
      const loaded = await load(cmd);
      if (loaded.config.servers[name] !== undefined && !opts.force) {
        throw new CliError(`server "${name}" already exists; pass --force to replace it`);
      }
      await guarded(() => editConfig(loaded.path, (ed) => ed.set(["servers", name], server)));
      const kind = server.url !== undefined ? "remote" : "stdio";
      const stored = typed.changed.length ? ` Stored ${typed.changed.map((c) => `${c.what} ${JSON.stringify(c.typed)} as ${c.stored}`).join(", ")} (a relative path typed here means the current folder).` : "";
      io.out(`${loaded.config.servers[name] ? "Replaced" : "Added"} ${kind} server ${name}${opts.disabled ? " (disabled)" : ""}.${stored} ${await nextSteps(loaded)}`);
      for (const w of addWarnings(typed.command, typed.args, server)) io.err(`mcphub: warning: ${w}`);
    });

  program
    .command("remove")
    .alias("rm")
    .description("remove a server, and every pin, group member and agent list entry naming it")
    .argument("<name...>", "server name(s)")
    .addHelpText("after", example(["mcphub remove memory", "mcphub rm old-a old-b"]))
    .action(async (names: string[], _opts: object, cmd: Command) => {
      const loaded = await load(cmd);
      for (const n of names) requireServer(loaded.config, n);
      const gone = new Set(names);
      const pruned: string[] = [];
      await guarded(() =>
        editConfig(loaded.path, (ed) => {
          for (const n of names) ed.delete(["servers", n]);
          const prune = (path: (string | number)[], keep: (v: string) => boolean, label: string) => {
            const list = ed.get(path);
            if (!Array.isArray(list)) return;
            const kept = list.filter((v) => typeof v !== "string" || keep(v));
            if (kept.length !== list.length) {
              ed.set(path, kept);
              pruned.push(label);
            }
          };
          const notGone = (v: string) => !gone.has(pinServer(v));
          prune(["pin"], notGone, "pin");
          const raw = ed.raw() as { groups?: Record<string, unknown>; agents?: Record<string, unknown> } | null;
          for (const g of Object.keys(raw?.groups ?? {})) prune(["groups", g], (v) => !gone.has(v), `groups.${g}`);
          for (const a of Object.keys(raw?.agents ?? {})) {
            prune(["agents", a, "servers"], (v) => !gone.has(v), `agents.${a}.servers`);
            prune(["agents", a, "tools"], notGone, `agents.${a}.tools`);
            prune(["agents", a, "pin"], notGone, `agents.${a}.pin`);
          }
        }),
      );
      // A removed server's cached catalogue goes with it.
      // (The configured store's: every replica's cache in team mode; unreachable, it is left.)
      await withConfiguredStore(loaded.config, async (store) => {
        const cache = new CatalogCache(store);
        await Promise.all(names.map((n) => cache.remove(n).catch(() => undefined)));
      }, { follow: false }).catch(() => undefined);
      io.out(`Removed ${names.join(", ")}${pruned.length ? ` (also pruned ${pruned.join(", ")})` : ""}. ${await nextSteps(loaded)}`);
    });

  for (const [verb, enabled] of [
    ["enable", true],
    ["disable", false],
  ] as const) {
    program
      .command(verb)
      .description(`${verb} server(s)`)
      .argument("<name...>", "server name(s)")
      .addHelpText("after", example([`mcphub ${verb} memory`, `mcphub ${verb} github memory`]))
      .action(async (names: string[], _opts: object, cmd: Command) => {
        const loaded = await load(cmd);
        for (const n of names) requireServer(loaded.config, n);
        await guarded(() => editConfig(loaded.path, (ed) => names.forEach((n) => ed.set(["servers", n, "enabled"], enabled))));
        io.out(`${names.join(", ")} ${enabled ? "enabled" : "disabled"}. ${await nextSteps(loaded)}`);
      });
  }
}

/**
 * `mcphub add s s-mcp --env API_TOKEN=x` (mcphub's option written after the command) would hand
 * the secret to the server as a command-line argument, visible in `ps`: refused, with the fix.
 */
function refuseSecretArgs(args: string[]): void {
  args.forEach((a, i) => {
    const pair = a === "--env" || a === "-e" ? args[i + 1] : a.startsWith("--env=") ? a.slice(6) : undefined;
    const key = pair?.split("=")[0] ?? "";
    if (pair?.includes("=") && SENSITIVE_NAME_RE.test(key)) {
      throw new CliError(`refusing "--env ${key}=…" after the command: it would reach the server as a command-line argument (visible in ps); put mcphub's options before COMMAND, e.g. mcphub add NAME --env ${key}=… COMMAND`);
    }
  });
}

/** What is worth knowing right after `add`: a command that will not start, options it took. */
function addWarnings(command: string | undefined, args: string[], server: Record<string, unknown>): string[] {
  if (command === undefined) return [];
  const out: string[] = [];
  const env = { ...process.env, ...((server.env as Record<string, string> | undefined) ?? {}) };
  if (!findCommand({ command, platform: process.platform, env })) {
    out.push(
      /[\\/]/.test(command)
        ? `command "${command}" does not exist or is not executable; the server will fail to start`
        : `command "${command}" was not found on PATH; the server will fail to start until it is installed (or give its full path)`,
    );
  }
  for (const o of misplacedAddOptions(args)) {
    out.push(`"${o}" comes after the command, so it is passed to the server; mcphub's own options go before COMMAND`);
  }
  return out;
}

interface AddOptions {
  url?: string;
  transport?: string;
  env: string[];
  tag: string[];
  description?: string;
  useWhen: string[];
  vault?: string;
  sandbox: string[];
  disabled?: boolean;
  force?: boolean;
}

/** The server entry `add` writes; every flag combination is checked before the config is read. */
function buildServer(command: string | undefined, args: string[], o: AddOptions): Record<string, unknown> {
  const server: Record<string, unknown> = {};
  if (o.url !== undefined) {
    if (command !== undefined) throw new CliError("give either a command (stdio server) or --url (remote server), not both");
    if (o.env.length) throw new CliError("--env applies only to stdio servers; a remote server takes headers in the config");
    if (o.vault !== undefined) throw new CliError("--vault applies only to stdio servers");
    if (o.sandbox.length) throw new CliError("--sandbox applies only to stdio servers (a remote server runs elsewhere)");
    server.url = o.url;
    if (o.transport !== undefined) {
      if (o.transport !== "http" && o.transport !== "sse") throw new CliError(`--transport "${o.transport}" must be http or sse`);
      server.transport = o.transport;
    }
  } else {
    if (command === undefined) throw new CliError("missing the server command; use `mcphub add NAME COMMAND [ARGS...]` or `mcphub add NAME --url URL`");
    if (o.transport !== undefined) throw new CliError("--transport applies only with --url");
    server.command = command;
    if (args.length) server.args = args;
    if (o.env.length) server.env = parseEnvPairs(o.env);
    if (o.vault !== undefined) server.vault = o.vault;
    const sandbox = parseSandboxSpecs(o.sandbox);
    if (sandbox !== undefined) server.sandbox = sandbox === false ? "off" : Object.keys(sandbox).length === 0 ? "on" : sandbox;
  }
  if (o.description !== undefined) server.description = o.description;
  if (o.tag.length) server.tags = o.tag;
  if (o.useWhen.length) server.use_when = o.useWhen;
  if (o.disabled) server.enabled = false;
  return server;
}
