// The few questions a sandbox plan asks of the file system, behind an interface so the plan is a
// pure function that tests can feed any tree.
import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";

export type EntryKind = "dir" | "file" | "other";

export interface FsProbe {
  /** What is at `p`, following symlinks; undefined when nothing (or a dangling link) is there. */
  kind(p: string): EntryKind | undefined;
  /** The target of a symlink at `p` (not followed further); undefined when `p` is not one. */
  link(p: string): string | undefined;
  /** `p` with every symlink resolved; `p` itself when that fails. */
  realpath(p: string): string;
}

export const realFs: FsProbe = {
  kind(p) {
    try {
      const s = statSync(p);
      return s.isDirectory() ? "dir" : s.isFile() ? "file" : "other";
    } catch {
      return undefined;
    }
  },
  link(p) {
    try {
      return lstatSync(p).isSymbolicLink() ? readlinkSync(p) : undefined;
    } catch {
      return undefined;
    }
  },
  realpath(p) {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  },
};
