// What every CLI command receives: the global options and a way to print. Commands stay thin:
// they parse their flags, call into config/downstream/catalog/gateway/vault/harness/telemetry,
// and render the answer as text or as --json.
import pc from "picocolors";

export interface GlobalOptions {
  /** --config PATH (else $MCPHUB_CONFIG, ./mcphub.*, ~/.config/mcphub/mcphub.*). */
  config?: string;
  /** --json: machine-readable output on every reading command. */
  json?: boolean;
}

import { CliError, type CliIO } from "../util/user-error.js";

export { CliError, type CliIO };

export const defaultIO: CliIO = {
  out: (t) => process.stdout.write(t.endsWith("\n") ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith("\n") ? t : `${t}\n`),
  color: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR,
};

/** An error meant for the user: printed as one line, no stack trace, non-zero exit. */
export function printJson(io: CliIO, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}

export function colors(io: CliIO) {
  return pc.createColors(io.color);
}
