// `agents`: every harness mcphub can sync, whether it is configured, installed or absent.
import type { Command } from "commander";
import { agentFilePath, allAdapters, harnessInstalled } from "../../harness/index.js";
import { printJson, type CliIO } from "../context.js";
import { example, globalsOf, load, syncContext, table, tildify } from "./common.js";

export function registerAgents(program: Command, io: CliIO): void {
  program
    .command("agents")
    .description("list supported harnesses: configured, available (installed) or not installed")
    .addHelpText("after", example(["mcphub agents", "mcphub agents --json"]))
    .action(async (_opts: object, cmd: Command) => {
      const loaded = await load(cmd);
      const ctx = syncContext(loaded);
      const rows: { type: string; label: string; path: string; state: string; name?: string; mode?: string; enabled?: boolean }[] = [];
      for (const adapter of allAdapters()) {
        const configured = Object.entries(loaded.config.agents).filter(([n, a]) => (a.type ?? n) === adapter.type);
        for (const [name, agent] of configured) {
          rows.push({
            type: adapter.type,
            label: adapter.label,
            path: agentFilePath(name, agent, ctx),
            state: "configured",
            name,
            mode: agent.mode,
            enabled: !agent.disabled,
          });
        }
        if (configured.length === 0) {
          const installed = await harnessInstalled(adapter, ctx.home);
          rows.push({ type: adapter.type, label: adapter.label, path: adapter.defaultPath(ctx.home), state: installed ? "available" : "not_installed" });
        }
      }
      if (globalsOf(cmd).json) return printJson(io, rows);
      io.out(
        table(
          ["TYPE", "STATE", "AGENT", "MODE", "FILE"],
          rows.map((r) => [r.type, r.state === "configured" && r.enabled === false ? "configured (disabled)" : r.state, r.name ?? "", r.mode ?? "", tildify(r.path, ctx.home)]),
        ),
      );
    });
}
