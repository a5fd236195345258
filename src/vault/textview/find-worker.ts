// The find worker: for each job it is sent, opens one stored result with the vault key, checks it
// authenticates, reads (or, for an old file, builds) its view index and runs findInView, posting
// each match as it is found and then "done". The gateway keeps it for the next search and
// terminates it when a search overruns its time bound.
import { open } from "node:fs/promises";
import { parentPort, type MessagePort } from "node:worker_threads";
import type { ByteSource } from "../../store/index.js";
import { ChunkReader, FormatError, fileSource, gatherRange } from "../chunkfile.js";
import { findInView, type FindMatch } from "./find.js";
import { ResultScanner } from "./scan.js";
import { decodeView, type ViewIndex } from "./types.js";
import type { FindWorkerInput, FindWorkerMessage, RangeAnswer, RangeQuestion } from "./find-runner.js";

/** The stored bytes over the gateway thread's port (a result that is not a local file). */
async function remoteSource(port: MessagePort): Promise<(ByteSource & { close(): Promise<void> }) | undefined> {
  let seq = 0;
  const waiting = new Map<number, (a: RangeAnswer) => void>();
  port.on("message", (a: RangeAnswer) => {
    waiting.get(a.seq)?.(a);
    waiting.delete(a.seq);
  });
  const ask = (q: Omit<RangeQuestion, "seq"> & { t: RangeQuestion["t"] }): Promise<RangeAnswer> =>
    new Promise((resolve) => {
      const n = ++seq;
      waiting.set(n, resolve);
      port.postMessage({ ...q, seq: n });
    });
  const opened = await ask({ t: "open" });
  if (opened.error !== undefined) throw new Error(opened.error);
  if (opened.gone || opened.size === undefined) {
    port.close();
    return undefined;
  }
  return {
    size: opened.size,
    read: async (into, position) => {
      const a = await ask({ t: "read", at: position, length: into.length } as Omit<RangeQuestion, "seq">);
      if (a.error !== undefined) throw new Error(a.error);
      if (!a.bytes || a.bytes.length !== into.length) throw new FormatError("unexpected end of stored data");
      into.set(a.bytes);
    },
    close: async () => port.close(),
  };
}

async function openSource(input: FindWorkerInput): Promise<(ByteSource & { close(): Promise<void> }) | undefined> {
  if ("port" in input) return remoteSource(input.port);
  let handle;
  try {
    handle = await open(input.path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const fh = handle;
  try {
    return { ...fileSource(fh, (await fh.stat()).size), close: () => fh.close() };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

async function run(input: FindWorkerInput, post: (m: FindWorkerMessage) => void): Promise<void> {
  const handle = await openSource(input);
  if (!handle) return post({ t: "gone" });
  try {
    const reader = await ChunkReader.open(handle, Buffer.from(input.key), input.callId);
    const h = reader.header;
    if (h.expires <= Date.now()) return post({ t: "gone" });
    post({ t: "owner", owner: { agent: h.agent, server: h.server, tool: h.tool, namespaced: h.namespaced } });
    // The last chunk read is kept: consecutive windows share chunks.
    let last: { index: number; plain: Buffer } | undefined;
    const chunk = async (index: number) => {
      if (last?.index === index) return last.plain;
      last = { index, plain: await reader.readChunk(handle, index) };
      return last.plain;
    };
    const src = { read: (at: number, length: number) => gatherRange(h, at, Math.min(h.totalBytes, at + length), chunk) };
    let view: ViewIndex;
    if (reader.hasView) view = decodeView(await reader.readView(handle));
    else {
      const scanner = new ResultScanner();
      for (let i = 0; i < h.chunkCount; i++) scanner.feed(await chunk(i));
      view = scanner.finish();
    }
    const { truncated } = await findInView(view, src, input.job, (m: FindMatch) => post({ t: "match", m }));
    post({ t: "done", truncated });
  } finally {
    await handle.close();
  }
}

parentPort?.on("message", (input: FindWorkerInput & { id: number }) => {
  const post = (m: FindWorkerMessage) => parentPort?.postMessage({ ...m, id: input.id });
  // The thread is up and has the job: the search's bound starts now (see START_BOUND_MS).
  post({ t: "started" });
  run(input, post).catch((err: unknown) => {
    const tampered = err instanceof FormatError || (err instanceof Error && err.name === "ZodError");
    post({ t: "error", tampered, message: err instanceof Error ? err.message : String(err) });
  });
});
