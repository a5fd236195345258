// The stdio transports write the messages of one tick together (one syscall, one wake-up of the
// reader per MAX_LINES_PER_WRITE lines): the batcher itself, and the upstream transport on a real
// stream.
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { LineStdioServerTransport } from "../../../src/serve/stdio/transport.js";
import { MAX_LINES_PER_WRITE, TickBatcher } from "../../../src/util/tick-batch.js";

const tick = () => new Promise<void>((r) => setImmediate(r));

describe("TickBatcher", () => {
  it("writes the lines of one tick in one write, in order, and a later tick's in another", async () => {
    const writes: string[] = [];
    const b = new TickBatcher((text, done) => {
      writes.push(text);
      done();
    });
    const p = [b.push("a\n"), b.push("b\n"), b.push("c\n")];
    expect(b.queuedChars).toBe(6);
    expect(writes).toEqual([]);
    // Lines queued from promise jobs of the same tick join the batch too.
    await Promise.resolve().then(() => b.push("d\n"));
    await Promise.all(p);
    expect(writes).toEqual(["a\nb\nc\nd\n"]);
    expect(b.queuedChars).toBe(0);
    await tick();
    await b.push("e\n");
    expect(writes).toEqual(["a\nb\nc\nd\n", "e\n"]);
  });

  it("writes a long burst every MAX_LINES_PER_WRITE lines, so the reader starts before the tick ends", async () => {
    expect(MAX_LINES_PER_WRITE).toBe(4);
    const writes: string[] = [];
    const b = new TickBatcher((text, done) => {
      writes.push(text);
      done();
    });
    const lines = Array.from({ length: 10 }, (_, i) => `${i}\n`);
    const sent = lines.map((l) => b.push(l));
    // Two full batches are out already, in this tick; the last two wait for its end.
    expect(writes).toEqual(["0\n1\n2\n3\n", "4\n5\n6\n7\n"]);
    expect(b.queuedChars).toBe(4);
    await Promise.all(sent);
    expect(writes).toEqual(["0\n1\n2\n3\n", "4\n5\n6\n7\n", "8\n9\n"]);
    expect(writes.join("")).toBe(lines.join(""));
  });

  it("settles every sender of a batch when its write settles, with its error if it failed", async () => {
    let finish: ((err?: Error) => void) | undefined;
    const b = new TickBatcher((_text, done) => (finish = done));
    let settled = 0;
    const one = b.push("x\n").then(() => settled++);
    const two = b.push("y\n").then(() => settled++);
    await tick();
    expect(settled).toBe(0); // written, not yet drained
    finish?.();
    await Promise.all([one, two]);
    expect(settled).toBe(2);
    const failed = b.push("z\n");
    await tick();
    finish?.(new Error("gone"));
    await expect(failed).rejects.toThrow("gone");
  });

  it("flush() writes what is queued at once (before a pipe is closed)", () => {
    const writes: string[] = [];
    const b = new TickBatcher((text, done) => {
      writes.push(text);
      done();
    });
    void b.push("last\n");
    b.flush();
    expect(writes).toEqual(["last\n"]);
    b.flush();
    expect(writes).toEqual(["last\n"]);
  });
});

describe("LineStdioServerTransport output", () => {
  it("sends the replies of one tick as one chunk, and each line whole", async () => {
    const chunks: string[] = [];
    const output = new Writable({
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk.toString("utf8"));
        cb();
      },
    });
    const t = new LineStdioServerTransport({ input: new PassThrough(), output, maxMessageBytes: 1024 * 1024 });
    await t.start();
    const sent = [1, 2, 3].map((id) => t.send({ jsonrpc: "2.0", id, result: { n: id } }));
    await Promise.all(sent);
    await t.send({ jsonrpc: "2.0", id: 4, result: {} });
    expect(chunks).toEqual([
      '{"jsonrpc":"2.0","id":1,"result":{"n":1}}\n{"jsonrpc":"2.0","id":2,"result":{"n":2}}\n{"jsonrpc":"2.0","id":3,"result":{"n":3}}\n',
      '{"jsonrpc":"2.0","id":4,"result":{}}\n',
    ]);
    await t.close();
  });
});
