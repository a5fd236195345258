// `mcphub open`: the daemon's status page in a browser. Once agent tokens exist the page needs a
// sign-in, so this prints (and opens) a one-time link that works once, for two minutes; without
// tokens it is the plain loopback URL. The daemon must be running and share this data directory.
import type { Command } from "commander";
import { DEFAULT_LISTEN, loadConfig } from "../../config/index.js";
import { createLoginSecret, LOGIN_LINK_TTL_MS, writeLaunchFile } from "../../serve/status/index.js";
import { TokenStore } from "../../serve/tokens.js";
import { daemonUrl } from "../../harness/desired.js";
import { findDaemon, healthProblem, reachableBase } from "../../service/index.js";
import { launch, pickOpener } from "../../util/browser.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import { dataDirOf, example, globalsOf } from "./common.js";

export function registerOpen(program: Command, io: CliIO): void {
  program
    .command("open")
    .description("open the daemon's status page (with agent tokens: a one-time sign-in link)")
    .option("-l, --listen <host:port>", `the daemon's address (default: config listen, else ${DEFAULT_LISTEN})`)
    .option("--no-browser", "only print the link")
    .addHelpText("after", example(["mcphub open", "mcphub open --no-browser", "mcphub open --listen 127.0.0.1:9900"]))
    .action(async (opts: { listen?: string; browser: boolean }, cmd: Command) => {
      const g = globalsOf(cmd);
      const dataDir = dataDirOf();
      const configured = opts.listen === undefined ? await configuredListen(g.config) : undefined;
      // --listen, else the daemon this data directory records (it knows the port it really got),
      // else the configured address, else the default.
      const recorded = opts.listen === undefined ? findDaemon(dataDir, configured?.path) : undefined;
      const listen = opts.listen ?? configured?.listen ?? DEFAULT_LISTEN;
      let base: string;
      try {
        base = recorded ? reachableBase(recorded) : daemonUrl(listen).replace(/\/mcp$/, "/");
      } catch {
        throw new CliError(`--listen "${listen}" is not HOST:PORT (e.g. 127.0.0.1:9820)`);
      }
      const problem = await healthProblem(base);
      if (problem) {
        throw new CliError(
          `no mcphub daemon answers at ${base} (${problem}); start one with \`mcphub up\` (or keep one running with \`mcphub service install\`), or pass its address with --listen`,
        );
      }

      const required = (await TokenStore.open(dataDir).authenticate(undefined)).required;
      let url = base;
      let expires: number | undefined;
      if (required) {
        const link = await createLoginSecret(dataDir);
        url = `${base}login?t=${link.secret}`;
        expires = link.expires;
      }
      let opened: { ok: boolean; why?: string } = { ok: false, why: "--no-browser" };
      const opener = opts.browser ? pickOpener(process.env) : undefined;
      if (opener && "why" in opener) opened = { ok: false, why: opener.why };
      else if (opener) {
        // The link itself never goes on a command line (see writeLaunchFile).
        const target = required ? await writeLaunchFile(dataDir, url) : url;
        opened = await launch(opener, target, process.env);
      }
      if (g.json) {
        return printJson(io, { url, sign_in: required, ...(expires ? { expires: new Date(expires).toISOString() } : {}), opened: opened.ok });
      }
      const c = colors(io);
      io.out(url);
      const what = required
        ? `One-time sign-in link for the status page: it works once, within ${LOGIN_LINK_TTL_MS / 60_000} minutes.`
        : "The status page (no sign-in: no agent token exists yet, so loopback browsers are let in).";
      io.err(c.dim(`${what} ${opened.ok ? "Opened in your browser." : `Not opened (${opened.why}): open it in a browser on this machine.`}`));
    });
}

async function configuredListen(configPath: string | undefined): Promise<{ path: string; listen?: string } | undefined> {
  try {
    const loaded = await loadConfig({ ...(configPath ? { configPath } : {}) });
    return { path: loaded.path, ...(loaded.config.listen ? { listen: loaded.config.listen } : {}) };
  } catch (err) {
    // Without a config file the default address applies; a broken one is worth saying.
    if (configPath !== undefined || !(err instanceof Error) || !/no config at/.test(err.message)) {
      throw new CliError(err instanceof Error ? (err.message.split("\n")[0] ?? err.message) : String(err));
    }
    return undefined;
  }
}

