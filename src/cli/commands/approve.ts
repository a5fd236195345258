// `mcphub approve`: lists the tools whose definitions wait for an operator (changed since they were
// approved, or never approved on a quarantined server) and approves them by name. The store and
// the rules are src/guard/approve.ts; running gateways see an approval on their next call. In team
// mode both the definitions and the audit line are in the configured store (PostgreSQL), so every
// replica allows the tool from its next call (NOTIFY).
import type { Command } from "commander";
import { ApproveError, approveTools, pendingApprovals, type PendingTool } from "../../guard/index.js";
import { Telemetry } from "../../telemetry/index.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import { dataDirOf, example, globalsOf, load } from "./common.js";
import { withConfiguredStore } from "./shared-store.js";

export function registerApprove(program: Command, io: CliIO): void {
  program
    .command("approve")
    .description("approve tool definitions that changed since they were approved (or await a first approval)")
    .argument("[names...]", "server__tool, or a server name for all of its waiting tools; none lists what waits")
    .addHelpText("after", example(["mcphub approve", "mcphub approve github__create_issue", "mcphub approve github", "mcphub approve --json"]))
    .action(async (names: string[], _opts: object, cmd: Command) => {
      const json = Boolean(globalsOf(cmd).json);
      const { config } = await load(cmd);
      const data = dataDirOf();
      await withConfiguredStore(config, async (store) => {
        if (names.length === 0) {
          const { pending, unreadable } = pendingApprovals(store, config);
          if (json) return printJson(io, { pending, unreadable });
          const c = colors(io);
          const lines: string[] = [];
          for (const p of pending) lines.push(...renderPending(p, c));
          for (const u of unreadable) lines.push(`${c.red(u.server)}  definitions file unreadable: ${u.file}: ${u.problem}`);
          if (lines.length === 0) return io.out("Nothing waits for an approval: every recorded tool definition is approved.");
          lines.push("", "Approve with `mcphub approve NAME...` (server__tool, or a server for all of its waiting tools).");
          return io.out(lines.join("\n"));
        }
        let approved;
        try {
          approved = await approveTools(store, config, names);
        } catch (err) {
          if (err instanceof ApproveError) throw new CliError(err.message);
          throw err;
        }
        const telemetry = Telemetry.open({ dataDir: data, store });
        for (const a of approved) {
          telemetry.audit({ ts: Date.now(), event: "approved", agent: "", server: a.server, tool: a.wire, namespaced: a.namespaced, reason: a.state, rule: "mcphub approve" });
        }
        await telemetry.close();
        if (json) return printJson(io, { approved });
        const what = approved.map((a) => (a.state === "changed" ? `${a.namespaced} (${a.changes.join("; ")})` : `${a.namespaced} (first approval)`));
        io.out(`Approved ${what.join(", ")}. Running gateways allow ${approved.length === 1 ? "it" : "them"} from their next call.`);
      });
    });
}

function renderPending(p: PendingTool, c: ReturnType<typeof colors>): string[] {
  if (p.state === "awaiting_approval") return [`${c.yellow(p.namespaced)}  awaits its first approval (quarantine), seen ${p.seen}`];
  const out = [`${c.yellow(p.namespaced)}  changed since approved, seen ${p.seen}: ${p.changes.join("; ")}`];
  if (p.description) {
    out.push(`    before: ${p.description.before}`);
    out.push(`    after:  ${p.description.after}`);
  }
  return out;
}
