// Runs find on a worker thread with a time bound. A regular expression cannot be interrupted on
// the thread that runs it, so searches run on worker threads, and a search still running when its
// bound passes has its thread terminated: a pathological pattern costs one thread for that long
// and nothing else. Threads are kept a while for the next search. At most MAX_RUNNING searches run
// at once per process; a few more wait their turn, the rest are refused.
// A result in a file is opened by the worker itself; one in another store (PostgreSQL) is read
// by this thread on the worker's behalf over a MessagePort, a range at a time.
import { MessageChannel, type MessagePort, type Worker } from "node:worker_threads";
import type { BlobReader } from "../../store/index.js";
import { startWorker } from "../../util/worker.js";
import type { FindJob, FindMatch } from "./find.js";

/** What the gateway asks for: the result's file, or a way to open its stored bytes. */
export type FindRequest = { key: Uint8Array; callId: string; job: FindJob } & ({ path: string } | { open: () => Promise<BlobReader | undefined> });

/** What the worker is sent: the file, or a port to ask for ranges on. */
export type FindWorkerInput = { key: Uint8Array; callId: string; job: FindJob } & ({ path: string } | { port: MessagePort });

/** The worker's questions on the port, and their answers. */
export type RangeQuestion = { seq: number; t: "open" } | { seq: number; t: "read"; at: number; length: number };
export type RangeAnswer = { seq: number; size?: number; bytes?: Uint8Array; gone?: true; error?: string };

export interface FindOwner {
  agent: string;
  server: string;
  tool: string;
  namespaced: string;
}

export type FindWorkerMessage =
  | { t: "started" }
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
export class FindTamperedError extends Error {
  override name = "FindTamperedError";
}
/** Too many searches are running or waiting. */
export class FindBusyError extends Error {
  override name = "FindBusyError";
}

const MAX_RUNNING = 2;
const MAX_WAITING = 8;
/** A worker's heap: enough for 64 KiB windows and long carried lines, never the whole result. */
const WORKER_HEAP_MB = 128;
/** An idle worker is kept this long for the next search (starting one costs ~0.2 s of CPU). */
const IDLE_MS = 30_000;
/**
 * How long a new thread may take to start before the search fails. The search's own bound
 * (`find_timeout`) starts when the worker has the job, not before: on a loaded machine a thread
 * took longer to start than a short bound, and a plain-text search then came back "timeout" with
 * nothing searched.
 */
const START_BOUND_MS = 30_000;

let running = 0;
const waiting: (() => void)[] = [];
const idle: { worker: Worker; timer: NodeJS.Timeout }[] = [];
let nextId = 0;

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

function takeWorker(): Worker {
  const kept = idle.pop();
  if (kept) {
    clearTimeout(kept.timer);
    return kept.worker;
  }
  const worker = startWorker(import.meta.url, "find-worker", undefined, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  worker.unref();
  return worker;
}

function keepWorker(worker: Worker): void {
  const timer = setTimeout(() => {
    const at = idle.findIndex((k) => k.worker === worker);
    if (at >= 0) idle.splice(at, 1);
    void worker.terminate();
  }, IDLE_MS);
  timer.unref();
  idle.push({ worker, timer });
}

/** Serves a worker's range reads from the stored blob; returns the port to give the worker. */
function serveRanges(open: () => Promise<BlobReader | undefined>): { port: MessagePort; stop: () => void } {
  const channel = new MessageChannel();
  let reader: BlobReader | undefined;
  const mine = channel.port1;
  mine.on("message", (q: RangeQuestion) => {
    const answer = async (): Promise<{ a: RangeAnswer; transfer: ArrayBuffer[] }> => {
      if (q.t === "open") {
        reader = await open();
        return { a: reader ? { seq: q.seq, size: reader.size } : { seq: q.seq, gone: true }, transfer: [] };
      }
      if (!reader) return { a: { seq: q.seq, gone: true }, transfer: [] };
      const into = Buffer.alloc(q.length);
      await reader.read(into, q.at);
      const bytes = new Uint8Array(into.buffer, into.byteOffset, into.length);
      return { a: { seq: q.seq, bytes }, transfer: [] };
    };
    answer().then(
      ({ a, transfer }) => mine.postMessage(a, transfer),
      (err: unknown) => mine.postMessage({ seq: q.seq, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  return {
    port: channel.port2,
    stop: () => {
      mine.close();
      void reader?.close().catch(() => undefined);
    },
  };
}

export async function runFind(request: FindRequest, timeoutMs: number, signal?: AbortSignal): Promise<FindOutcome> {
  const release = await slot();
  const served = "open" in request ? serveRanges(request.open) : undefined;
  const input: FindWorkerInput = "path" in request ? request : { key: request.key, callId: request.callId, job: request.job, port: (served as { port: MessagePort }).port };
  try {
    return await new Promise<FindOutcome>((resolve, reject) => {
      const id = ++nextId;
      const matches: FindMatch[] = [];
      let owner: FindOwner | undefined;
      const worker = takeWorker();
      let settled = false;
      const finish = (reusable: boolean, fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
        if (reusable) keepWorker(worker);
        else void worker.terminate();
        fn();
      };
      // A search still running at the bound is stopped the only way a regular expression can be.
      const stopAtBound = () => finish(false, () => resolve({ status: "timeout", matches, truncated: true, ...(owner ? { owner } : {}) }));
      let timer = setTimeout(
        () => finish(false, () => reject(new Error(`the search thread did not start within ${START_BOUND_MS / 1000} s; try again`))),
        START_BOUND_MS,
      );
      const onAbort = () => finish(false, () => reject(new Error("search cancelled")));
      signal?.addEventListener("abort", onAbort, { once: true });
      const onMessage = (msg: FindWorkerMessage & { id: number }) => {
        if (msg.id !== id) return;
        if (msg.t === "started") {
          clearTimeout(timer);
          timer = setTimeout(stopAtBound, timeoutMs);
        } else if (msg.t === "owner") owner = msg.owner;
        else if (msg.t === "match") matches.push(msg.m);
        else if (msg.t === "done") finish(true, () => resolve({ status: "ok", matches, truncated: msg.truncated, ...(owner ? { owner } : {}) }));
        else if (msg.t === "gone") finish(true, () => resolve({ status: "gone", matches: [], truncated: false }));
        else finish(true, () => reject(msg.tampered ? new FindTamperedError(msg.message) : new Error(msg.message)));
      };
      const onError = (err: Error) => finish(false, () => reject(err));
      const onExit = (code: number) => finish(false, () => reject(new Error(`search worker exited with code ${code} before answering`)));
      worker.on("message", onMessage);
      worker.once("error", onError);
      worker.once("exit", onExit);
      if ("port" in input) worker.postMessage({ ...input, id }, [input.port]);
      else worker.postMessage({ ...input, id });
    });
  } finally {
    served?.stop();
    release();
  }
}
