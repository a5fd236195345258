// Newline-delimited JSON-RPC out of a pipe, a few messages per write instead of one per message.
// With many calls in flight the messages of one tick come in bursts: the requests one read from
// the client started, the replies one read from a server completed. Each write to a pipe is a
// syscall and wakes the reader on the other side (on a loaded machine, a context switch); written
// together, lines share one of each on both sides. But a burst held back whole until its tick
// ends leaves the process on the other side idle until the last line of the burst is made: with
// 16 calls in flight that convoy cost more latency than the syscalls it saved (bench/proxy.ts,
// docs/benchmarks.md). So a batch goes out as soon as it holds MAX_LINES_PER_WRITE lines, and the
// rest at the end of the tick; a message alone in its tick waits for nothing but the end of that
// tick (process.nextTick runs once the tick's promise jobs are done).

/** Lines written together at most: the reader starts on the first ones while the rest are made. */
export const MAX_LINES_PER_WRITE = 4;

/** Writes `text` and calls `done` once it is written (or drained), or with the error that lost it. */
export type WriteOut = (text: string, done: (err?: Error) => void) => void;

class Batch {
  resolve!: () => void;
  reject!: (err: Error) => void;
  readonly done = new Promise<void>((res, rej) => {
    this.resolve = res;
    this.reject = rej;
  });
}

export class TickBatcher {
  private lines: string[] = [];
  private chars = 0;
  private batch: Batch | undefined;
  /** Whether an end-of-tick flush is scheduled (one per tick, however many batches it has). */
  private scheduled = false;
  private readonly onTickEnd = () => {
    this.scheduled = false;
    this.flush();
  };

  constructor(private readonly writeOut: WriteOut) {}

  /** UTF-16 units queued and not yet written (a lower bound of their bytes, at most 3× under). */
  get queuedChars(): number {
    return this.chars;
  }

  /**
   * Queues one line (with its newline). The lines of one write share one promise: it settles
   * when their write does. Lines go out in the order they were queued.
   */
  push(line: string): Promise<void> {
    this.lines.push(line);
    this.chars += line.length;
    const batch = (this.batch ??= new Batch());
    if (this.lines.length >= MAX_LINES_PER_WRITE) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      process.nextTick(this.onTickEnd);
    }
    return batch.done;
  }

  /** Writes what is queued now (once MAX_LINES_PER_WRITE lines are, at the end of the tick, or before the pipe is closed). */
  flush(): void {
    const batch = this.batch;
    if (batch === undefined) return;
    const lines = this.lines;
    this.batch = undefined;
    this.lines = [];
    this.chars = 0;
    this.writeOut(lines.length === 1 ? (lines[0] as string) : lines.join(""), (err) => (err ? batch.reject(err) : batch.resolve()));
  }
}
