// Pin commands: `pin` lists or adds global pins (or takes the most-called tools with --top),
// `unpin` removes them. The config validator checks every pin names a configured server.
import type { Command } from "commander";
import { editConfig, pinServer } from "../../config/index.js";
import { planPublicNames } from "../../catalog/names.js";
import { closest } from "../../config/errors.js";
import type { Config } from "../../config/index.js";
import { probeServer } from "../../downstream/probe.js";
import { topTools } from "../../telemetry/index.js";
import { VaultSecretResolver } from "../../vault/resolver.js";
import { CliError, printJson, type CliIO } from "../context.js";
import { dataDirOf, example, globalsOf, guarded, load, nextSteps, parsePositiveInt, parseSince, requireServer } from "./common.js";
import { withConfiguredStore } from "./shared-store.js";

export function registerPins(program: Command, io: CliIO): void {
  program
    .command("pin")
    .description("list pins, add pins (server, server__*, server__tool), or pin the N most-called tools")
    .argument("[pins...]", "pins to add")
    .option("--top <n>", "pin the N most-called tools (from recorded calls)")
    .option("--since <duration>", "with --top: only count calls in this window (e.g. 7d)")
    .option("--no-check", "do not start the server to check that a pinned tool exists")
    .addHelpText(
      "after",
      example(["mcphub pin", "mcphub pin cortex__open_task bob__context", "mcphub pin --top 5 --since 7d", "mcphub pin memory__read_graph --no-check"]),
    )
    .action(async (pins: string[], opts: { top?: string; since?: string; check: boolean }, cmd: Command) => {
      const n = opts.top !== undefined ? parsePositiveInt("--top", opts.top) : undefined;
      const sinceMs = parseSince(opts.since);
      if (sinceMs !== undefined && n === undefined) throw new CliError("--since applies only with --top");
      if (n !== undefined && pins.length) throw new CliError("give pins or --top, not both");
      const loaded = await load(cmd);
      const current = loaded.config.pin ?? [];
      if (n === undefined && pins.length === 0) {
        if (globalsOf(cmd).json) return printJson(io, { pin: current });
        return io.out(current.length ? current.join("\n") : "No pins. Add one with `mcphub pin server__tool` or `mcphub pin --top 5`.");
      }
      let add = pins;
      if (n !== undefined) {
        // The calls of every replica in team mode: the configured store's call records.
        const top = await withConfiguredStore(loaded.config, (store) => topTools(store, { n: n * 4, ...(sinceMs !== undefined ? { sinceMs } : {}) }), { follow: false });
        add = top.filter((t) => loaded.config.servers[t.server] !== undefined).slice(0, n).map((t) => t.namespaced);
        if (add.length === 0) return io.out("No recorded calls to configured servers yet; nothing pinned.");
      } else {
        for (const p of pins) requireServer(loaded.config, pinServer(p));
      }
      const next = [...new Set([...current, ...add])].sort();
      const added = next.filter((p) => !current.includes(p));
      if (added.length === 0) return io.out("Already pinned; nothing changed.");
      await guarded(() => editConfig(loaded.path, (ed) => ed.set(["pin"], next)));
      io.out(`Pinned ${added.join(", ")}. ${await nextSteps(loaded)}`);
      if (n === undefined && opts.check) {
        for (const w of await checkPins(added, loaded.config)) io.err(`mcphub: warning: ${w}`);
      }
    });

  program
    .command("unpin")
    .description("remove pins: a server name removes all its pins, server__tool removes that one")
    .argument("<pins...>", "pins or server names")
    .addHelpText("after", example(["mcphub unpin cortex__open_task", "mcphub unpin cortex"]))
    .action(async (args: string[], _opts: object, cmd: Command) => {
      const loaded = await load(cmd);
      const current = loaded.config.pin ?? [];
      const removed = new Set<string>();
      const missed: string[] = [];
      for (const a of args) {
        const hits = current.filter((p) => (a.includes("__") ? p === a : pinServer(p) === a));
        if (hits.length === 0) missed.push(a);
        hits.forEach((h) => removed.add(h));
      }
      if (removed.size === 0) throw new CliError(`no pin matched ${missed.join(", ")}; current pins: ${current.join(", ") || "(none)"}`);
      await guarded(() => editConfig(loaded.path, (ed) => ed.set(["pin"], current.filter((p) => !removed.has(p)))));
      io.out(`Unpinned ${[...removed].join(", ")}.${missed.length ? ` No pin matched ${missed.join(", ")}.` : ""} ${await nextSteps(loaded)}`);
    });
}

/** Longest a pin check waits for a server to list its tools. */
const PIN_CHECK_TIMEOUT_MS = 20_000;

/**
 * Exact `server__tool` pins whose tool the server does not list (one probe per server). A pin
 * is kept either way: the server may be down right now, or the tool may come later.
 */
async function checkPins(pins: string[], config: Config): Promise<string[]> {
  const exact = pins.filter((p) => p.includes("__") && !p.endsWith("__*"));
  const byServer = new Map<string, string[]>();
  for (const p of exact) byServer.set(pinServer(p), [...(byServer.get(pinServer(p)) ?? []), p]);
  const warnings: string[] = [];
  const secrets = new VaultSecretResolver({ dataDir: dataDirOf(), env: process.env });
  for (const [server, serverPins] of byServer) {
    const cfg = config.servers[server];
    if (!cfg) continue;
    const probe = await probeServer(server, cfg, { timeoutMs: Math.min(config.connect_timeout, PIN_CHECK_TIMEOUT_MS), secrets, allServers: config.servers });
    if (!probe.handshake_ok || !probe.tools) {
      warnings.push(`could not check ${serverPins.join(", ")}: server "${server}" did not list its tools (${probe.error ?? "no answer"}); use --no-check to skip this`);
      continue;
    }
    const plan = planPublicNames(server, probe.tools);
    const fragments = plan.entries().map((e) => e.fragment);
    for (const p of serverPins) {
      if (plan.resolve(p.slice(server.length + 2)) !== undefined) continue;
      const guess = closest(p.slice(server.length + 2), fragments);
      warnings.push(
        `pin ${p} names no tool of server "${server}"${guess ? `; did you mean ${server}__${guess}?` : ""} (it has ${fragments.length} tools${fragments.length ? `: ${fragments.slice(0, 12).join(", ")}${fragments.length > 12 ? ", ..." : ""}` : ""})`,
      );
    }
  }
  return warnings;
}
