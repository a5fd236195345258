// The CLI, the top of the house: it parses argv, calls the parts below (config, serve, gateway,
// vault, harness, telemetry...) and renders text or --json; no business logic lives here, and
// nothing under src/ imports it (bin/mcphub.js runs this module, the bundle starts from it).
//
// Entry point of the `mcphub` command. It builds the commander program from one module per
// command (src/cli/commands/*.ts, each exporting `register`) and turns every failure into one
// readable line and a non-zero exit code: never a stack trace.
import { Command, CommanderError } from "commander";
import { ambiguousHelpFlag, separateServerCommand } from "./add-argv.js";
import { CliError, defaultIO, type CliIO } from "./context.js";
import { commandsFor, type RegisterCommand } from "./commands/index.js";
import { VERSION } from "../version.js";

/** With --json, a failure is a JSON document on stdout too: `{"error": "..."}`. */
function jsonError(io: CliIO, message: string): void {
  io.out(JSON.stringify({ error: message }));
}

export function buildProgram(io: CliIO, commands: RegisterCommand[], json = false): Command {
  const program = new Command("mcphub")
    .description("A lazy MCP aggregation gateway: one namespaced catalogue behind eight management tools.")
    .version(`mcphub ${VERSION}`, "-V, --version")
    .option("-c, --config <path>", "config file (default: $MCPHUB_CONFIG, ./mcphub.yaml, ~/.config/mcphub/mcphub.yaml)")
    .option("--json", "print machine-readable JSON")
    .showSuggestionAfterError(true)
    .addHelpText(
      "after",
      "\nExamples:\n  mcphub init\n  mcphub add memory npx -y @modelcontextprotocol/server-memory\n  mcphub sync --write\n  mcphub doctor --probe\n  mcphub up",
    )
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, "")),
      writeErr: (s) => io.err(s.replace(/\n$/, "")),
      // Commander prints "error: ..." itself; keep it to one line.
      outputError: (s, write) => (json ? jsonError(io, oneLine(s).replace(/^error: /, "")) : write(oneLine(s))),
    });
  for (const register of commands) register(program, io);
  // Sub-commands inherit the one-line error behaviour.
  const apply = (cmd: Command) => {
    cmd.exitOverride().showSuggestionAfterError(true);
    cmd.configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, "")),
      writeErr: (s) => io.err(s.replace(/\n$/, "")),
      outputError: (s, write) => (json ? jsonError(io, oneLine(s).replace(/^error: /, "")) : write(oneLine(s))),
    });
    cmd.commands.forEach(apply);
  };
  program.commands.forEach(apply);
  return program;
}

/**
 * Commander's error as one line. Its did-you-mean comes on a line of its own
 * ("error: unknown option '--agnet'\n(Did you mean --agent?)"): it is kept, joined to the error.
 */
export function oneLine(s: string): string {
  const lines = s.split("\n").map((l) => l.trim()).filter(Boolean);
  const first = lines[0] ?? s;
  const hint = lines.slice(1).find((l) => /^\(Did you mean /.test(l));
  return hint ? `${first} ${hint.replace(/^\(Did/, "(did")}` : first;
}

export async function main(argv: string[], io: CliIO = defaultIO): Promise<number> {
  // Before `--` only: after it, "--json" would be an argument of a server being added.
  const args = separateServerCommand(argv);
  const cut = args.indexOf("--");
  const json = (cut === -1 ? args : args.slice(0, cut)).includes("--json");
  try {
    const help = ambiguousHelpFlag(argv);
    if (help) {
      throw new CliError(
        `"${help.flag}" after the command would be passed to the server (${help.command} ${help.flag}), not shown by mcphub; for mcphub's help run \`mcphub add --help\`; to pass ${help.flag} to the server, put -- before the command: mcphub add NAME -- ${help.command} ... ${help.flag}`,
      );
    }
    const program = buildProgram(io, await commandsFor(argv), json);
    await program.parseAsync(args, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit with code 0; usage errors were already printed as one line.
      return err.exitCode;
    }
    const message = err instanceof Error ? err.message : String(err);
    if (json) jsonError(io, message);
    else io.err(`mcphub: ${message}`);
    return err instanceof CliError ? err.exitCode : 1;
  }
}
