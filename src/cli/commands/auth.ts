// `mcphub auth login|status|logout`: sign remote servers in (OAuth 2.1), show what the vault holds
// for them, sign them out. Thin: the flows live in src/auth/. Tokens are never printed, and a
// running gateway notices a new sign-in by itself (the vault file is shared; in team mode the
// sign-ins are in the configured store, and every replica hears of a change by NOTIFY).
import type { Command } from "commander";
import { loginCommand } from "../../auth/command.js";
import { DEFAULT_SIGN_IN_TIMEOUT_MS, SignInError, signIn, type SignInResult } from "../../auth/login.js";
import { authStatus, signOut, type AuthStatusEntry } from "../../auth/status.js";
import type { Config, ServerConfig } from "../../config/index.js";
import { LockedError } from "../../downstream/types.js";
import { formatDuration, parseDuration } from "../../util/units.js";
import { launch, pickOpener } from "../../util/browser.js";
import { errorText } from "../../util/errors.js";
import { VaultLockedError, VaultTamperedError } from "../../vault/errors.js";
import { OAuthStore } from "../../vault/oauth.js";
import { VaultSecretResolver } from "../../vault/resolver.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import type { Store } from "../../store/index.js";
import { collect, dataDirOf, example, globalsOf, load, parsePositiveInt, requireServer, table } from "./common.js";
import { openConfiguredStore } from "./shared-store.js";

interface LoginFlags {
  browser: boolean;
  timeout?: string;
  scope?: string[];
  port?: string;
}

export function registerAuth(program: Command, io: CliIO): void {
  const authCmd = program
    .command("auth")
    .description("sign remote servers in with OAuth 2.1 (tokens live in the encrypted vault)")
    .addHelpText("after", example(["mcphub auth login linear", "mcphub auth status", "mcphub auth logout linear"]));

  authCmd
    .command("login")
    .description("sign a remote server in: opens the browser (or prints the URL) and stores the tokens in the vault")
    .argument("<server>", "a configured remote server")
    .option("--no-browser", "only print the URL (sign in from any browser that can reach this machine's 127.0.0.1)")
    .option("--timeout <duration>", "how long to wait for the browser", "5m")
    .option("--scope <scope>", "ask for this scope too (repeatable)", collect)
    .option("--port <port>", "loopback redirect port (default: oauth.redirect_port, else the registered one, else random)")
    .addHelpText("after", example(["mcphub auth login linear", "mcphub auth login linear --no-browser", "mcphub auth login github --scope repo"]))
    .action(async (server: string, flags: LoginFlags, cmd: Command) => {
      const loaded = await load(cmd);
      const cfg = remoteServer(loaded.config, server);
      const timeoutMs = flags.timeout !== undefined ? parseDuration(flags.timeout) : DEFAULT_SIGN_IN_TIMEOUT_MS;
      if (timeoutMs === undefined || timeoutMs <= 0) throw new CliError(`--timeout "${flags.timeout}" is not a duration; use e.g. 90s or 5m`);
      const port = flags.port !== undefined ? parsePositiveInt("--port", flags.port) : undefined;
      if (port !== undefined && port > 65535) throw new CliError(`--port ${port} is not a port number (1-65535)`);
      const { store, secrets, close } = await openVault(loaded.config);
      const c = colors(io);
      const controller = new AbortController();
      const onSigint = () => controller.abort();
      process.once("SIGINT", onSigint);
      let result: SignInResult;
      try {
        result = await signIn({
          server,
          cfg,
          store,
          secret: (ref) => secrets.header(ref),
          headers: await probeHeaders(cfg, secrets),
          timeoutMs,
          ...(flags.scope?.length ? { scopes: flags.scope } : {}),
          ...(port !== undefined ? { port } : {}),
          signal: controller.signal,
          openUrl: async (url) => {
            io.err(`Sign in to ${server} in your browser:\n\n  ${url.href}\n`);
            const opener = flags.browser ? pickOpener(process.env) : { why: "--no-browser" };
            const opened = "why" in opener ? { ok: false, why: opener.why } : await launch(opener, url.href, process.env);
            const wait = `waiting up to ${formatDuration(timeoutMs)} for the sign-in...`;
            io.err(c.dim(opened.ok ? `(opened in your browser; ${wait})` : `(not opened: ${opened.why}; open the URL above, ${wait})`));
          },
        });
      } catch (err) {
        throw cliError(err);
      } finally {
        process.off("SIGINT", onSigint);
        await close();
      }
      if (globalsOf(cmd).json) return printJson(io, result);
      io.err(c.green(describeSignIn(result)));
    });

  authCmd
    .command("status")
    .description("show each remote server's sign-in: account, scopes, expiry (never a token)")
    .argument("[server]", "only this server")
    .addHelpText("after", example(["mcphub auth status", "mcphub auth status linear", "mcphub --json auth status"]))
    .action(async (server: string | undefined, _flags: unknown, cmd: Command) => {
      const loaded = await load(cmd);
      if (server !== undefined) remoteServer(loaded.config, server);
      const { store, close } = await openVault(loaded.config);
      const entries = await authStatus(loaded.config, store, (name) => loginCommand(name, loaded.path), server)
        .catch((err: unknown) => {
          throw cliError(err);
        })
        .finally(close);
      if (globalsOf(cmd).json) return printJson(io, entries);
      if (entries.length === 0) {
        io.err("no remote server uses OAuth (set oauth: on a remote server, or run `mcphub auth login SERVER` for one that asks for sign-in)");
        return;
      }
      io.out(renderStatus(entries));
      const waiting = entries.filter((e) => e.sign_in !== undefined);
      for (const e of waiting) io.err(`${e.server}: run \`${e.sign_in}\``);
    });

  authCmd
    .command("logout")
    .description("sign a server out: revoke its tokens where the authorization server allows, then delete them")
    .argument("<server>", "a configured remote server")
    .addHelpText("after", example(["mcphub auth logout linear"]))
    .action(async (server: string, _flags: unknown, cmd: Command) => {
      const loaded = await load(cmd);
      const cfg = remoteServer(loaded.config, server);
      const { store, secrets, close } = await openVault(loaded.config);
      const result = await signOut(server, cfg, store, (ref) => secrets.header(ref), (u, init) => fetch(u, init))
        .catch((err: unknown) => {
          throw cliError(err);
        })
        .finally(close);
      if (globalsOf(cmd).json) return printJson(io, { server, ...result });
      if (!result.removed) {
        io.err(`${server} was not signed in; nothing to do`);
        return;
      }
      io.err(`signed ${server} out (revocation: ${result.revocation})`);
    });
}

function remoteServer(config: Config, name: string): ServerConfig {
  requireServer(config, name);
  const cfg = config.servers[name] as ServerConfig;
  if (cfg.url === undefined) throw new CliError(`server "${name}" is a stdio server; sign-in applies only to remote (url) servers`);
  return cfg;
}

/**
 * The sign-ins of the configured store (PostgreSQL in team mode: one sign-in for every replica)
 * and the local secrets vault (static headers stay per machine). Close it when done.
 */
async function openVault(config: Config): Promise<{ store: OAuthStore; secrets: VaultSecretResolver; close: () => Promise<void> }> {
  const dataDir = dataDirOf();
  let shared: Store | undefined;
  try {
    // Followed: the OAuth document is read through its copy in memory, as a gateway reads it.
    shared = config.store !== undefined ? await openConfiguredStore(config, process.env, { follow: true }) : undefined;
    const store = await OAuthStore.open({ dataDir, ...(shared ? { store: shared } : {}) });
    return { store, secrets: new VaultSecretResolver({ dataDir, env: process.env }), close: async () => void (await shared?.close()) };
  } catch (err) {
    await shared?.close();
    throw cliError(err);
  }
}

/** The server's other static headers (an API key beside OAuth), for the challenge probe. */
async function probeHeaders(cfg: ServerConfig, secrets: VaultSecretResolver): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(cfg.headers ?? {})) {
    if (k.toLowerCase() === "authorization") continue;
    out[k] = await secrets.header(v).catch((err: unknown) => {
      throw cliError(err);
    });
  }
  return out;
}

function describeSignIn(r: SignInResult): string {
  const who = r.account !== undefined ? ` as ${r.account}` : "";
  const scope = r.scope ? `; scopes: ${r.scope}` : "";
  const expiry =
    r.expiresAt !== undefined
      ? `; access token valid for ${formatDuration(Math.max(0, Math.round((r.expiresAt - Date.now()) / 1000) * 1000))}${r.refreshable ? ", refreshed automatically" : ", no refresh token (sign in again when it expires)"}`
      : "";
  return `signed in to ${r.server}${who}${scope}${expiry}. A running gateway connects it within seconds.`;
}

const STATE_TEXT: Record<AuthStatusEntry["state"], string> = {
  signed_in: "signed in",
  refresh_due: "signed in (token refreshes on next use)",
  expired: "expired",
  not_signed_in: "not signed in",
};

function renderStatus(entries: AuthStatusEntry[]): string {
  const now = Date.now();
  return table(
    ["SERVER", "STATUS", "ACCOUNT", "SCOPES", "EXPIRES"],
    entries.map((e) => [
      e.server,
      e.step_up_scope ? `${STATE_TEXT[e.state]}; needs scope ${e.step_up_scope}` : STATE_TEXT[e.state],
      e.account ?? "-",
      e.scopes?.join(" ") ?? "-",
      e.expires_at ? expiresText(Date.parse(e.expires_at) - now) : "-",
    ]),
  );
}

function expiresText(ms: number): string {
  const rounded = Math.round(Math.abs(ms) / 60_000) * 60_000;
  const text = rounded === 0 ? "<1m" : formatDuration(rounded);
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

function cliError(err: unknown): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof SignInError || err instanceof LockedError || err instanceof VaultLockedError || err instanceof VaultTamperedError) return new CliError(err.message);
  return new CliError(errorText(err));
}
