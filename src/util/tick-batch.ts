// Newline-delimited JSON-RPC out of a pipe, one write per tick instead of one per message. With
// many calls in flight the messages of one tick come in bursts: the requests one read from the
// client started, the replies one read from a server completed. Each write to a pipe is a syscall
// and wakes the reader on the other side (on a loaded machine, a context switch); written as one
// chunk, a burst costs one of each on both sides. A message alone in its tick waits for nothing
// but the end of that tick (process.nextTick runs once the tick's promise jobs are done).

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
  private readonly onTickEnd = () => this.flush();

  constructor(private readonly writeOut: WriteOut) {}

  /** UTF-16 units queued and not yet written (a lower bound of their bytes, at most 3× under). */
  get queuedChars(): number {
    return this.chars;
  }

  /**
   * Queues one line (with its newline). Every line of the tick shares one promise: it settles
   * when their write does. Lines go out in the order they were queued.
   */
  push(line: string): Promise<void> {
    this.lines.push(line);
    this.chars += line.length;
    if (this.batch === undefined) {
      this.batch = new Batch();
      process.nextTick(this.onTickEnd);
    }
    return this.batch.done;
  }

  /** Writes what is queued now (at the end of the tick, or before the pipe is closed). */
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
