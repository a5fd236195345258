// Live config for a running gateway (`mcp serve` and `up`): the config module watches and
// validates the file, this applies each valid edit to the hub as a diff and reports it in one
// line; SIGHUP re-reads the file at once. An invalid edit is one error line and changes nothing;
// an edit that would empty the config is one warning line and waits for a second save or SIGHUP.
import { watchConfig } from "../config/watch.js";
import type { Hub, ReloadSummary } from "../gateway/index.js";

export type Report = (level: "info" | "warn" | "error", message: string) => void;

export interface FollowOptions {
  path: string;
  report: Report;
  /** For tests: a shorter debounce. */
  debounceMs?: number;
}

export function followConfig(hub: Hub, opts: FollowOptions): { close(): void } {
  const watcher = watchConfig({
    path: opts.path,
    ...(opts.debounceMs !== undefined ? { debounceMs: opts.debounceMs } : {}),
    running: () => hub.config,
    onConfig: (config, why) => {
      const summary = hub.applyConfig(config);
      const how = why === "signal" ? " (SIGHUP)" : why === "confirmed" ? " (saved again)" : "";
      opts.report("info", `config reloaded${how}: ${describeReload(summary)}`);
      if (summary.needsRestart.length > 0) {
        opts.report("warn", `config: ${summary.needsRestart.join(", ")} changed; that takes effect only after a restart`);
      }
    },
    onError: (message) => opts.report("error", `config reload failed: ${message}`),
    onHold: (message) => opts.report("warn", `config change held: ${message}`),
  });
  const onHup = () => watcher.reload();
  process.on("SIGHUP", onHup);
  return {
    close: () => {
      process.off("SIGHUP", onHup);
      watcher.close();
    },
  };
}

export function describeReload(s: ReloadSummary): string {
  const parts: string[] = [];
  if (s.added.length) parts.push(`added ${s.added.join(", ")}`);
  if (s.removed.length) parts.push(`removed ${s.removed.join(", ")}`);
  if (s.restarted.length) parts.push(`restarted ${s.restarted.join(", ")}`);
  if (s.updated.length) parts.push(`updated ${s.updated.join(", ")}`);
  if (s.settings.length) parts.push(`changed ${s.settings.join(", ")}`);
  return parts.length ? parts.join("; ") : "no changes";
}
