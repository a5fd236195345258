// The few questions a sandbox plan asks of the file system, behind an interface so the plan is a
// pure function that tests can feed any tree.
import { closeSync, lstatSync, openSync, readlinkSync, readSync, realpathSync, statSync } from "node:fs";

export type EntryKind = "dir" | "file" | "other";

export interface FsProbe {
  /** What is at `p`, following symlinks; undefined when nothing (or a dangling link) is there. */
  kind(p: string): EntryKind | undefined;
  /** The target of a symlink at `p` (not followed further); undefined when `p` is not one. */
  link(p: string): string | undefined;
  /** `p` with every symlink resolved; `p` itself when that fails. */
  realpath(p: string): string;
  /** The first line of the file at `p` (at most 256 bytes); undefined when it cannot be read. */
  firstLine(p: string): string | undefined;
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
  firstLine(p) {
    let fd: number | undefined;
    try {
      fd = openSync(p, "r");
      const buf = Buffer.alloc(256);
      const n = readSync(fd, buf, 0, buf.length, 0);
      return buf.subarray(0, n).toString("latin1").split("\n")[0];
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  },
};
