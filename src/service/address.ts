// Where a running daemon listens, recorded in the data directory so that the CLI (`open`, `doctor`,
// `status`, `service status`) finds it whatever address it was started with (`--listen`, `listen:`,
// port 0). One file per daemon process, `<data dir>/daemons/<pid>.json` (0600 in a 0700 folder):
// several daemons may share a data directory (different ports), and each removes only its own file
// on a clean exit. A file whose process is gone (a crash, SIGKILL) is stale: readers drop it.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

export const DAEMONS_DIR = "daemons";

const recordSchema = z.object({
  pid: z.number().int().positive(),
  /** The MCP endpoint, `http://HOST:PORT/mcp` (a wildcard bind is recorded as it was bound). */
  url: z.string(),
  host: z.string(),
  port: z.number().int().min(1).max(65535),
  /** The config file the daemon runs (absolute), when it has one. */
  config: z.string().optional(),
  started: z.string(),
  version: z.string(),
});

export type DaemonRecord = z.infer<typeof recordSchema>;

function dirOf(dataDir: string): string {
  return join(dataDir, DAEMONS_DIR);
}

/**
 * Records this process as a daemon listening at `rec.url`. Returns the function that removes the
 * record (idempotent); it is also removed when the process exits normally.
 */
export function recordDaemon(dataDir: string, rec: Omit<DaemonRecord, "pid" | "started"> & { pid?: number }): () => void {
  const dir = dirOf(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const full: DaemonRecord = { ...rec, pid: rec.pid ?? process.pid, started: new Date().toISOString() };
  const file = join(dir, `${full.pid}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(full)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    process.off("exit", remove);
    rmSync(file, { force: true });
  };
  process.on("exit", remove);
  return remove;
}

/** Whether a process with this pid exists (EPERM: it does, as another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The daemons recorded in the data directory whose process still runs, newest first; stale files are removed. */
export function liveDaemons(dataDir: string): DaemonRecord[] {
  const dir = dirOf(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: DaemonRecord[] = [];
  for (const name of names) {
    if (!/^\d+\.json$/.test(name)) continue;
    const file = join(dir, name);
    let rec: DaemonRecord;
    try {
      const parsed = recordSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
      if (!parsed.success) continue;
      rec = parsed.data;
    } catch {
      continue;
    }
    if (!pidAlive(rec.pid)) {
      rmSync(file, { force: true });
      continue;
    }
    out.push(rec);
  }
  return out.sort((a, b) => (a.started < b.started ? 1 : a.started > b.started ? -1 : 0));
}

/**
 * The daemon a command means: the newest live one running `configPath`, else the only live one,
 * else undefined (none, or several for other configs: the caller falls back to the configured address).
 */
export function findDaemon(dataDir: string, configPath?: string): DaemonRecord | undefined {
  const live = liveDaemons(dataDir);
  const mine = configPath !== undefined ? live.find((d) => d.config === configPath) : undefined;
  if (mine) return mine;
  return live.length === 1 ? live[0] : undefined;
}

/** The loopback base URL to reach a recorded daemon (a wildcard bind is reached over loopback). */
export function reachableBase(rec: Pick<DaemonRecord, "host" | "port">): string {
  let host = rec.host;
  if (host === "0.0.0.0" || host === "") host = "127.0.0.1";
  if (host === "::") host = "::1";
  return `http://${host.includes(":") ? `[${host}]` : host}:${rec.port}/`;
}
