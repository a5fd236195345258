// What the page's buttons do. Reconnect acts on the running daemon only. Enable/disable is a
// config change: it is written to the config file first (through editConfig, which keeps YAML
// comments and a backup, and writes nothing when the result would be invalid), then applied to
// the running daemon, so a restart keeps what the operator chose.
import { editConfig } from "../../config/index.js";
import { errorText } from "../../util/errors.js";
import type { StatusSources } from "./model.js";

export const ACTIONS = ["reconnect", "enable", "disable"] as const;
export type ServerAction = (typeof ACTIONS)[number];

export interface ActionResult {
  status: number;
  message: string;
}

/** Config edits one at a time: two quick clicks must not race on the file. */
let queue: Promise<unknown> = Promise.resolve();

export async function runAction(src: StatusSources, server: string, action: ServerAction): Promise<ActionResult> {
  const { hub } = src;
  const cfg = hub.config.servers[server];
  if (!cfg) return { status: 404, message: `unknown server "${server}"` };
  if (action === "reconnect") {
    if (!cfg.enabled) return { status: 409, message: `server "${server}" is disabled; enable it first` };
    if (!hub.willStart(server)) {
      return { status: 409, message: `server "${server}" is outside this daemon's --agent scope, so it is never started here` };
    }
    hub.supervisor.reconnect(server);
    return { status: 202, message: `reconnecting ${server}` };
  }
  const enabled = action === "enable";
  const path = src.configPath;
  if (!path) return { status: 409, message: "this daemon was started without a config file, so the change cannot be saved" };
  const run = queue.then(async (): Promise<ActionResult> => {
    let missing = false;
    try {
      await editConfig(path, (ed) => {
        if (!ed.has(["servers", server])) {
          missing = true;
          return;
        }
        ed.set(["servers", server, "enabled"], enabled);
      });
    } catch (err) {
      return { status: 409, message: `could not save the change: ${errorText(err)}` };
    }
    if (missing) {
      return { status: 409, message: `server "${server}" is no longer in ${path}; the daemon drops it when it reloads the file` };
    }
    await hub.setServerEnabled(server, enabled);
    return { status: 200, message: `${server} ${enabled ? "enabled" : "disabled"} (saved to ${path})` };
  });
  queue = run.catch(() => undefined);
  return run;
}
