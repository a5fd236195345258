// Starting a worker thread on a sibling module, from compiled JS (dist/) or from the TypeScript
// sources (tests and benches run through tsx). A new thread has no TypeScript loader, so from the
// sources it first registers tsx's and then imports the .ts entry.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * A worker running module `name` (without extension) next to the module whose import.meta.url is
 * `here`, with `workerData` as its input.
 */
export function startWorker(here: string, name: string, workerData: unknown, opts: Omit<WorkerOptions, "workerData" | "eval"> = {}): Worker {
  if (!here.endsWith(".ts")) return new Worker(new URL(`./${name}.js`, here), { ...opts, workerData });
  const tsx = pathToFileURL(createRequire(here).resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")).href;
  const entry = new URL(`./${name}.ts`, here).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { ...opts, eval: true, workerData });
}
