// An error whose message is written for the person at the terminal: the CLI prints it as is
// (no stack) and exits with `exitCode`. It lives here, not in cli/, because lower parts (the
// daemon's listener, for one) refuse to start with such a message and must not import the CLI.
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** Where a command or a long-running listener writes what a person reads. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** True when colour and progress are appropriate (a TTY, and NO_COLOR unset). */
  color: boolean;
}
