// `mcphub service install | uninstall | status`: keep `mcphub up` running for this config across
// logins and reboots, as a systemd user unit (Linux) or a launchd agent (macOS), restarted on
// failure, logging where the platform keeps logs (the journal; ~/Library/Logs/mcphub).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { DEFAULT_LISTEN, homeDir, parseListen } from "../../config/index.js";
import { daemonUrl, installedBin } from "../../harness/index.js";
import {
  SERVICE_NAME_RE,
  findDaemon,
  healthProblem,
  installService,
  installedCommand,
  launchdLogPath,
  lingerEnabled,
  logsHint,
  managerState,
  reachableBase,
  serviceEnv,
  serviceFile,
  servicePlatform,
  uninstallService,
  type ServicePlatform,
  type ServiceSpec,
} from "../../service/index.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import { dataDirOf, example, globalsOf, load, tildify } from "./common.js";

interface NameOption {
  name: string;
}

function platformOrFail(): ServicePlatform {
  const p = servicePlatform();
  if (!p) throw new CliError(`mcphub service supports Linux (systemd) and macOS (launchd); on ${process.platform}, run \`mcphub up\` from your own service manager`);
  return p;
}

function checkName(name: string): string {
  if (!SERVICE_NAME_RE.test(name)) throw new CliError(`--name "${name}" must be letters, digits, ".", "_" or "-" (at most 64), e.g. mcphub`);
  return name;
}

const unitLabel = (p: ServicePlatform, name: string) => (p === "systemd" ? `${name}.service (systemd user unit)` : `${name} (launchd agent dev.mcphub.${name})`);

export function registerService(program: Command, io: CliIO): void {
  const service = program
    .command("service")
    .description("keep the daemon (`mcphub up`) running across logins and reboots: a systemd user unit or a launchd agent")
    .addHelpText("after", example(["mcphub service install", "mcphub service status", "mcphub service uninstall"]));

  service
    .command("install")
    .description("write the unit for this config (restart on failure, logs in the journal) and start it")
    .option("-n, --name <name>", "unit name (several configs: one unit each)", "mcphub")
    .option("-l, --listen <host:port>", `address for the daemon (default: config listen, else ${DEFAULT_LISTEN})`)
    .option("--no-start", "only write the unit file; print the commands that start it")
    .addHelpText("after", example(["mcphub service install", "mcphub --config ~/work/mcphub.yaml service install --name mcphub-work --listen 127.0.0.1:9821", "mcphub service install --no-start"]))
    .action(async (opts: NameOption & { listen?: string; start: boolean }, cmd: Command) => {
      const platform = platformOrFail();
      const name = checkName(opts.name);
      // The unit must start a daemon that works: the config is validated now, not at the first boot.
      const loaded = await load(cmd);
      if (opts.listen !== undefined && !parseListen(opts.listen)) throw new CliError(`--listen "${opts.listen}" is not HOST:PORT (e.g. 127.0.0.1:9820)`);
      const env = process.env;
      const home = homeDir(env);
      const listen = opts.listen ?? loaded.config.listen ?? DEFAULT_LISTEN;
      const root = dirname(dirname(installedBin()));
      const docs = join(root, "docs", "daemon.md");
      const spec: ServiceSpec = {
        name,
        argv: [process.execPath, installedBin(), "--config", loaded.path, "up", ...(opts.listen !== undefined ? ["--listen", opts.listen] : [])],
        workingDirectory: home,
        env: serviceEnv(env),
        configPath: loaded.path,
        ...(existsSync(docs) ? { docs } : {}),
        ...(platform === "launchd" ? { logPath: launchdLogPath(name, home) } : {}),
      };
      const file = serviceFile(platform, name, env, home);
      const res = await installService(platform, spec, file, { start: opts.start });
      const warnings: string[] = [];
      if (env.MCPHUB_VAULT_PASSPHRASE) {
        warnings.push(
          "MCPHUB_VAULT_PASSPHRASE is set here but is not written into the unit (a secret has no place in a unit file): the service cannot unlock a passphrase-protected vault. Put the passphrase in a 0600 file and set MCPHUB_VAULT_PASSPHRASE_FILE before installing, or use the OS keychain",
        );
      }
      if (!loaded.config.listen && opts.listen === undefined) {
        warnings.push(`the config has no \`listen:\`, so harnesses synced from it launch their own stdio gateway; to point them at this daemon, set \`listen: ${DEFAULT_LISTEN}\` and run \`mcphub sync --write\``);
      }
      const linger = platform === "systemd" ? lingerEnabled() : true;
      if (linger === false) {
        warnings.push("systemd stops user services when you log out and starts them at your next login; `loginctl enable-linger` keeps it running and starts it at boot");
      }
      if (globalsOf(cmd).json) {
        printJson(io, { platform, name, file, replaced: res.replaced, started: res.started, ...(res.error ? { error: res.error } : {}), url: daemonUrl(listen), logs: logsHint(platform, name, home), warnings });
        if (opts.start && !res.started) process.exitCode = 1;
        return;
      }
      const c = colors(io);
      const lines = [
        `${res.replaced ? "Replaced" : "Wrote"} ${tildify(file, home)}: ${unitLabel(platform, name)} running \`mcphub --config ${tildify(loaded.path, home)} up${opts.listen ? ` --listen ${opts.listen}` : ""}\`, started at login and restarted on failure.`,
        `  logs: ${logsHint(platform, name, home)}`,
      ];
      if (res.started) lines.push(`Started it; the daemon listens on ${daemonUrl(listen)} (check with \`mcphub service status\`).`);
      else if (!opts.start) lines.push(`Not started (--no-start). Start it with: ${res.manual.join(" && ")}`);
      io.out(lines.join("\n"));
      for (const w of warnings) io.err(c.yellow(`mcphub: note: ${w}`));
      if (opts.start && !res.started) {
        throw new CliError(`the unit file is written, but it could not be started: ${res.error}. Start it by hand with: ${res.manual.join(" && ")}`);
      }
    });

  service
    .command("uninstall")
    .description("stop and remove the unit")
    .option("-n, --name <name>", "unit name", "mcphub")
    .addHelpText("after", example(["mcphub service uninstall", "mcphub service uninstall --name mcphub-work"]))
    .action(async (opts: NameOption, cmd: Command) => {
      const platform = platformOrFail();
      const name = checkName(opts.name);
      const home = homeDir(process.env);
      const file = serviceFile(platform, name, process.env, home);
      const res = await uninstallService(platform, name, file);
      if (globalsOf(cmd).json) {
        printJson(io, res);
        if (!res.removed) process.exitCode = 1;
        return;
      }
      if (!res.removed) throw new CliError(`no mcphub service named ${name} is installed (looked for ${tildify(file, home)})`);
      io.out(`Removed ${tildify(file, home)}${res.stopped ? ` and stopped ${name}` : ""}.${res.error ? ` (stopping it failed: ${res.error})` : ""}`);
    });

  service
    .command("status")
    .description("whether the unit is installed and running, and whether its daemon answers")
    .option("-n, --name <name>", "unit name", "mcphub")
    .addHelpText("after", example(["mcphub service status", "mcphub service status --json"]))
    .action(async (opts: NameOption, cmd: Command) => {
      const platform = platformOrFail();
      const name = checkName(opts.name);
      const env = process.env;
      const home = homeDir(env);
      const file = serviceFile(platform, name, env, home);
      const installed = existsSync(file);
      const command = installed ? await installedCommand(platform, file) : undefined;
      const state = installed ? await managerState(platform, name, file) : { known: false };
      const config = /--config ("[^"]+"|\S+)/.exec(command ?? "")?.[1]?.replace(/^"|"$/g, "");
      const daemon = findDaemon(dataDirOf(env), config);
      const problem = daemon ? await healthProblem(reachableBase(daemon)) : undefined;
      const report = {
        platform,
        name,
        file,
        installed,
        ...(command ? { command } : {}),
        manager: state,
        ...(daemon ? { daemon: { url: daemon.url, pid: daemon.pid, started: daemon.started, answers: problem === undefined, ...(problem ? { problem } : {}) } } : {}),
        logs: logsHint(platform, name, home),
      };
      if (globalsOf(cmd).json) return printJson(io, report);
      const c = colors(io);
      const managerLine = !installed
        ? c.dim("-")
        : state.known
          ? `${state.active}${state.enabled ? `, ${state.enabled}` : ""}${state.pid ? `, pid ${state.pid}` : ""}${state.restarts !== undefined ? `, ${state.restarts} restart${state.restarts === 1 ? "" : "s"}` : ""}`
          : c.yellow(`not loaded${"error" in state && state.error ? ` (${state.error})` : ""}`);
      io.out(
        [
          `service  ${unitLabel(platform, name)}`,
          `file     ${tildify(file, home)}  ${installed ? c.green("installed") : c.yellow("not installed (`mcphub service install`)")}`,
          ...(command ? [`runs     ${command}`] : []),
          `manager  ${managerLine}`,
          `daemon   ${daemon ? `${daemon.url} (pid ${daemon.pid}, since ${daemon.started}) ${problem === undefined ? c.green("answers") : c.red(`does not answer: ${problem}`)}` : c.dim("no running daemon recorded in the data directory")}`,
          `logs     ${logsHint(platform, name, home)}`,
        ].join("\n"),
      );
    });
}
