// `sync` writes the gateway entry (or, in direct mode, the servers) into each agent's harness
// file; `offload` removes entries the gateway now serves. Both are dry runs unless --write. All
// plans are made first, so a problem with any agent writes nothing at all.
import type { Command } from "commander";
import { createInterface } from "node:readline/promises";
import { enabledServers, type Config } from "../../config/index.js";
import {
  agentOf,
  daemonUrl,
  planOffload,
  planSync,
  publicPlan,
  rollbackPlan,
  withOffload,
  writePlan,
  type SyncAction,
  type SyncContext,
  type SyncPlan,
} from "../../harness/index.js";
import { healthProblem } from "../../service/index.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import { dataDirOf, example, globalsOf, harnessHomeOf, load, oneLine, syncContext, tildify } from "./common.js";

const SIGN: Record<SyncAction["action"], string> = { add: "+", update: "~", remove: "-", unchanged: "=" };

export function renderPlan(io: CliIO, plan: SyncPlan, home: string, note?: string): string {
  const c = colors(io);
  const paint: Record<SyncAction["action"], (s: string) => string> = { add: c.green, update: c.yellow, remove: c.red, unchanged: c.dim };
  const lines = [`» ${c.bold(plan.agent)}  (${plan.type}, ${plan.mode}) → ${tildify(plan.path, home)}`];
  for (const a of plan.actions) {
    lines.push(`  ${paint[a.action](`${SIGN[a.action]} ${a.action.padEnd(9)}`)} ${a.name}`);
    if (a.detail && a.action !== "unchanged") lines.push(`      ${c.dim(a.detail)}`);
  }
  for (const s of plan.skipped) lines.push(`  ${c.yellow("! skipped  ")} ${s.name}: ${s.reason}`);
  for (const d of plan.duplicates) {
    lines.push(`  ${c.yellow("! duplicate")} ${d.name}: the gateway serves it too${d.server === d.name ? "" : ` (as ${d.server})`}, so the model would see its tools twice`);
  }
  for (const k of plan.clashes) lines.push(`  ${c.dim(`  kept      ${k.name}: not the gateway's ${k.name} (this one runs ${k.entry}; the gateway's runs ${k.server})`)}`);
  for (const n of plan.notes) lines.push(`  ${c.yellow("note:")} ${n}`);
  if (note) lines.push(`  ${c.dim(note)}`);
  else if (plan.actions.length === 0) lines.push(`  ${c.dim("(nothing to do)")}`);
  lines.push(`  plan: ${plan.planId}`);
  return lines.join("\n");
}

/** The agents a command works on: those named (validated) or every agent that is not disabled. */
function selectAgents(config: Config, names: string[], filter: (name: string) => boolean = () => true): string[] {
  if (names.length) {
    try {
      names.forEach((n) => agentOf(config, n));
    } catch (err) {
      throw oneLine(err);
    }
    return names;
  }
  return Object.keys(config.agents)
    .sort()
    .filter((n) => !config.agents[n]?.disabled && filter(n));
}

async function planAll(
  names: string[],
  make: (name: string) => Promise<SyncPlan & { note?: string }>,
): Promise<(SyncPlan & { note?: string })[]> {
  const plans: (SyncPlan & { note?: string })[] = [];
  for (const n of names) {
    try {
      plans.push(await make(n));
    } catch (err) {
      throw new CliError(`agent ${n}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
    }
  }
  return plans;
}

async function runPlans(
  io: CliIO,
  cmd: Command,
  config: Config,
  ctx: SyncContext,
  plans: (SyncPlan & { note?: string })[],
  write: boolean,
): Promise<void> {
  const json = globalsOf(cmd).json;
  const results: Record<string, unknown>[] = [];
  const text: string[] = [];
  for (const plan of plans) {
    let written = false;
    let backup: string | null | undefined;
    if (write) {
      const res = await writePlan(config, plan, ctx);
      written = res.written;
      backup = res.backup;
    }
    results.push({ ...publicPlan(plan), ...(plan.note ? { note: plan.note } : {}), written, ...(backup !== undefined ? { backup } : {}) });
    text.push(renderPlan(io, plan, ctx.home, plan.note));
    if (write) {
      text.push(
        written
          ? `  wrote ${tildify(plan.path, ctx.home)}${backup ? ` (backup ${tildify(backup, ctx.home)})` : " (new file)"}; undo with: mcphub sync --rollback ${plan.planId}`
          : "  already in sync; nothing written",
      );
    }
  }
  if (json) return printJson(io, results);
  if (plans.length === 0) return io.out("No agents to sync. Add one under `agents:` in the config (see `mcphub agents`).");
  io.out(text.join("\n"));
  const pending = plans.some((p) => p.actions.some((a) => a.action !== "unchanged"));
  const dups = plans.flatMap((p) => p.duplicates.map((d) => ({ agent: p.agent, ...d })));
  if (dups.length) {
    const agents = [...new Set(dups.map((d) => d.agent))];
    io.out(
      `${dups.length} harness entr${dups.length === 1 ? "y duplicates" : "ies duplicate"} what the gateway serves (${dups.map((d) => `${d.agent}: ${d.name}`).join(", ")}). ` +
        `Remove ${dups.length === 1 ? "it" : "them"} with \`mcphub sync --write --yes\` (same backup and --rollback), or \`mcphub offload ${agents.join(" ")} --write\`.`,
    );
  }
  if (!write) io.out(pending ? "Dry run. Re-run with --write to apply (a .bak is saved first)." : "Harness files are in sync. Running gateways follow the config file on their own.");
  // Entries that point at the daemon are only as good as the daemon: say so when none answers.
  const daemonAgents = plans.filter((p) => p.desired.some((e) => e.url !== undefined)).map((p) => p.agent);
  if (config.listen !== undefined && daemonAgents.length) {
    const url = daemonUrl(config.listen);
    const problem = await healthProblem(url.replace(/\/mcp$/, "/"), 1500);
    if (problem) {
      io.err(
        `mcphub: note: ${daemonAgents.join(", ")} ${write ? (daemonAgents.length === 1 ? "now reaches" : "now reach") : "will reach"} the gateway at ${url}, where no daemon answers yet (${problem}): start it with \`mcphub up\`, or keep it running with \`mcphub service install\``,
      );
    }
  }
  if (enabledServers(config).length === 0 && plans.some((p) => p.mode === "gateway")) {
    io.err(
      `mcphub: warning: no server is enabled in ${tildify(ctx.configPath, ctx.home)}, so the gateway serves only its own management tools; add one with \`mcphub add NAME COMMAND [ARGS...]\` (e.g. mcphub add memory npx -y @modelcontextprotocol/server-memory)`,
    );
  }
}

/**
 * With --yes, or when the user says yes on a terminal: each plan removes its duplicates in the
 * same write. Without a terminal (a script, CI) nothing is asked and the duplicates are reported.
 */
async function offloadDuplicates(io: CliIO, plans: (SyncPlan & { note?: string })[], yes: boolean, json: boolean): Promise<(SyncPlan & { note?: string })[]> {
  const count = plans.reduce((n, p) => n + p.duplicates.length, 0);
  if (count === 0) return plans;
  let accept = yes;
  if (!accept && !json && process.stdin.isTTY && process.stdout.isTTY) {
    const list = plans.flatMap((p) => p.duplicates.map((d) => `${p.agent}: ${d.name}`)).join(", ");
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    try {
      const answer = await rl.question(`${count} harness entr${count === 1 ? "y is" : "ies are"} served by the gateway too (${list}). Remove ${count === 1 ? "it" : "them"} from the harness files in this write? [y/N] `);
      accept = /^y(es)?$/i.test(answer.trim());
    } finally {
      rl.close();
    }
  }
  return accept ? plans.map((p) => ({ ...withOffload(p), ...(p.note ? { note: p.note } : {}) })) : plans;
}

export function registerSync(program: Command, io: CliIO): void {
  program
    .command("sync")
    .description("write the mcphub entry into each agent's harness file (dry run unless --write)")
    .argument("[agents...]", "agents to sync (default: every agent that is not disabled)")
    .option("-w, --write", "apply the plan (a timestamped backup is written first)")
    .option("-y, --yes", "with --write: also remove harness entries the gateway now serves (asked on a terminal otherwise)")
    .option("--rollback <plan>", "restore the harness file a written plan changed, byte for byte")
    .option("-f, --force", "with --rollback: restore even if the file was edited after the plan (it is saved first)")
    .addHelpText(
      "after",
      example([
        "mcphub sync",
        "mcphub sync claude --write",
        "mcphub sync --write --yes        # ...and drop entries the gateway now serves",
        "mcphub sync --rollback plan_1767059101000a1b2c3_claude",
        "mcphub sync --rollback plan_1767059101000a1b2c3_claude --force   # even after later edits",
        "mcphub sync --json",
      ]),
    )
    .action(async (names: string[], opts: { write?: boolean; yes?: boolean; rollback?: string; force?: boolean }, cmd: Command) => {
      if (opts.force && opts.rollback === undefined) throw new CliError("--force applies only with --rollback");
      if (opts.yes && !opts.write) throw new CliError("--yes applies only with --write (it removes the duplicate entries in that write)");
      if (opts.rollback !== undefined) {
        if (names.length || opts.write) throw new CliError("--rollback takes only the plan id (no agents, no --write)");
        let res;
        try {
          res = await rollbackPlan(opts.rollback, { dataDir: dataDirOf() }, { force: Boolean(opts.force) });
        } catch (err) {
          throw oneLine(err);
        }
        if (globalsOf(cmd).json) return printJson(io, res);
        const home = harnessHomeOf();
        const saved = res.saved ? ` The file as it was is saved as ${tildify(res.saved, home)}.` : "";
        return io.out(
          res.restored === "backup"
            ? `Restored ${tildify(res.path, home)} from ${tildify(res.backup ?? "", home)} (plan ${res.planId}, agent ${res.agent}).${saved}`
            : `Removed ${tildify(res.path, home)}, which plan ${res.planId} had created (agent ${res.agent}).${saved}`,
        );
      }
      const loaded = await load(cmd);
      const ctx = syncContext(loaded);
      const agents = selectAgents(loaded.config, names);
      const disabled = agents.filter((n) => loaded.config.agents[n]?.disabled);
      let plans = await planAll(
        agents.filter((n) => !disabled.includes(n)),
        (n) => planSync(loaded.config, n, ctx),
      );
      if (opts.write) plans = await offloadDuplicates(io, plans, Boolean(opts.yes), Boolean(globalsOf(cmd).json));
      await runPlans(io, cmd, loaded.config, ctx, plans, Boolean(opts.write));
      if (disabled.length && !globalsOf(cmd).json) io.out(`Skipped disabled agent(s): ${disabled.join(", ")}.`);
    });

  program
    .command("offload")
    .description("remove harness entries that the mcphub gateway already serves (dry run unless --write)")
    .argument("[agents...]", "gateway agents to offload (default: all)")
    .option("-w, --write", "apply (a timestamped backup is written first)")
    .addHelpText("after", example(["mcphub offload", "mcphub offload claude --write"]))
    .action(async (names: string[], opts: { write?: boolean }, cmd: Command) => {
      const loaded = await load(cmd);
      const ctx = syncContext(loaded);
      const agents = selectAgents(loaded.config, names, (n) => loaded.config.agents[n]?.mode === "gateway");
      const plans = await planAll(agents, (n) => planOffload(loaded.config, n, ctx));
      await runPlans(io, cmd, loaded.config, ctx, plans, Boolean(opts.write));
    });
}
