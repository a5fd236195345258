// Roots: pinned roots as roots/list answers, and the barrier that keeps a call from overtaking
// the roots answer its connection is still waiting for (a server such as server-filesystem asks
// right after connecting and applies the answer to every later call).
import { homedir } from "node:os";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** A pinned root: absolute path, `~`/`~/...`, or a file:// URI, as the roots/list entry. */
export function rootOf(root: string): { uri: string } {
  if (root.startsWith("file://")) return { uri: root };
  const path = root === "~" ? homedir() : root.startsWith("~/") ? resolve(homedir(), root.slice(2)) : resolve(root);
  return { uri: pathToFileURL(path).href };
}

/** The local paths of file:// roots (others name no place a sandbox could show). */
export function rootPaths(roots: readonly { uri: string }[]): string[] {
  const out: string[] = [];
  for (const r of roots) {
    if (!r.uri.startsWith("file://")) continue;
    try {
      out.push(fileURLToPath(r.uri));
    } catch {
      // a file:// URI with a host (file://server/share) names no local path
    }
  }
  return out;
}

export class RootsBarrier {
  /** connection key → roots/list answers still on their way. */
  private readonly pending = new Map<string, Set<Promise<void>>>();

  /** Records a forwarded roots/list until it settles, whichever way. */
  track(key: string, answer: Promise<unknown>): void {
    let set = this.pending.get(key);
    if (!set) {
      set = new Set();
      this.pending.set(key, set);
    }
    const mine = set;
    const settled = answer.then(
      () => undefined,
      () => undefined,
    );
    mine.add(settled);
    void settled.then(() => {
      mine.delete(settled);
      if (mine.size === 0 && this.pending.get(key) === mine) this.pending.delete(key);
    });
  }

  /**
   * Resolves once the connection has no roots answer pending, or after timeoutMs, or on abort;
   * undefined when none is pending (every call asks: most have nothing to wait for).
   */
  settled(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> | undefined {
    const set = this.pending.get(key);
    if (!set || set.size === 0) return undefined;
    return new Promise<void>((resolveWait) => {
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolveWait();
      }
      signal?.addEventListener("abort", done, { once: true });
      void Promise.all([...set]).then(done);
    });
  }
}
