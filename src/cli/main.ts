// Entry point of the `mcphub` command. It builds the commander program from one module per
// command (src/cli/commands/*.ts, each exporting `register`) and turns every failure into one
// readable line and a non-zero exit code: never a stack trace.
import { Command, CommanderError } from "commander";
import { separateServerCommand } from "./add-argv.js";
import { CliError, defaultIO, type CliIO } from "./context.js";
import { commandsFor, type RegisterCommand } from "./commands/index.js";
import { VERSION } from "../version.js";

export function buildProgram(io: CliIO, commands: RegisterCommand[]): Command {
  const program = new Command("mcphub")
    .description("A lazy MCP aggregation gateway: one namespaced catalogue behind eight management tools.")
    .version(`mcphub ${VERSION}`, "-V, --version")
    .option("-c, --config <path>", "config file (default: $MCPHUB_CONFIG, ./mcphub.yaml, ~/.config/mcphub/mcphub.yaml)")
    .option("--json", "print machine-readable JSON")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, "")),
      writeErr: (s) => io.err(s.replace(/\n$/, "")),
      // Commander prints "error: ..." itself; keep it to one line.
      outputError: (s, write) => write(s.split("\n").filter(Boolean)[0] ?? s),
    });
  for (const register of commands) register(program, io);
  // Sub-commands inherit the one-line error behaviour.
  const apply = (cmd: Command) => {
    cmd.exitOverride().showSuggestionAfterError(true);
    cmd.configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, "")),
      writeErr: (s) => io.err(s.replace(/\n$/, "")),
      outputError: (s, write) => write(s.split("\n").filter(Boolean)[0] ?? s),
    });
    cmd.commands.forEach(apply);
  };
  program.commands.forEach(apply);
  return program;
}

export async function main(argv: string[], io: CliIO = defaultIO): Promise<number> {
  try {
    const program = buildProgram(io, await commandsFor(argv));
    await program.parseAsync(separateServerCommand(argv), { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit with code 0; usage errors were already printed as one line.
      return err.exitCode;
    }
    if (err instanceof CliError) {
      io.err(`mcphub: ${err.message}`);
      return err.exitCode;
    }
    io.err(`mcphub: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
