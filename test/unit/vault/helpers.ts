// Shared helpers for the vault tests: private temp data dirs, an environment that never touches
// the real keychain, and a line-protocol client for fixtures/worker.ts child processes.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

export const REPO_ROOT = resolve(import.meta.dirname, "../../..");
export const WORKER = join(import.meta.dirname, "fixtures", "worker.ts");
export const CLI = join(import.meta.dirname, "fixtures", "cli.ts");

const dirs: string[] = [];

export async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mcphub-vault-"));
  dirs.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** An environment for the vault under test: its own data dir, keychain off, no passphrase. */
export function vaultEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MCPHUB_DATA_DIR: dataDir, HOME: dataDir, MCPHUB_KEYCHAIN: "off", ...extra };
  if (!("MCPHUB_VAULT_PASSPHRASE" in extra)) delete env.MCPHUB_VAULT_PASSPHRASE;
  if (!("MCPHUB_VAULT_PASSPHRASE_FILE" in extra)) delete env.MCPHUB_VAULT_PASSPHRASE_FILE;
  return env;
}

/** Every regular file under `dir`, recursively. */
export async function allFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await allFiles(p)));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

export async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777;
}

export async function bytesOf(path: string): Promise<Buffer> {
  return readFile(path);
}

/** A running fixtures/worker.ts: send() writes one JSON command and resolves with its reply. */
export class Worker {
  private readonly replies: ((line: string) => void)[] = [];
  private readonly buffered: string[] = [];
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      const waiter = this.replies.shift();
      if (waiter) waiter(line);
      else this.buffered.push(line);
    });
    this.exited = new Promise((res) => child.on("exit", (code) => res(code)));
  }

  static async start(env: NodeJS.ProcessEnv, wrap: string[] = []): Promise<Worker> {
    const argv = [...wrap, process.execPath, "--import", "tsx", WORKER];
    const child = spawn(argv[0]!, argv.slice(1), { cwd: REPO_ROOT, env, stdio: ["pipe", "pipe", "inherit"] });
    const worker = new Worker(child);
    const ready = JSON.parse(await worker.next()) as { ready?: boolean };
    if (!ready.ready) throw new Error("worker did not start");
    return worker;
  }

  private next(): Promise<string> {
    const line = this.buffered.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((res, rej) => {
      this.replies.push(res);
      this.child.once("exit", (code) => rej(new Error(`worker exited (${code}) before replying`)));
    });
  }

  async send<T = Record<string, unknown>>(msg: Record<string, unknown>): Promise<T> {
    this.child.stdin!.write(`${JSON.stringify(msg)}\n`);
    return JSON.parse(await this.next()) as T;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Runs the vault CLI (fixtures/cli.ts) with `stdin` piped in. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, stdin = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], { cwd: REPO_ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", rej);
    child.on("exit", (code) => res({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}
