// The README's example config (mcphub.example.yaml: everything, memory, files) made runnable in a
// test: paths made absolute, state kept inside the test's home, npx run in the repository (where
// it finds the packages installed, no network needed).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { ROOT, type TempHome } from "./gateway.js";

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

/** mcphub.example.yaml as an object, ready to run in `home` (files serves `home.dir`). */
export function exampleConfigObject(home: TempHome): ExampleConfig {
  const config = YAML.parse(readFileSync(join(ROOT, "mcphub.example.yaml"), "utf8")) as ExampleConfig;
  for (const server of Object.values(config.servers)) {
    if (server.command === undefined) continue; // the disabled remote example
    server.cwd = ROOT;
    server.args = (server.args ?? []).map((a) => (a === "." ? home.dir : a));
    if (server.env?.["MEMORY_FILE_PATH"] !== undefined) server.env["MEMORY_FILE_PATH"] = join(home.dir, "memory.jsonl");
  }
  return config;
}

/** The example config written into `home`; returns its path. */
export function exampleConfig(home: TempHome): string {
  return home.writeConfig(exampleConfigObject(home));
}
