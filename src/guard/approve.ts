// What `mcphub approve` and `mcphub doctor` read and do, without a running gateway: the tools
// whose definitions wait for an operator (changed since approved, or never approved on a
// quarantined server), read from the pinned-definition store, and the approval itself. Running
// gateways see an approval on their next call (the files: a stat per call; PostgreSQL: NOTIFY).
import { planPublicNames } from "../catalog/names.js";
import type { Store } from "../store/index.js";
import type { Config } from "../config/index.js";
import { byteOrder } from "../util/json/canonical.js";
import { changeSummary, descriptionDiff, type PinnedDefinition } from "./definitions.js";
import { DefinitionStore } from "./store.js";

export interface PendingTool {
  server: string;
  wire: string;
  namespaced: string;
  state: "changed" | "awaiting_approval";
  /** What changed (for a changed tool); model-safe lines. */
  changes: string[];
  /** Both versions of the description, clipped, when it changed (for the operator). */
  description?: { before: string; after: string };
  /** When a gateway first saw this version. */
  seen: string;
}

export interface UnreadableFile {
  server: string;
  file: string;
  problem: string;
}

export class ApproveError extends Error {
  override name = "ApproveError";
}

/** The configured servers with recorded definitions, by name. */
function storedServers(store: DefinitionStore, config: Config): string[] {
  const names = store.servers();
  return names.filter((n) => Object.hasOwn(config.servers, n)).sort(byteOrder);
}

/** The tools waiting for an approval, and definition files that cannot be read, per configured server. */
export function pendingApprovals(dataDir: string | Store, config: Config, only?: string): { pending: PendingTool[]; unreadable: UnreadableFile[] } {
  const store = new DefinitionStore(dataDir);
  const pending: PendingTool[] = [];
  const unreadable: UnreadableFile[] = [];
  for (const server of storedServers(store, config)) {
    if (only !== undefined && server !== only) continue;
    if (config.servers[server]?.pin_definitions === false) continue;
    const records = store.read(server);
    if ("unreadable" in records) {
      unreadable.push({ server, file: store.pathOf(server), problem: records.unreadable });
      continue;
    }
    const plan = planPublicNames(server, Object.keys(records.tools));
    for (const wire of Object.keys(records.tools).sort(byteOrder)) {
      const rec = records.tools[wire];
      if (!rec?.pending) continue;
      const namespaced = `${server}__${plan.publicOf(wire)}`;
      const before = rec.approved?.definition as PinnedDefinition | undefined;
      const after = rec.pending.definition as PinnedDefinition;
      const diff = before ? descriptionDiff(before, after) : undefined;
      pending.push({
        server,
        wire,
        namespaced,
        state: before ? "changed" : "awaiting_approval",
        changes: before ? changeSummary(before, after) : [],
        ...(diff ? { description: diff } : {}),
        seen: rec.pending.seen,
      });
    }
  }
  return { pending, unreadable };
}

export interface Approved {
  server: string;
  wire: string;
  namespaced: string;
  state: "changed" | "awaiting_approval";
  changes: string[];
}

/**
 * Approves what `names` select: `server__tool` (any accepted spelling) approves that tool's
 * pending definition, `server` every pending definition of the server. Every name is checked
 * before anything is written, so a typo approves nothing.
 */
export async function approveTools(dataDir: string | Store, config: Config, names: readonly string[], now = Date.now()): Promise<Approved[]> {
  const { pending, unreadable } = pendingApprovals(dataDir, config);
  const store = new DefinitionStore(dataDir);
  const selected = new Map<string, Set<string>>();
  for (const name of names) {
    const sep = name.indexOf("__");
    const server = sep < 0 ? name : name.slice(0, sep);
    if (!Object.hasOwn(config.servers, server)) {
      const known = Object.keys(config.servers).sort(byteOrder);
      throw new ApproveError(`unknown server "${server}"${known.length ? `; configured servers: ${known.join(", ")}` : " (no servers are configured)"}`);
    }
    const bad = unreadable.find((u) => u.server === server);
    if (bad) throw new ApproveError(`${bad.file} cannot be read (${bad.problem}); fix it, or delete it to record ${server}'s tools afresh`);
    if (config.servers[server]?.pin_definitions === false) {
      throw new ApproveError(`server "${server}" has pin_definitions: false, so its tool definitions are not pinned and need no approval`);
    }
    const mine = pending.filter((p) => p.server === server);
    const set = selected.get(server) ?? new Set<string>();
    const records = store.read(server);
    const wires = "tools" in records ? Object.keys(records.tools) : [];
    const unseen = `no tool of server "${server}" has been seen yet; its tools are recorded when a gateway (mcphub mcp serve, mcphub up) first lists them`;
    if (wires.length === 0) throw new ApproveError(unseen);
    if (sep < 0) {
      if (mine.length === 0) throw new ApproveError(`nothing of server "${server}" waits for an approval (its recorded tool definitions are all approved)`);
      for (const p of mine) set.add(p.wire);
    } else {
      const plan = planPublicNames(server, wires);
      const wire = plan.resolve(name.slice(sep + 2));
      if (wire === undefined) {
        const listed = wires.map((w) => `${server}__${plan.publicOf(w)}`).sort(byteOrder).join(", ");
        throw new ApproveError(`no recorded definition for ${name}; recorded tools of ${server}: ${listed}`);
      }
      if (!mine.some((p) => p.wire === wire)) throw new ApproveError(`${name} does not wait for an approval: its definition is the one approved`);
      set.add(wire);
    }
    selected.set(server, set);
  }
  const out: Approved[] = [];
  for (const [server, wires] of selected) {
    const done = await store.approve(server, [...wires], now);
    for (const d of done) {
      const p = pending.find((x) => x.server === server && x.wire === d.wire);
      out.push({ server, wire: d.wire, namespaced: p?.namespaced ?? `${server}__${d.wire}`, state: d.before ? "changed" : "awaiting_approval", changes: d.before ? changeSummary(d.before, d.after) : [] });
    }
  }
  return out;
}
