// Runs find on a worker thread with a time bound. A regular expression cannot be interrupted on
// the thread that runs it, so each search gets its own thread, which is terminated when the bound
// passes; a pathological pattern then costs one thread for that long and nothing else. At most
// MAX_RUNNING searches run at once per process; a few more wait their turn, the rest are refused.
import { startWorker } from "../../util/worker.js";
import type { FindJob, FindMatch } from "./find.js";

export interface FindWorkerInput {
  path: string;
  key: Uint8Array;
  callId: string;
  job: FindJob;
}

export interface FindOwner {
  agent: string;
  server: string;
  tool: string;
  namespaced: string;
}

export type FindWorkerMessage =
  | { t: "owner"; owner: FindOwner }
  | { t: "match"; m: FindMatch }
  | { t: "done"; truncated: boolean }
  | { t: "gone" }
  | { t: "error"; tampered: boolean; message: string };

export interface FindOutcome {
  /** "timeout": the bound passed; `matches` holds what was found before it. "gone": no such live result. */
  status: "ok" | "timeout" | "gone";
  matches: FindMatch[];
  truncated: boolean;
  /** Whose result the worker read (to confirm it is the one whose scope was checked). */
  owner?: FindOwner;
}

/** The stored result did not authenticate in the worker. */
export class FindTamperedError extends Error {}
/** Too many searches are running or waiting. */
export class FindBusyError extends Error {}

const MAX_RUNNING = 2;
const MAX_WAITING = 8;
/** A worker's heap: enough for 64 KiB windows and long carried lines, never the whole result. */
const WORKER_HEAP_MB = 128;

let running = 0;
const waiting: (() => void)[] = [];

async function slot(): Promise<() => void> {
  if (running >= MAX_RUNNING) {
    if (waiting.length >= MAX_WAITING) throw new FindBusyError(`too many searches in flight (${MAX_RUNNING} running, ${waiting.length} waiting); try again shortly`);
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
  running++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    running--;
    waiting.shift()?.();
  };
}

export async function runFind(input: FindWorkerInput, timeoutMs: number, signal?: AbortSignal): Promise<FindOutcome> {
  const release = await slot();
  try {
    return await new Promise<FindOutcome>((resolve, reject) => {
      const matches: FindMatch[] = [];
      let owner: FindOwner | undefined;
      const worker = startWorker(import.meta.url, "find-worker", input, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        void worker.terminate();
        fn();
      };
      const timer = setTimeout(() => finish(() => resolve({ status: "timeout", matches, truncated: true, ...(owner ? { owner } : {}) })), timeoutMs);
      const onAbort = () => finish(() => reject(new Error("search cancelled")));
      signal?.addEventListener("abort", onAbort, { once: true });
      worker.on("message", (msg: FindWorkerMessage) => {
        if (msg.t === "owner") owner = msg.owner;
        else if (msg.t === "match") matches.push(msg.m);
        else if (msg.t === "done") finish(() => resolve({ status: "ok", matches, truncated: msg.truncated, ...(owner ? { owner } : {}) }));
        else if (msg.t === "gone") finish(() => resolve({ status: "gone", matches: [], truncated: false }));
        else finish(() => reject(msg.tampered ? new FindTamperedError(msg.message) : new Error(msg.message)));
      });
      worker.once("error", (err) => finish(() => reject(err)));
      worker.once("exit", (code) => finish(() => reject(new Error(`search worker exited with code ${code} before answering`))));
    });
  } finally {
    release();
  }
}
