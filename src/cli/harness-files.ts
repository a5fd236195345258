// The config files of every harness mcphub knows (src/harness/registry.ts), for the sandbox to
// hide. The registry belongs to the CLI's side of the house, so the CLI hands the paths down to the
// gateway (and to doctor's checks); the sandbox itself never imports the harness part.
import { homeDir } from "../config/paths.js";
import { allAdapters } from "../harness/registry.js";

export function harnessFiles(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = homeDir(env);
  return allAdapters().map((a) => a.defaultPath(home));
}
