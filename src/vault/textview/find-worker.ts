// The find worker: for each job it is sent, opens one stored result with the vault key, checks it
// authenticates, reads (or, for an old file, builds) its view index and runs findInView, posting
// each match as it is found and then "done". The gateway keeps it for the next search and
// terminates it when a search overruns its time bound.
import { open } from "node:fs/promises";
import { parentPort } from "node:worker_threads";
import { ChunkReader, FormatError, gatherRange } from "../chunkfile.js";
import { findInView, type FindMatch } from "./find.js";
import { ResultScanner } from "./scan.js";
import { decodeView, type ViewIndex } from "./types.js";
import type { FindWorkerInput, FindWorkerMessage } from "./find-runner.js";

async function run(input: FindWorkerInput, post: (m: FindWorkerMessage) => void): Promise<void> {
  let handle;
  try {
    handle = await open(input.path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return post({ t: "gone" });
    throw err;
  }
  try {
    const size = (await handle.stat()).size;
    const reader = await ChunkReader.open(handle, size, Buffer.from(input.key), input.callId);
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
  run(input, post).catch((err: unknown) => {
    const tampered = err instanceof FormatError || (err instanceof Error && err.name === "ZodError");
    post({ t: "error", tampered, message: err instanceof Error ? err.message : String(err) });
  });
});
