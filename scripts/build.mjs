// Builds dist/ (tsc, then scripts/bundle.mjs) and records what it was built from.
//
//   node scripts/build.mjs              build (what `npm run build` runs)
//   node scripts/build.mjs --if-stale   build only when the inputs changed since the last build
//                                       (what `npm start` runs: a second start takes no build)
//   node scripts/build.mjs --check      say whether a build is needed (exit 1 if so), build nothing
//   --root DIR                          another project laid out the same way (tests)
//
// "Changed" is decided by content, not by timestamps: a SHA-256 over the path and bytes of every
// file under src/, plus tsconfig.json, package.json, package-lock.json and scripts/bundle.mjs, kept
// in dist/.build-inputs. A file edited, added, removed or renamed changes it; so does a checkout
// that restores old timestamps. The build also counts as stale when its outputs are missing.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = resolve(fileURLToPath(import.meta.url), "..", "..");
const STAMP = join("dist", ".build-inputs");
const INPUT_FILES = ["tsconfig.json", "package.json", "package-lock.json", join("scripts", "bundle.mjs")];
const OUTPUTS = [join("dist", "cli", "main.js"), join("dist", "bundle", "mcphub.cjs")];

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
}

/** The hash of everything a build reads, for `root`. */
export function inputsHash(root) {
  const files = [];
  walk(join(root, "src"), files);
  for (const f of INPUT_FILES) if (existsSync(join(root, f))) files.push(join(root, f));
  const h = createHash("sha256");
  for (const f of files.map((p) => relative(root, p).split(sep).join("/")).sort()) {
    h.update(`${f}\0`);
    h.update(readFileSync(join(root, f)));
    h.update("\0");
  }
  return h.digest("hex");
}

/** Why `root` needs a build, or undefined when dist/ is what these inputs build. */
export function staleReason(root, hash = inputsHash(root)) {
  const missing = OUTPUTS.find((o) => !existsSync(join(root, o)));
  if (missing) return `${missing.split(sep).join("/")} is missing`;
  let recorded;
  try {
    recorded = readFileSync(join(root, STAMP), "utf8").trim();
  } catch {
    return "no record of what dist/ was built from";
  }
  return recorded === hash ? undefined : "sources changed since the last build";
}

function run(cmd, args, root) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

export function build(root, { ifStale = false } = {}) {
  const hash = inputsHash(root);
  if (ifStale) {
    const why = staleReason(root, hash);
    if (why === undefined) {
      process.stderr.write("mcphub: dist/ is up to date with the sources; not rebuilding (`npm run build` forces it)\n");
      return false;
    }
    process.stderr.write(`mcphub: building dist/ (${why})\n`);
  }
  const tsc = join(HERE, "node_modules", "typescript", "bin", "tsc");
  run(process.execPath, [tsc, "-p", join(root, "tsconfig.json")], root);
  run(process.execPath, [join(root, "scripts", "bundle.mjs")], root);
  // Hashed before building: a source edited during the build makes the next run build again.
  writeFileSync(join(root, STAMP), `${hash}\n`);
  return true;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--root");
  const root = at >= 0 && args[at + 1] ? resolve(args[at + 1]) : HERE;
  if (args.includes("--check")) {
    const why = staleReason(root);
    process.stderr.write(why === undefined ? "mcphub: dist/ is up to date with the sources\n" : `mcphub: dist/ needs a build (${why})\n`);
    process.exit(why === undefined ? 0 : 1);
  }
  build(root, { ifStale: args.includes("--if-stale") });
}
