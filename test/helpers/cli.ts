// runCli: spawn the real `mcphub` CLI as a process in an isolated environment and collect its
// output. By default it runs the sources through tsx (no build needed); with MCPHUB_TEST_CLI=bin
// it runs the built `node bin/mcphub.js` (after `npm run build`), which is what users run.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

export const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin", "mcphub.js");
const ENTRY = join(ROOT, "test", "helpers", "cli-entry.ts");
// An absolute loader URL: the CLI runs with a temp cwd, where a bare "tsx" would not resolve.
const TSX_LOADER = pathToFileURL(join(ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  input?: string;
}

export function cliCommand(): string[] {
  if (process.env.MCPHUB_TEST_CLI === "bin") return [BIN];
  return ["--import", TSX_LOADER, ENTRY];
}

export function runCli(args: string[], opts: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...cliCommand(), ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { ...(opts.env ?? process.env), NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(opts.input ?? "");
  });
}

export interface CliSandbox {
  dir: string;
  home: string;
  config: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  run(args: string[], opts?: Omit<RunOptions, "env">): Promise<CliResult>;
  cleanup(): void;
}

/** A temp HOME, data dir and config path (MCPHUB_CONFIG), with keychain and passphrases off. */
export function cliSandbox(prefix = "mcphub-cli-"): CliSandbox {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const home = join(dir, "home");
  const config = join(dir, "mcphub.yaml");
  const dataDir = join(dir, "data");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    MCPHUB_HOME_DIR: home,
    MCPHUB_DATA_DIR: dataDir,
    MCPHUB_CONFIG: config,
    MCPHUB_KEYCHAIN: "off",
  };
  delete env.MCPHUB_VAULT_PASSPHRASE;
  delete env.MCPHUB_VAULT_PASSPHRASE_FILE;
  return {
    dir,
    home,
    config,
    dataDir,
    env,
    run: (args, opts = {}) => runCli(args, { ...opts, env, cwd: opts.cwd ?? dir }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
