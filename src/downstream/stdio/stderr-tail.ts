// Keeps only the last `limit` bytes written by a child's stderr. Memory stays bounded however
// chatty the child is; `truncated` says whether anything was dropped.
export const STDERR_TAIL_BYTES = 8 * 1024;

export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  private dropped = false;

  constructor(private readonly limit: number = STDERR_TAIL_BYTES) {}

  append(chunk: Buffer): void {
    if (chunk.length >= this.limit) {
      this.chunks = [chunk.subarray(chunk.length - this.limit)];
      this.dropped ||= chunk.length > this.limit || this.size > 0;
      this.size = this.limit;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit) {
      const first = this.chunks[0];
      if (first === undefined) break;
      const excess = this.size - this.limit;
      this.dropped = true;
      if (first.length <= excess) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.size -= excess;
      }
    }
  }

  get truncated(): boolean {
    return this.dropped;
  }

  get byteLength(): number {
    return this.size;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}
