// Runs the CLI straight from src/ (through tsx), so CLI tests exercise the current sources
// without a build. test/helpers/cli.ts spawns this unless MCPHUB_TEST_CLI=bin.
import { main } from "../../src/cli/main.js";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mcphub: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
