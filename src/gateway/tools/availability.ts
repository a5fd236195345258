// Failure-aware discovery: which of the agent's servers cannot serve now (failed, waiting for
// sign-in, vault locked, disabled), why, and what fixes it; and, for those whose tools are not in
// the catalogue (never listed, or disabled), a small ranking of what they are known to offer (the
// cached tools of a disabled server, else the server's routing metadata), so a request such a
// server would serve is answered with "that server is down: here is the fix", never with an
// unrelated tool and "reformulate".
import type { CatalogEntry, ServerMeta } from "../../catalog/types.js";
import { entriesFor } from "../../catalog/catalog.js";
import { SearchIndex } from "../../catalog/search/index.js";
import type { OfflineServers, ServerUnavailable } from "../../catalog/search/responses.js";
import { clipUtf8, collapseWhitespace } from "../../util/text.js";
import { serverMeta, type Hub } from "../hub.js";
import { serverStatus, type ServerStatus } from "../server-status.js";
import type { AgentView } from "../view.js";

/** States in which a server's tools cannot be called now (idle and connecting servers start on demand). */
const DOWN = new Set(["failed", "needs_auth", "locked", "disabled"]);

/** A reason or stderr line an agent sees is one short line. */
const REASON_BYTES = 200;
/** Where the downstream layer quotes a failed server's stderr in its connect error. */
const STDERR_MARK = "downstream stderr: ";

export interface Availability {
  unavailable(server: string): ServerUnavailable | undefined;
  offline: OfflineServers | undefined;
}

/** The last line of a server's stderr that is not a stack frame: what it said when it failed. */
function lastLine(text: string | undefined): string | undefined {
  const lines = (text ?? "")
    .split(/\r?\n/u)
    .map((l) => collapseWhitespace(l))
    .filter((l) => l.length > 0 && !/^at\s/u.test(l));
  return lines.length > 0 ? lines[lines.length - 1] : undefined;
}

function describeDown(hub: Hub, st: ServerStatus): ServerUnavailable {
  const name = st.name;
  switch (st.state) {
    case "needs_auth":
      return { state: st.state, ...(st.error ? { reason: clipUtf8(st.error, REASON_BYTES) } : {}), fix: `run \`${st.sign_in ?? hub.operatorCommand(["auth", "login", name])}\`` };
    case "disabled":
      return { state: st.state, reason: "disabled in the gateway config", fix: `run \`${hub.operatorCommand(["enable", name])}\`` };
    case "locked":
      return {
        state: st.state,
        ...(st.error ? { reason: clipUtf8(st.error, REASON_BYTES) } : {}),
        fix: `give the gateway its vault passphrase (MCPHUB_VAULT_PASSPHRASE or the OS keychain); \`${hub.operatorCommand(["vault", "status"])}\` says why it is locked`,
      };
    default: {
      const stderr = lastLine(st.stderrTail);
      // The connect error usually quotes the stderr line that explains it: that part is the reason
      // (the protocol error before it only says the connection closed).
      const error = st.error?.includes(STDERR_MARK) ? st.error.slice(st.error.indexOf(STDERR_MARK) + STDERR_MARK.length) : st.error;
      const reason = [error, stderr && !(st.error ?? "").includes(stderr) ? `stderr: ${stderr}` : undefined].filter(Boolean).join("; ");
      return { state: st.state, ...(reason ? { reason: clipUtf8(reason, REASON_BYTES) } : {}), fix: `run \`${hub.operatorCommand(["doctor", "--server", name])}\`` };
    }
  }
}

/** A stand-in for a server whose tools are unknown: its routing metadata, matched at the server level. */
function profileOf(server: string, meta: ServerMeta | undefined): CatalogEntry {
  return {
    server,
    tool: "",
    namespaced: `${server}__`,
    wire: "",
    description: "",
    inputSchema: { type: "object" },
    definition: { name: "", inputSchema: { type: "object" } },
    ...(meta?.description !== undefined ? { serverDescription: meta.description } : {}),
    tags: meta?.tags ?? [],
    useWhen: meta?.use_when ?? [],
    toolUseWhen: [],
  };
}

interface OfflineCache {
  key: string;
  offline: OfflineServers | undefined;
}
const offlineCache = new WeakMap<AgentView, OfflineCache>();

/** What this agent's servers can serve now, and the offline ranking of those that cannot. */
export function availabilityOf(hub: Hub, view: AgentView): Availability {
  const down = new Map<string, ServerUnavailable>();
  const offlineNames: string[] = [];
  const listed = new Set(view.entries().map((e) => e.server));
  for (const name of Object.keys(hub.config.servers).sort()) {
    if (!view.scope.allowsServer(name)) continue;
    const st = serverStatus(hub, name);
    if (!st) continue;
    // A server retrying after a failed attempt shows `connecting` between attempts (its backoff
    // is short at first), yet it cannot serve now: what it is, is failed, with the last error.
    // (hub.pendingServers does not wait for such a server either.)
    const state = st.state === "connecting" && st.error !== undefined ? "failed" : st.state;
    if (!DOWN.has(state)) continue;
    down.set(name, describeDown(hub, { ...st, state }));
    if (!listed.has(name)) offlineNames.push(name);
  }
  return { unavailable: (server) => down.get(server), offline: offlineRanking(hub, view, offlineNames, down) };
}

function offlineRanking(hub: Hub, view: AgentView, names: readonly string[], down: ReadonlyMap<string, ServerUnavailable>): OfflineServers | undefined {
  if (names.length === 0) return undefined;
  // A view lives until the next config reload; within it, what changes the offline set is which
  // servers are down and in which state.
  const key = JSON.stringify(names.map((n) => [n, down.get(n)?.state]));
  const hit = offlineCache.get(view);
  if (hit && hit.key === key) return hit.offline;
  const meta = serverMeta(hub.config);
  const index = new SearchIndex();
  for (const name of names) {
    const listing = hub.dormantListing(name);
    const entries = listing ? entriesFor(name, listing.tools, meta[name] ?? {}).filter((e) => view.allows(e)) : [];
    index.setServer(name, entries.length > 0 ? entries : [profileOf(name, meta[name])]);
  }
  const offline: OfflineServers = { ranker: index, isProfile: (e) => e.tool === "" };
  offlineCache.set(view, { key, offline });
  return offline;
}
