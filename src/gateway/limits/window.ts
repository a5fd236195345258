// A sliding one-minute window of call start times: "at most N calls in any 60 seconds", exactly.
// A token bucket would let a burst of N calls through and then N more as it refills, so up to
// nearly 2N in one minute; this keeps the last N start times in a ring and refuses a call while
// the oldest of them is less than a minute old. Memory is N numbers per agent, whatever the rate.

export const WINDOW_MS = 60_000;

export class SlidingWindow {
  private times: Float64Array;
  /** Index of the oldest kept time, and how many are kept. */
  private head = 0;
  private size = 0;

  constructor(limit: number) {
    this.times = new Float64Array(limit);
  }

  get limit(): number {
    return this.times.length;
  }

  /** Starts in the window ending at `now`. */
  count(now: number): number {
    this.expire(now);
    return this.size;
  }

  /**
   * Takes a place for a call starting at `now`: 0 when it may start, else how many milliseconds
   * until the oldest start in the window leaves it (the earliest moment a retry can succeed).
   */
  take(now: number): number {
    this.expire(now);
    if (this.size >= this.times.length) {
      const oldest = this.times[this.head] as number;
      return Math.max(1, Math.ceil(oldest + WINDOW_MS - now));
    }
    this.times[(this.head + this.size) % this.times.length] = now;
    this.size++;
    return 0;
  }

  /** A new limit keeps the newest starts (a lower limit may leave the window over it for a while). */
  resize(limit: number): void {
    if (limit === this.times.length) return;
    const kept = Math.min(this.size, limit);
    const next = new Float64Array(limit);
    for (let i = 0; i < kept; i++) next[i] = this.times[(this.head + this.size - kept + i) % this.times.length] as number;
    this.times = next;
    this.head = 0;
    this.size = kept;
  }

  private expire(now: number): void {
    while (this.size > 0 && (this.times[this.head] as number) <= now - WINDOW_MS) {
      this.head = (this.head + 1) % this.times.length;
      this.size--;
    }
  }
}
