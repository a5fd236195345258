// The registry of CLI commands: one module per command family, each exporting a register
// function, loaded on demand. A run loads only the module of the command it names (a harness
// starting `mcphub mcp serve` should not pay for the sync adapters, and `mcphub stats` should not
// pay for the gateway); help, an unknown command or no command at all loads every module.
import type { Command } from "commander";
import type { CliIO } from "../context.js";

export type RegisterCommand = (program: Command, io: CliIO) => void;

interface CommandModule {
  /** Top-level command names (and aliases) the module registers. */
  names: string[];
  load: () => Promise<RegisterCommand>;
}

export const COMMAND_MODULES: CommandModule[] = [
  {
    names: ["init", "list", "ls", "add", "remove", "rm", "enable", "disable", "groups", "use", "pin", "unpin", "status", "sync", "offload", "doctor", "agents"],
    load: async () => (await import("./operator.js")).registerOperator,
  },
  { names: ["mcp", "up"], load: async () => (await import("./serve.js")).registerServe },
  { names: ["vault"], load: async () => (await import("./vault.js")).registerVault },
  { names: ["stats"], load: async () => (await import("./stats.js")).registerStats },
  { names: ["token"], load: async () => (await import("./token.js")).registerToken },
  { names: ["auth"], load: async () => (await import("./auth.js")).registerAuth },
  { names: ["open"], load: async () => (await import("./open.js")).registerOpen },
  { names: ["store"], load: async () => (await import("./store.js")).registerStore },
  { names: ["approve"], load: async () => (await import("./approve.js")).registerApprove },
  { names: ["service"], load: async () => (await import("./service.js")).registerService },
];

/** Global options that take a value, so the command name can be found after them. */
const VALUE_OPTIONS = new Set(["-c", "--config"]);

/** The register functions needed for this argv: the named command's module, or all of them. */
export async function commandsFor(argv: string[]): Promise<RegisterCommand[]> {
  let name: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (VALUE_OPTIONS.has(a)) {
      i++;
      continue;
    }
    if (a.startsWith("-")) continue;
    name = a;
    break;
  }
  const wanted = COMMAND_MODULES.filter((m) => name !== undefined && m.names.includes(name));
  return Promise.all((wanted.length ? wanted : COMMAND_MODULES).map((m) => m.load()));
}
