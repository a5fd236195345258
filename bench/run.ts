// `npm run bench`: the list of benchmarks, or one of them by name.
//   npm run bench                       # every benchmark with its one-line summary
//   npm run bench -- proxy --calls 300  # runs bench/proxy.ts with the flags after the name
// A file in bench/ is a benchmark when its own header names its command (`npx tsx bench/NAME.ts`);
// the rest are shared modules (setup, proc, data loaders). Reading that from the files, not from
// a list here, keeps this command true when a benchmark is added.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

interface Bench {
  readonly name: string;
  readonly summary: string;
}

const benchDir = dirname(fileURLToPath(import.meta.url));

function benches(): Bench[] {
  const found: Bench[] = [];
  for (const file of readdirSync(benchDir).sort()) {
    if (!file.endsWith(".ts") || file === "run.ts") continue;
    const name = file.slice(0, -3);
    const text = readFileSync(join(benchDir, file), "utf8");
    if (!text.includes(`npx tsx bench/${name}.ts`)) continue;
    const first = text.split("\n").find((line) => line.startsWith("// ")) ?? "";
    found.push({ name, summary: first.slice(3).trim() });
  }
  return found;
}

function list(all: readonly Bench[]): void {
  const width = Math.max(...all.map((b) => b.name.length));
  process.stdout.write("benchmarks (npm run bench -- NAME [flags]); docs/benchmarks.md has results\n\n");
  for (const b of all) process.stdout.write(`  ${b.name.padEnd(width)}  ${b.summary}\n`);
}

const [name, ...rest] = process.argv.slice(2);
const all = benches();
if (name === undefined || name === "--help" || name === "-h") {
  list(all);
} else if (!all.some((b) => b.name === name)) {
  process.stderr.write(`mcphub bench: no benchmark named "${name}"; one of: ${all.map((b) => b.name).join(", ")}\n`);
  process.exitCode = 2;
} else {
  // The same Node and loader flags tsx gave this process, so the child runs TypeScript too.
  const child = spawnSync(process.execPath, [...process.execArgv, join(benchDir, `${name}.ts`), ...rest], {
    stdio: "inherit",
  });
  process.exitCode = child.status ?? 1;
}
