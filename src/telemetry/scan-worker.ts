// Worker-thread entry of a parallel stats scan: aggregates its share of the day files and posts
// the partial back (durations transferred, not copied). See parallel.ts.
import { parentPort, workerData } from "node:worker_threads";
import { StatsAccumulator } from "./aggregate.js";
import type { ScanJob } from "./parallel.js";
import { scanFile, type ScanResult } from "./scan.js";

const job = workerData as ScanJob;
const acc = new StatsAccumulator(job.filter, job.tools, job.recent);
const result: ScanResult = { rows: 0, malformed: 0 };
for (const path of job.paths) await scanFile(path, acc.onRow, job.minTs, result);
const partial = acc.toPartial();
parentPort?.postMessage(partial, [partial.durations.buffer as ArrayBuffer, partial.recentTs.buffer as ArrayBuffer]);
