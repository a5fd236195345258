// Returning memory after a very large message. V8 collects garbage when its heuristics say so,
// which can be long after a 200 MB line has been parsed: by then the next copy of the same data
// is already allocated and peak RSS is several times the result. For messages this large a full
// collection costs far less than moving the data did, so the gateway asks for one explicitly.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** Messages at least this large trigger a collection once they are no longer needed. */
export const LARGE_MESSAGE_CHARS = 16 * 1024 * 1024;

let gc: (() => void) | null | undefined;

function collector(): (() => void) | null {
  if (gc !== undefined) return gc;
  try {
    setFlagsFromString("--expose-gc");
    const fn: unknown = runInNewContext("gc");
    gc = typeof fn === "function" ? (fn as () => void) : null;
  } catch {
    gc = null;
  }
  return gc;
}

/** Runs a full garbage collection if the runtime allows it; otherwise does nothing. */
export function releaseMemory(): void {
  collector()?.();
}
