// Scanning day files on several threads. A week of heavy use is ~110 MB of records; one thread
// parses it in about a second of CPU, so on a machine with a spare core two threads finish it in
// about half the wall time. Files are split into contiguous runs of similar size (a run per
// worker), each worker returns a `PartialStats`, and the caller merges them in file order, which
// gives the same report as one sequential scan (see aggregate.ts).
import { availableParallelism, loadavg } from "node:os";
import type { Worker } from "node:worker_threads";
import { startWorker as startModuleWorker } from "../util/worker.js";
import type { PartialStats, RowFilter } from "./aggregate.js";

/** What one worker is asked to do (its `workerData`). */
export interface ScanJob {
  paths: string[];
  minTs: number;
  filter: RowFilter;
  tools: boolean;
  recent: number;
}

/** Below this many bytes in the window's files, thread start-up costs more than it saves. */
export const PARALLEL_MIN_BYTES = 24 * 1024 * 1024;
export const DEFAULT_SCAN_WORKERS = 2;

/**
 * How many threads to scan `bytes` of day files with by default: 0 means in this thread. Threads
 * cost extra CPU (each boots a V8 isolate and warms its own JIT from cold: ~0.4 s in all over a
 * million rows), which only pays off when a core is actually free; on a saturated machine (1-minute
 * load average not below cores - 0.5) one thread finishes as soon and disturbs the others less.
 */
export function defaultWorkers(bytes: number, cores = availableParallelism(), load = loadavg()[0] ?? 0): number {
  if (bytes < PARALLEL_MIN_BYTES || cores < 2 || load >= cores - 0.5) return 0;
  return DEFAULT_SCAN_WORKERS;
}

/**
 * Splits files (in order) into at most `n` contiguous non-empty runs of roughly equal total size.
 * Contiguity is what lets the merged result equal a sequential scan.
 */
export function splitRuns<T extends { size: number }>(files: T[], n: number): T[][] {
  const total = files.reduce((s, f) => s + f.size, 0);
  const runs: T[][] = [];
  let run: T[] = [];
  let acc = 0;
  for (const [i, f] of files.entries()) {
    run.push(f);
    acc += f.size;
    const runsAfter = n - runs.length - 1;
    const filesAfter = files.length - i - 1;
    // Close the run once it reaches its share, or when just enough files remain for the later runs.
    if (runsAfter > 0 && filesAfter > 0 && (acc >= (total * (runs.length + 1)) / n || filesAfter <= runsAfter)) {
      runs.push(run);
      run = [];
    }
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

function startWorker(job: ScanJob): Worker {
  return startModuleWorker(import.meta.url, "scan-worker", job);
}

function runWorker(job: ScanJob): Promise<PartialStats> {
  return new Promise((resolve, reject) => {
    const w = startWorker(job);
    let done = false;
    w.once("message", (p: PartialStats) => {
      done = true;
      resolve(p);
      void w.terminate();
    });
    w.once("error", (err) => {
      done = true;
      reject(err);
    });
    w.once("exit", (code) => {
      if (!done) reject(new Error(`stats scan worker exited with code ${code} before answering`));
    });
  });
}

/** Scans the runs on one worker each; the partials come back in file order. */
export function scanInWorkers(runs: string[][], job: Omit<ScanJob, "paths">): Promise<PartialStats[]> {
  return Promise.all(runs.map((paths) => runWorker({ ...job, paths })));
}
