// Group commands: `groups` lists them with how many members are on; `use GROUP` switches a
// group's servers on (and with --only, every other server off).
import type { Command } from "commander";
import { editConfig, type Config } from "../../config/index.js";
import { CliError, printJson, type CliIO } from "../context.js";
import { example, globalsOf, guarded, load, nextSteps } from "./common.js";

function requireGroup(config: Config, name: string): string[] {
  const members = config.groups[name];
  if (members !== undefined) return members;
  const known = Object.keys(config.groups).sort();
  throw new CliError(`unknown group "${name}"${known.length ? `; groups: ${known.join(", ")}` : " (no groups are configured)"}`);
}

export function registerGroups(program: Command, io: CliIO): void {
  program
    .command("groups")
    .description("list server groups and how many of their members are enabled")
    .addHelpText("after", example(["mcphub groups", "mcphub groups --json"]))
    .action(async (_opts: object, cmd: Command) => {
      const { config } = await load(cmd);
      const names = Object.keys(config.groups).sort();
      const view = names.map((g) => {
        const members = config.groups[g] ?? [];
        return { group: g, members, enabled: members.filter((m) => config.servers[m]?.enabled).length, total: members.length };
      });
      if (globalsOf(cmd).json) return printJson(io, view);
      if (view.length === 0) return io.out("No groups configured (add `groups: {NAME: [server, ...]}` to the config).");
      io.out(view.map((v) => `${v.group} (${v.enabled}/${v.total} on): ${v.members.join(", ")}`).join("\n"));
    });

  program
    .command("use")
    .description("enable every server of a group (--only: and disable all others)")
    .argument("<group>", "group name")
    .option("--only", "disable every server that is not in the group")
    .addHelpText("after", example(["mcphub use coding", "mcphub use ops --only"]))
    .action(async (group: string, opts: { only?: boolean }, cmd: Command) => {
      const loaded = await load(cmd);
      const members = new Set(requireGroup(loaded.config, group));
      const off: string[] = [];
      await guarded(() =>
        editConfig(loaded.path, (ed) => {
          for (const [name, s] of Object.entries(loaded.config.servers)) {
            if (members.has(name)) {
              if (!s.enabled) ed.set(["servers", name, "enabled"], true);
            } else if (opts.only && s.enabled) {
              ed.set(["servers", name, "enabled"], false);
              off.push(name);
            }
          }
        }),
      );
      io.out(
        `Group ${group}: enabled ${[...members].join(", ") || "(no members)"}${off.length ? `; disabled ${off.sort().join(", ")}` : ""}. ${await nextSteps(loaded)}`,
      );
    });
}
