// `mcphub add NAME COMMAND [ARGS...]`: everything after COMMAND belongs to the server, options
// included (`mcphub add memory npx -y @modelcontextprotocol/server-memory`). Commander would try
// to parse `-y` as an mcphub option, so before parsing, a `--` is put in front of COMMAND: mcphub's
// own options go between NAME and COMMAND. A `--` the user wrote after COMMAND (the older form,
// `mcphub add cortex cortex serve -- --profile all`) is a separator and is dropped; one written
// before COMMAND already ends option parsing and is left alone.

/** Options of `add` (and global ones) that take a value: their value is not the server command. */
export const ADD_VALUE_OPTIONS = ["--url", "--transport", "-e", "--env", "-t", "--tag", "-d", "--description", "-u", "--use-when", "--vault", "--sandbox", "-c", "--config"];
/** Global options that take a value, so the command name can be found after them. */
const GLOBAL_VALUE_OPTIONS = ["-c", "--config"];

export function separateServerCommand(argv: string[]): string[] {
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i] as string;
    if (GLOBAL_VALUE_OPTIONS.includes(a)) i++;
    else if (!a.startsWith("-")) break;
  }
  if (argv[i] !== "add") return argv;
  let operands = 0;
  for (let j = i + 1; j < argv.length; j++) {
    const a = argv[j] as string;
    if (a === "--") return argv;
    if (a.startsWith("-") && a !== "-") {
      if (!a.includes("=") && ADD_VALUE_OPTIONS.includes(a)) j++;
      continue;
    }
    operands++;
    if (operands === 2) {
      const rest = argv.slice(j);
      const sep = rest.indexOf("--");
      if (sep >= 0) rest.splice(sep, 1);
      return [...argv.slice(0, j), "--", ...rest];
    }
  }
  return argv;
}

/** mcphub's own `add` options that ended up after COMMAND, to warn that the server gets them. */
export function misplacedAddOptions(serverArgs: string[]): string[] {
  const own = ["--url", "--transport", "--env", "--tag", "--description", "--use-when", "--vault", "--sandbox", "--disabled", "--force"];
  return serverArgs.filter((a) => own.includes(a.split("=")[0] ?? ""));
}
