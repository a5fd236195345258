#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (`npm run build` in a checkout; shipped in the
// published package, built by `prepack`). dist/bundle/mcphub.cjs is the same code in one file,
// which starts faster; it is used only when it is at least as new as dist/cli/main.js, so a
// tsc-only rebuild never runs stale code. MCPHUB_NO_BUNDLE=1 forces the unbundled modules.
//
// The bundle runs as a vm.Script with V8's code cache: a harness starts one gateway per session
// and wants its first answer at once, and compiling the bundle (plus every function the start
// runs) is about a third of that start's CPU. The cache is written once, a moment after a start
// that had none (or whose cache V8 rejected: another Node, other flags, a rebuilt bundle), to
// $XDG_CACHE_HOME/mcphub (else ~/.cache/mcphub), a directory only this user may write: V8 trusts
// cached code, so a cache anyone else could write would run their code.
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const plain = new URL("../dist/cli/main.js", import.meta.url);
const bundle = fileURLToPath(new URL("../dist/bundle/mcphub.cjs", import.meta.url));
/** How long a start without a usable cache runs before its compiled code is saved. */
const CACHE_WRITE_DELAY_MS = 1500;

function bundleIsFresh() {
  if (process.env.MCPHUB_NO_BUNDLE) return false;
  try {
    return statSync(bundle).mtimeMs >= statSync(fileURLToPath(plain)).mtimeMs;
  } catch {
    return false;
  }
}

/**
 * mkdir -p by hand: Node 20's recursive mkdirSync never returns for some paths (under /proc, for
 * one), and a launcher must not hang on an odd $XDG_CACHE_HOME.
 */
function makeDirs(dir, depth) {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if (err?.code === "EEXIST") return;
    if (err?.code !== "ENOENT" || depth > 16 || dirname(dir) === dir) throw err;
    makeDirs(dirname(dir), depth + 1);
    mkdirSync(dir, { mode: 0o700 });
  }
}

/** The code cache file for this bundle and this Node, or undefined when no safe place exists. */
function codeCacheFile() {
  const base = process.env.XDG_CACHE_HOME || join(process.env.HOME || homedir(), ".cache");
  const dir = join(base, "mcphub");
  try {
    makeDirs(dir, 0);
    const st = statSync(dir);
    const mine = typeof process.getuid !== "function" || st.uid === process.getuid();
    if (!st.isDirectory() || !mine || (st.mode & 0o022) !== 0) return undefined;
  } catch {
    return undefined;
  }
  const key = createHash("sha256").update(`${bundle}\0${process.version}\0${process.arch}`).digest("hex").slice(0, 16);
  return join(dir, `code-cache-${key}.bin`);
}

function readCache(file) {
  try {
    const st = statSync(file);
    if (typeof process.getuid === "function" && st.uid !== process.getuid()) return undefined;
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

function writeCache(file, script) {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  } catch {
    // A cache is an optimisation: a full disk or a read-only home only costs the next start.
  }
}

function loadBundle() {
  const source = readFileSync(bundle, "utf8");
  const cacheFile = codeCacheFile();
  const cachedData = cacheFile === undefined ? undefined : readCache(cacheFile);
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  if (cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected)) {
    setTimeout(() => writeCache(cacheFile, script), CACHE_WRITE_DELAY_MS).unref();
  }
  return module.exports;
}

let main;
try {
  ({ main } = bundleIsFresh() ? loadBundle() : await import(plain.href));
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
