#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (`npm run build` in a checkout; shipped in the
// published package, built by `prepack`). dist/bundle/mcphub.js is the same code in one file,
// which starts faster; it is used only when it is at least as new as dist/cli/main.js, so a
// tsc-only rebuild never runs stale code. MCPHUB_NO_BUNDLE=1 forces the unbundled modules.
import { statSync } from "node:fs";

const plain = new URL("../dist/cli/main.js", import.meta.url);
const bundle = new URL("../dist/bundle/mcphub.js", import.meta.url);

function entry() {
  if (process.env.MCPHUB_NO_BUNDLE) return plain;
  try {
    return statSync(bundle).mtimeMs >= statSync(plain).mtimeMs ? bundle : plain;
  } catch {
    return plain;
  }
}

let main;
try {
  ({ main } = await import(entry().href));
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
