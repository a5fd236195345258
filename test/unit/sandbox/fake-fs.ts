// A file system for sandbox plans, described as data: "dir" / "file" entries, symlinks, and files
// that open with a given first line (scripts: `{ line: "#!/usr/bin/env node" }`).
import { posix } from "node:path";
import type { FsProbe } from "../../../src/sandbox/fs-probe.js";

export function fakeFs(entries: Record<string, "dir" | "file" | { link: string } | { line: string }>): FsProbe {
  const resolveLinks = (p: string, hops = 0): string => {
    if (hops > 20) return p;
    const parts = p.split("/").filter(Boolean);
    let cur = "/";
    for (let i = 0; i < parts.length; i++) {
      cur = posix.join(cur, parts[i] as string);
      const e = entries[cur];
      if (e !== undefined && typeof e === "object" && "link" in e) {
        const target = posix.resolve(posix.dirname(cur), e.link);
        return resolveLinks(posix.join(target, ...parts.slice(i + 1)), hops + 1);
      }
    }
    return cur;
  };
  const implied = (p: string) => Object.keys(entries).some((k) => k.startsWith(`${p}/`));
  return {
    kind(p) {
      const r = resolveLinks(p);
      const e = entries[r];
      if (e === "dir" || e === "file") return e;
      if (e !== undefined && typeof e === "object" && "line" in e) return "file";
      if (e === undefined && (r === "/" || implied(r))) return "dir";
      return undefined;
    },
    link(p) {
      const e = entries[p];
      return e !== undefined && typeof e === "object" && "link" in e ? e.link : undefined;
    },
    realpath(p) {
      return resolveLinks(p);
    },
    firstLine(p) {
      const e = entries[resolveLinks(p)];
      if (e === "file") return "";
      return e !== undefined && typeof e === "object" && "line" in e ? e.line : undefined;
    },
  };
}
