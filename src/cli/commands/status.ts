// `status`: one screen of how things stand: each agent's sync state, enabled servers that were
// never called, a usage summary from telemetry and the store (in team mode: PostgreSQL, whose call
// records are every replica's).
import type { Command } from "commander";
import { enabledServers } from "../../config/index.js";
import { daemonUrl, planSync } from "../../harness/index.js";
import { findDaemon, healthProblem, reachableBase } from "../../service/index.js";
import { calledServers, queryStats } from "../../telemetry/index.js";
import { colors, printJson, type CliIO } from "../context.js";
import { dataDirOf, example, globalsOf, load, syncContext, table, tildify } from "./common.js";
import { withConfiguredStore } from "./shared-store.js";

export interface AgentStatus {
  agent: string;
  type: string;
  mode: string;
  path?: string;
  state: string;
  pending: number;
  /** Entries of its file that the gateway serves too: the model sees those tools twice. */
  duplicates?: { name: string; server: string }[];
  error?: string;
}

export function registerStatus(program: Command, io: CliIO): void {
  program
    .command("status")
    .description("agents' sync state, enabled servers never called, and usage")
    .addHelpText("after", example(["mcphub status", "mcphub status --json"]))
    .action(async (_opts: object, cmd: Command) => {
      const loaded = await load(cmd);
      const { config } = loaded;
      const ctx = syncContext(loaded);
      const agents: AgentStatus[] = [];
      for (const name of Object.keys(config.agents).sort()) {
        const agent = config.agents[name];
        if (!agent) continue;
        const base = { agent: name, type: agent.type ?? name, mode: agent.mode };
        if (agent.disabled) {
          agents.push({ ...base, state: "disabled", pending: 0 });
          continue;
        }
        try {
          const plan = await planSync(config, name, ctx);
          const pending = plan.actions.filter((a) => a.action !== "unchanged").length;
          const dup = plan.duplicates.length ? `, ${plan.duplicates.length} duplicate${plan.duplicates.length === 1 ? "" : "s"}` : "";
          agents.push({
            ...base,
            type: plan.type,
            path: plan.path,
            state: `${pending ? `${pending} pending` : "in sync"}${dup}`,
            pending,
            ...(plan.duplicates.length ? { duplicates: plan.duplicates.map((d) => ({ name: d.name, server: d.server })) } : {}),
          });
        } catch (err) {
          agents.push({ ...base, state: "error", pending: 0, error: err instanceof Error ? err.message.split("\n")[0] : String(err) });
        }
      }
      const data = dataDirOf();
      const { stats, called, store } = await withConfiguredStore(
        config,
        async (s) => ({ stats: await queryStats(s, {}), called: await calledServers(s, {}), store: { where: s.where, ...(await s.probe(3000)) } }),
        { follow: false },
      );
      const enabled = enabledServers(config).map(([n]) => n);
      const unused = enabled.filter((n) => !called.has(n));
      // Where the daemon really listens (recorded by it), else the configured address.
      const recorded = findDaemon(data, loaded.path);
      const daemonBase = recorded ? reachableBase(recorded) : config.listen ? daemonUrl(config.listen).replace(/\/mcp$/, "/") : undefined;
      const daemonProblem = daemonBase ? await healthProblem(daemonBase) : undefined;
      const daemon = daemonBase
        ? { url: recorded?.url ?? `${daemonBase}mcp`, ...(recorded ? { pid: recorded.pid, started: recorded.started } : {}), answers: daemonProblem === undefined, ...(daemonProblem ? { problem: daemonProblem } : {}) }
        : undefined;
      const report = {
        config: loaded.path,
        expose: config.expose,
        ...(config.listen ? { listen: config.listen } : {}),
        servers: Object.keys(config.servers).length,
        enabled: enabled.length,
        agents,
        calls: stats.totals.calls,
        errors: stats.totals.errors,
        est_tokens: stats.totals.est_tokens,
        unused_enabled: unused,
        ...(daemon ? { daemon } : {}),
        store: { kind: store.kind, where: store.where, reachable: store.reachable, ...(store.schema_version !== undefined ? { schema_version: store.schema_version } : {}), latency_ms: store.latency_ms },
      };
      if (globalsOf(cmd).json) return printJson(io, report);
      const c = colors(io);
      const out = [
        `config   ${tildify(loaded.path, ctx.home)}  (expose: ${config.expose}${config.listen ? `, listen: ${config.listen}` : ""})`,
        report.enabled
          ? `servers  ${report.enabled} enabled of ${report.servers}`
          : c.yellow(`servers  none enabled${report.servers ? ` (${report.servers} configured, all disabled)` : ""}: the gateway serves only its management tools; add one with \`mcphub add\``),
      ];
      if (daemon) {
        out.push(
          daemon.answers
            ? `daemon   ${daemon.url}${recorded ? ` (pid ${recorded.pid}, since ${recorded.started})` : ""} ${c.green("answers")}`
            : c.red(`daemon   ${daemon.url} does not answer (${daemon.problem}): start it with \`mcphub up\`, or keep it running with \`mcphub service install\``),
        );
      }
      out.push("");
      if (agents.length) {
        out.push(
          table(
            ["AGENT", "TYPE", "MODE", "STATE", "FILE"],
            agents.map((a) => [
              a.agent,
              a.type,
              a.mode,
              a.state === "in sync" && report.enabled ? c.green(a.state) : a.state === "disabled" ? c.dim(a.state) : c.yellow(a.state),
              a.error ?? (a.path ? tildify(a.path, ctx.home) : ""),
            ]),
          ),
        );
        if (agents.some((a) => a.pending)) out.push(c.dim("Run `mcphub sync` to see the pending changes."));
        for (const a of agents.filter((x) => x.duplicates?.length)) {
          out.push(
            c.yellow(
              `${a.agent}: ${a.duplicates?.map((d) => (d.name === d.server ? d.name : `${d.name} (= ${d.server})`)).join(", ")} ${a.duplicates?.length === 1 ? "is" : "are"} also served by the gateway, so the model sees ${a.duplicates?.length === 1 ? "its" : "their"} tools twice: \`mcphub offload ${a.agent} --write\` removes ${a.duplicates?.length === 1 ? "it" : "them"}`,
            ),
          );
        }
      } else {
        out.push("No agents configured (see `mcphub agents`).");
      }
      if (store.kind === "postgres") out.push(`store    PostgreSQL ${store.where} (schema ${store.schema_version ?? "?"}, ${store.latency_ms} ms)`);
      out.push("", `usage    ${report.calls} calls, ${report.errors} errors, ~${report.est_tokens} tokens${store.kind === "postgres" ? " (every replica)" : ""}`);
      out.push(`unused   ${enabled.length === 0 ? "(no server is enabled)" : unused.length ? unused.join(", ") : "(every enabled server has been called)"}`);
      io.out(out.join("\n"));
    });
}
