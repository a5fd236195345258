// The README's example config (mcphub.example.yaml: everything, memory, files) made runnable in a
// test: paths made absolute, state kept inside the test's home, npx run in the repository (where
// it finds the packages installed, no network needed).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { ROOT, type TempHome } from "./gateway.js";
import { sandboxUnavailable } from "./sandbox.js";

interface ExampleServer {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  [key: string]: unknown;
}

export interface ExampleConfig {
  servers: Record<string, ExampleServer>;
  [key: string]: unknown;
}

/** How the example's servers run: sandboxed as the file says (the default), or not. */
export interface ExampleOptions {
  /** false: `sandbox: off` at the top and for every server (where bubblewrap cannot start: exampleSandboxed). */
  sandboxed?: boolean;
}

/**
 * Whether the example's servers can run sandboxed here. Where bubblewrap cannot start, the suites
 * that test routing and answers on the example config run its servers unsandboxed and say so;
 * the sandbox itself is tested (and skipped, saying why) by the sandbox suites.
 */
export async function exampleSandboxed(): Promise<boolean> {
  const why = await sandboxUnavailable();
  if (why !== undefined) console.warn(`the example config's servers run unsandboxed in this suite (${why})`);
  return why === undefined;
}

/** mcphub.example.yaml as an object, ready to run in `home` (files serves `home.dir`). */
export function exampleConfigObject(home: TempHome, opts: ExampleOptions = {}): ExampleConfig {
  const config = YAML.parse(readFileSync(join(ROOT, "mcphub.example.yaml"), "utf8")) as ExampleConfig;
  // Off at the top too, so that a server a test adds runs unsandboxed as well.
  if (opts.sandboxed === false) config["sandbox"] = "off";
  for (const server of Object.values(config.servers)) {
    if (server.command === undefined) continue; // the disabled remote example
    if (opts.sandboxed === false) server["sandbox"] = "off";
    server.cwd = ROOT;
    server.args = (server.args ?? []).map((a) => (a === "." ? home.dir : a));
    if (server.env?.["MEMORY_FILE_PATH"] !== undefined) server.env["MEMORY_FILE_PATH"] = join(home.dir, "memory.jsonl");
  }
  return config;
}

/** The example config written into `home`; returns its path. */
export function exampleConfig(home: TempHome, opts: ExampleOptions = {}): string {
  return home.writeConfig(exampleConfigObject(home, opts));
}
