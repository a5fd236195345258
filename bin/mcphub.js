#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (`npm run build` in a checkout; shipped in the
// published package, built by `prepack`).
let main;
try {
  ({ main } = await import("../dist/cli/main.js"));
} catch (err) {
  if (err?.code !== "ERR_MODULE_NOT_FOUND" || !String(err.message).includes("dist")) throw err;
  process.stderr.write("mcphub: the CLI is not built yet; run `npm run build` in this checkout first\n");
  process.exit(1);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === "number") process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`mcphub: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
