#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (`npm run build` in a checkout; shipped in the
// published package, built by `prepack`). dist/bundle/mcphub.cjs is the same code in one file,
// which starts faster; it is used only when it is at least as new as dist/cli/main.js, so a
// tsc-only rebuild never runs stale code. MCPHUB_NO_BUNDLE=1 forces the unbundled modules.
//
// The bundle runs as a vm.Script with V8's code cache: a harness starts one gateway per session
// and wants its first answer at once, and compiling the bundle (plus every function the start
// runs) is about a third of that start's CPU. A gateway that started without a usable cache
// (none yet, or one V8 rejected: another Node, other flags, a rebuilt bundle) writes it once, a
// moment after its start or at its exit if that comes first, to
// $XDG_CACHE_HOME/mcphub (else ~/.cache/mcphub), a directory only this user may write: V8 trusts
// cached code, so a cache anyone else could write would run their code. MCPHUB_NO_CODE_CACHE=1
// runs the bundle without reading or writing it.
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
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

/**
 * The code cache file for this bundle's content and this Node, or undefined when no safe place
 * exists. The content is part of the name because V8 checks a cache only against the source's
 * length: a rebuilt or reinstalled bundle of the same length must never meet the old code.
 */
function codeCacheFile(source) {
  if (process.env.MCPHUB_NO_CODE_CACHE) return undefined;
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
  const place = createHash("sha256").update(`${bundle}\0${process.version}\0${process.arch}`).digest("hex").slice(0, 16);
  const content = createHash("sha256").update(source).digest("hex").slice(0, 16);
  return join(dir, `code-cache-${place}-${content}.bin`);
}

/** Caches of earlier builds at the same place: one is kept per bundle path and Node. */
function removeOlderCaches(file) {
  const dir = dirname(file);
  const name = basename(file);
  const place = name.slice(0, name.lastIndexOf("-") + 1);
  try {
    for (const other of readdirSync(dir)) {
      if (other !== name && other.startsWith(place) && other.endsWith(".bin")) rmSync(join(dir, other), { force: true });
    }
  } catch {
    // Left for the next write.
  }
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
    removeOlderCaches(file);
  } catch {
    // A cache is an optimisation: a full disk or a read-only home only costs the next start.
  }
}

/**
 * Only a gateway writes the cache: what V8 saves is the code compiled so far, and a gateway's
 * start is the one that must be quick (an operator command that wrote first would leave a cache
 * without the gateway's functions, which V8 then accepts and never replaces).
 */
function isGateway(args) {
  return args.includes("serve") || args.includes("up");
}

function loadBundle() {
  const source = readFileSync(bundle, "utf8");
  const cacheFile = codeCacheFile(source);
  const cachedData = cacheFile === undefined ? undefined : readCache(cacheFile);
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  if (cacheFile !== undefined && (cachedData === undefined || script.cachedDataRejected) && isGateway(process.argv.slice(2))) {
    let written = false;
    const save = () => {
      if (!written) writeCache(cacheFile, script);
      written = true;
    };
    setTimeout(save, CACHE_WRITE_DELAY_MS).unref();
    process.once("exit", save);
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

/**
 * A reader that stops early (`mcphub --help | head`, `mcphub stats --json | head -c 200`) closes
 * the pipe, and the next write fails with EPIPE: Node would end on an unhandled 'error' event with
 * a stack trace. The rest of the output has nowhere to go, so a command ends there quietly with
 * its exit code, as git and gh do. A gateway is not ended by a closed log pipe: its stdio transport
 * notices its client leaving on its own, and a daemon's lines to a closed pipe are dropped.
 */
function endQuietlyOnClosedPipe(gateway) {
  const onError = (err) => {
    if (err?.code !== "EPIPE" && err?.code !== "ERR_STREAM_DESTROYED") throw err;
    if (!gateway) process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
  };
  process.stdout.on("error", onError);
  process.stderr.on("error", onError);
}
endQuietlyOnClosedPipe(isGateway(process.argv.slice(2)));

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === "number") process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`mcphub: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
