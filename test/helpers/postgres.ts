// A private PostgreSQL server for one test file: Debian's postgresql binaries (initdb, pg_ctl) on a
// fresh data directory, an ephemeral port and a socket directory of its own, so parallel test
// files never share a database and a test may stop and restart it (the fault tests). As root the
// server runs as the `postgres` user (PostgreSQL refuses root). When no binaries are installed or
// the server cannot start, `startPostgres` answers why, and the tests skip with that message.
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./servers.js";

export interface Postgres {
  /** postgres://mcphub@127.0.0.1:PORT/mcphub (password in PGPASSWORD-free trust auth on loopback). */
  url: string;
  port: number;
  stop(): void;
  start(): void;
  /** Stops the server immediately (fast shutdown) and starts it again. */
  restart(): void;
  destroy(): void;
}

function binDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}


export async function startPostgres(): Promise<Postgres | { skip: string }> {
  const bin = binDir();
  if (!bin) return { skip: "PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb); .ci/run installs Debian's postgresql" };
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "mcphub-pg-"));
  const data = join(dir, "data");
  const sock = join(dir, "sock");
  const asPg = (cmd: string, args: string[]) => (root ? spawnSync("runuser", ["-u", "postgres", "--", join(bin, cmd), ...args], { encoding: "utf8" }) : spawnSync(join(bin, cmd), args, { encoding: "utf8" }));
  try {
    if (root) chownSync(dir, uidOf("postgres"), gidOf("postgres"));
    execFileSync("mkdir", ["-p", sock]);
    if (root) chownSync(sock, uidOf("postgres"), gidOf("postgres"));
  } catch (err) {
    return { skip: `PostgreSQL cannot start here: ${err instanceof Error ? err.message : String(err)}` };
  }
  const init = asPg("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"]);
  if (init.status !== 0) return { skip: `PostgreSQL cannot start here: initdb failed: ${(init.stderr || init.stdout).trim().slice(0, 300)}` };
  const port = await freePort();
  const opts = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${sock} -c fsync=off -c max_connections=100`;
  const start = () => {
    const r = asPg("pg_ctl", ["-D", data, "-o", opts, "-w", "-t", "60", "-l", join(dir, "log"), "start"]);
    if (r.status !== 0) throw new Error(`pg_ctl start failed: ${(r.stderr || r.stdout).trim()}`);
  };
  const stop = () => {
    asPg("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
  };
  try {
    start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `PostgreSQL cannot start here: ${err instanceof Error ? err.message : String(err)}` };
  }
  const psql = (sql: string) => asPg("psql", ["-h", sock, "-p", String(port), "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-c", sql]);
  for (const sql of ["CREATE ROLE mcphub LOGIN", "CREATE DATABASE mcphub OWNER mcphub"]) {
    const r = psql(sql);
    if (r.status !== 0) throw new Error(`psql ${sql}: ${r.stderr}`);
  }
  return {
    url: `postgres://mcphub@127.0.0.1:${port}/mcphub`,
    port,
    stop,
    start,
    restart: () => {
      stop();
      start();
    },
    destroy: () => {
      stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function uidOf(user: string): number {
  return Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
}
function gidOf(user: string): number {
  return Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());
}
