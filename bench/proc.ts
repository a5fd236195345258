// Process accounting for benchmarks, from /proc (Linux): the descendants of a process and the
// resident memory of a process tree, so downstream servers can be counted and weighed.
import { readdirSync, readFileSync } from "node:fs";

/** Child pids of every process. */
export function childrenMap(): Map<number, number[]> {
  const map = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name may hold spaces and parentheses: fields resume after the last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = map.get(ppid) ?? [];
      list.push(Number(entry));
      map.set(ppid, list);
    } catch {
      // exited while listing
    }
  }
  return map;
}

export function descendants(pid: number, map = childrenMap()): number[] {
  const out: number[] = [];
  for (const c of map.get(pid) ?? []) out.push(c, ...descendants(c, map));
  return out;
}

/** Resident set size in bytes of the processes and all their descendants. */
export function rssTree(pids: number[]): { bytes: number; processes: number } {
  const map = childrenMap();
  const all = new Set<number>();
  for (const p of pids) for (const q of [p, ...descendants(p, map)]) all.add(q);
  let kb = 0;
  for (const p of all) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // exited
    }
  }
  return { bytes: kb * 1024, processes: all.size };
}
