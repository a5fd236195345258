// `mcphub add NAME COMMAND [ARGS...]`: everything after COMMAND belongs to the server, options
// included (`mcphub add memory npx -y @modelcontextprotocol/server-memory`). Commander would try
// to parse `-y` as an mcphub option, so before parsing, a `--` is put in front of COMMAND: mcphub's
// own options go between NAME and COMMAND. A `--` the user wrote after COMMAND (the older form,
// `mcphub add cortex cortex serve -- --profile all`) is a separator and is dropped; one written
// before COMMAND already ends option parsing and is left alone.
//
// `add`'s options are one table (ADD_OPTIONS): the command registers them from it, and the argv
// split and the "this option went to the server" warning read the same rows, so a new option is
// one row here and nothing else.

export interface AddOption {
  /** Commander flags, e.g. "-e, --env <KEY=VALUE>"; a `<value>` means the option takes a value. */
  flags: string;
  description: string;
  /** Repeatable: collected into a list (default []). */
  repeatable?: boolean;
}

export const ADD_OPTIONS: readonly AddOption[] = [
  { flags: "--url <url>", description: "remote server URL (streamable HTTP by default)" },
  { flags: "--transport <kind>", description: "remote transport: http or sse" },
  { flags: "-e, --env <KEY=VALUE>", description: "environment variable for a stdio server (repeatable)", repeatable: true },
  { flags: "-t, --tag <tag>", description: "tag (repeatable)", repeatable: true },
  { flags: "-d, --description <text>", description: "what the server is for" },
  { flags: "-u, --use-when <hint>", description: "when a model should use it (repeatable, at most 8)", repeatable: true },
  { flags: "--vault <project>", description: "inject the secrets of this vault project as env at spawn" },
  {
    flags: "--sandbox <spec>",
    description: "run it sandboxed: off, on, or network=none|loopback|full, read=PATH, write=PATH, env=NAME (comma-separated, repeatable; see docs/sandbox.md)",
    repeatable: true,
  },
  { flags: "--disabled", description: "add it switched off" },
  { flags: "-f, --force", description: "replace an existing server of that name" },
];

/** The names a row answers to: ["-e", "--env"]. */
function namesOf(o: AddOption): string[] {
  return o.flags
    .split(/[ ,|]+/)
    .filter((p) => p.startsWith("-"));
}

const takesValue = (o: AddOption) => /<[^>]+>|\[[^\]]+\]/.test(o.flags);

/** Global options that take a value, so the command name can be found after them. */
const GLOBAL_VALUE_OPTIONS = ["-c", "--config"];

/** Options of `add` (and global ones) that take a value: their value is not the server command. */
export const ADD_VALUE_OPTIONS: readonly string[] = [...ADD_OPTIONS.filter(takesValue).flatMap(namesOf), ...GLOBAL_VALUE_OPTIONS];

/** mcphub's help flags: after COMMAND they are ambiguous (mcphub's help, or the server's?). */
const HELP_FLAGS = ["-h", "--help"];

/** Where `add` starts in argv (after global options), or -1 when the command is not `add`. */
function addIndex(argv: readonly string[]): number {
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i] as string;
    if (GLOBAL_VALUE_OPTIONS.includes(a)) i++;
    else if (!a.startsWith("-")) break;
  }
  return argv[i] === "add" ? i : -1;
}

/** The index of COMMAND (the second operand of `add`), or -1; -2 when the user wrote `--` before it. */
function commandIndex(argv: readonly string[], add: number): number {
  let operands = 0;
  for (let j = add + 1; j < argv.length; j++) {
    const a = argv[j] as string;
    if (a === "--") return -2;
    if (a.startsWith("-") && a !== "-") {
      if (!a.includes("=") && ADD_VALUE_OPTIONS.includes(a)) j++;
      continue;
    }
    operands++;
    if (operands === 2) return j;
  }
  return -1;
}

export function separateServerCommand(argv: string[]): string[] {
  const add = addIndex(argv);
  if (add < 0) return argv;
  const j = commandIndex(argv, add);
  if (j < 0) return argv;
  const rest = argv.slice(j);
  const sep = rest.indexOf("--");
  if (sep >= 0) rest.splice(sep, 1);
  return [...argv.slice(0, j), "--", ...rest];
}

/**
 * `mcphub add x cmd --help`: a help flag after COMMAND, with no `--` anywhere. It would silently
 * become the server's argument, while the user most likely wanted mcphub's help; undefined when
 * the intent is clear (no help flag there, or an explicit `--` says "pass it on").
 */
export function ambiguousHelpFlag(argv: readonly string[]): { flag: string; command: string } | undefined {
  const add = addIndex(argv);
  if (add < 0) return undefined;
  const j = commandIndex(argv, add);
  if (j < 0) return undefined;
  const rest = argv.slice(j + 1);
  if (rest.includes("--")) return undefined;
  const flag = rest.find((a) => HELP_FLAGS.includes(a));
  return flag === undefined ? undefined : { flag, command: argv[j] as string };
}

/** mcphub's own `add` options that ended up after COMMAND, to warn that the server gets them. */
export function misplacedAddOptions(serverArgs: string[]): string[] {
  const own = ADD_OPTIONS.flatMap(namesOf).filter((n) => n.startsWith("--"));
  return serverArgs.filter((a) => own.includes(a.split("=")[0] ?? ""));
}
