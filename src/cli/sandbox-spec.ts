// `mcphub add --sandbox SPEC` (repeatable): `off`, `on`, or comma-separated settings
// `network=none|loopback|full`, `read=PATH`, `write=PATH`, `env=NAME` (read/write/env repeat).
// Paths are as typed on a command line: a relative one is made absolute against the current
// directory (in the config file it would be relative to the file's folder, which is rarely what
// someone typing `write=.` means). The config's own validation checks the values afterwards.
import { resolve } from "node:path";
import { CliError } from "./context.js";

export type SandboxSpec = false | { network?: string; read?: string[]; write?: string[]; env?: string[] };

const USAGE = "use off, on, or network=none|loopback|full, read=PATH, write=PATH, env=NAME (comma-separated or repeated)";

export function parseSandboxSpecs(specs: string[], cwd: string = process.cwd()): SandboxSpec | undefined {
  if (specs.length === 0) return undefined;
  let off = false;
  const out: { network?: string; read?: string[]; write?: string[]; env?: string[] } = {};
  for (const spec of specs) {
    for (const part of spec.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
      if (part === "off" || part === "false") {
        off = true;
        continue;
      }
      if (part === "on" || part === "true") continue;
      const eq = part.indexOf("=");
      const key = eq > 0 ? part.slice(0, eq) : part;
      const value = eq > 0 ? part.slice(eq + 1) : "";
      if (value === "") throw new CliError(`--sandbox "${part}": expected KEY=VALUE; ${USAGE}`);
      switch (key) {
        case "network":
          if (out.network !== undefined && out.network !== value) throw new CliError(`--sandbox: network is given twice (${out.network}, ${value})`);
          out.network = value;
          break;
        case "read":
        case "write": {
          const path = value === "roots" || value.startsWith("~") ? value : resolve(cwd, value);
          const list = (out[key] ??= []);
          if (!list.includes(path)) list.push(path);
          break;
        }
        case "env":
          (out.env ??= []).push(value);
          break;
        default:
          throw new CliError(`--sandbox "${part}": unknown setting "${key}"; ${USAGE}`);
      }
    }
  }
  if (off) {
    if (Object.keys(out).length > 0) throw new CliError("--sandbox off cannot be combined with sandbox settings");
    return false;
  }
  return out;
}
