// Shared helpers for the downstream tests: fixture server configs, temp files, polling.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ServerConfig } from "../../../src/config/schema.js";
import { Supervisor } from "../../../src/downstream/supervisor.js";
import type { SupervisorOptions } from "../../../src/downstream/types.js";

export const FIXTURES = resolve(import.meta.dirname, "../../fixtures");

export function fixture(file: string, extra: Partial<ServerConfig> = {}): ServerConfig {
  return { command: process.execPath, args: [join(FIXTURES, file)], enabled: true, ...extra };
}

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "mcphub-ds-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function lines(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter((l) => l !== "");
  } catch {
    return [];
  }
}

/** Polls until `check` holds; fails with `what` after `ms`. Used only for events in other processes. */
export async function eventually(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const quietLog = () => {};

/** Every live descendant pid of `root` (children, grandchildren, ...), read from /proc. */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parent.set(Number(entry), Number(fields[1]));
    } catch {
      // the process went away while we looked
    }
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const p = queue.shift()!;
    for (const [pid, ppid] of parent) {
      if (ppid === p) {
        out.push(pid);
        queue.push(pid);
      }
    }
  }
  return out;
}

/** True when the pid exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

export function textOf(result: { content?: unknown }): string {
  const content = (result.content ?? []) as { type: string; text?: string }[];
  return content.map((c) => c.text ?? "").join("");
}

/**
 * Supervisors and temp dirs for one test file, with the fixture defaults (quiet log, fast
 * backoff); `cleanup()` (in afterEach) closes every supervisor and removes every dir.
 */
export function supervisorKit() {
  const open: Supervisor[] = [];
  const dirs: (() => void)[] = [];
  return {
    supervisor(servers: Record<string, ServerConfig>, extra: Partial<SupervisorOptions> = {}): Supervisor {
      const sup = new Supervisor({
        servers,
        connectTimeoutMs: 20_000,
        clientInfo: { name: "mcphub", version: "test" },
        log: quietLog,
        backoff: { initialMs: 10, maxMs: 200 },
        ...extra,
      });
      open.push(sup);
      return sup;
    },
    tmp(): string {
      const t = tempDir();
      dirs.push(t.cleanup);
      return t.dir;
    },
    async cleanup(): Promise<void> {
      await Promise.all(open.splice(0).map((s) => s.close()));
      for (const c of dirs.splice(0)) c();
    },
  };
}
