#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build`, run by `npm ci` via prepare).
import { main } from "../dist/cli/main.js";

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === "number") process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`mcphub: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
