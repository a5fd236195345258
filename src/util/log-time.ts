// Timestamps for a daemon's stderr lines (`mcphub up`): `2026-11-30T16:19:41.123Z mcphub: ...`.
// Under systemd, when stderr is the journal stream (JOURNAL_STREAM names our stderr's device and
// inode), the journal stamps every line itself, so the prefix is left out there.
import { fstatSync } from "node:fs";

/** Whether fd 2 is the journal stream systemd gave this process. */
export function stderrIsJournal(env: NodeJS.ProcessEnv = process.env): boolean {
  const m = /^(\d+):(\d+)$/.exec(env.JOURNAL_STREAM ?? "");
  if (!m) return false;
  try {
    const st = fstatSync(2);
    return String(st.dev) === m[1] && String(st.ino) === m[2];
  } catch {
    return false;
  }
}

/** A function that prefixes a line with the current UTC time, or leaves it alone under the journal. */
export function timestamper(env: NodeJS.ProcessEnv = process.env, now: () => Date = () => new Date()): (line: string) => string {
  if (stderrIsJournal(env)) return (line) => line;
  return (line) => `${now().toISOString()} ${line}`;
}
