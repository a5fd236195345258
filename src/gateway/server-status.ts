// One server's status as every surface reports it: the `list_servers` management tool and the
// daemon's status page both read it from here, so the two never disagree about a state.
import { homedir } from "node:os";
import { isSandboxed, ROOTS_ENTRY, type SandboxNetwork } from "../config/sandbox.js";
import type { ServerConfig } from "../config/schema.js";
import type { SandboxSummary } from "../sandbox/index.js";
import type { Hub } from "./hub.js";

/**
 * How a stdio server is confined: `off`, or its sandbox. `live` is what the running process got
 * (resolved roots, the runtime paths, what was covered); otherwise the configured settings.
 */
export type SandboxStatus =
  | { mode: "off" }
  | ({ mode: "on"; live: boolean; network: SandboxNetwork } & Partial<Omit<SandboxSummary, "network">> & { read: string[]; write: string[] });

export interface ServerStatus {
  name: string;
  enabled: boolean;
  connected: boolean;
  /**
   * The supervisor's state (`idle`, `ready`, `connecting`, `failed`, `locked`, ...), `disabled`,
   * or `not_started` for an enabled server this process does not start (outside `--agent`'s
   * scope). Surfaces must render states they do not know: more will come.
   */
  state: string;
  /** Where the server's catalogue entries come from: its live session, the cache, or nowhere yet. */
  catalog: "live" | "cached" | "none";
  /** When that listing was fetched from the server (epoch ms). */
  catalogListedAt?: number;
  transport: "stdio" | "http" | "sse";
  description?: string;
  tags?: string[];
  use_when?: string[];
  /** Last connect or transport error, sanitised by the downstream layer. */
  error?: string;
  /** For `needs_auth`: the exact command that signs the server in. */
  sign_in?: string;
  /** Sanitised tail of a stdio server's stderr. */
  stderrTail?: string;
  serverVersion?: { name: string; version: string };
  /** Stdio servers only. */
  sandbox?: SandboxStatus;
}

function sandboxStatus(cfg: ServerConfig, live: SandboxSummary | undefined): SandboxStatus | undefined {
  if (cfg.url !== undefined) return undefined;
  if (!isSandboxed(cfg.sandbox)) return { mode: "off" };
  if (live) return { mode: "on", live: true, ...live };
  const home = homedir();
  const short = (p: string) => (p === ROOTS_ENTRY ? p : p === home ? "~" : p.startsWith(`${home}/`) ? `~${p.slice(home.length)}` : p);
  return { mode: "on", live: false, network: cfg.sandbox.network ?? "none", read: (cfg.sandbox.read ?? []).map(short), write: (cfg.sandbox.write ?? []).map(short), env: cfg.sandbox.env ?? [] };
}

/** Undefined for a server that is not in the running config. */
export function serverStatus(hub: Hub, name: string): ServerStatus | undefined {
  const cfg = hub.config.servers[name];
  if (!cfg) return undefined;
  // The catalogue follows the supervisor one tick late; bring it up to date so a surface never
  // reports a server as ready with the tool count of before.
  hub.syncServer(name);
  const snap = hub.supervisor.snapshot(name);
  const state = !cfg.enabled ? "disabled" : (snap?.state ?? (hub.willStart(name) ? "idle" : "not_started"));
  const listing = cfg.enabled ? hub.catalog.listingOf(name) : undefined;
  return {
    name,
    enabled: cfg.enabled,
    connected: snap?.connected === true,
    state,
    // A listing is live only while its session is: the catalogue learns of a stop one event-loop
    // turn after the supervisor, and a request may be answered in between.
    catalog: listing ? (listing.source === "live" && snap?.connected === true ? "live" : "cached") : "none",
    ...(listing ? { catalogListedAt: listing.fetchedAt } : {}),
    transport: cfg.url ? (cfg.transport ?? "http") : "stdio",
    ...(cfg.description !== undefined ? { description: cfg.description } : {}),
    ...(cfg.tags?.length ? { tags: cfg.tags } : {}),
    ...(cfg.use_when?.length ? { use_when: cfg.use_when } : {}),
    ...(snap?.error ? { error: snap.error } : {}),
    ...(state === "needs_auth" ? { sign_in: hub.signInCommand(name) } : {}),
    ...(snap?.stderrTail ? { stderrTail: snap.stderrTail } : {}),
    ...(snap?.serverVersion ? { serverVersion: snap.serverVersion } : {}),
    ...withSandbox(sandboxStatus(cfg, snap?.connected ? snap.sandbox : undefined)),
  };
}

function withSandbox(s: SandboxStatus | undefined): { sandbox?: SandboxStatus } {
  return s ? { sandbox: s } : {};
}
