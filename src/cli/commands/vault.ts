// `mcphub vault set|list|rm|status`: manage the secrets in mcphub's encrypted vault and show how
// the vault is keyed. A secret value is read from stdin (when piped) or a hidden prompt, never from
// argv (argv is visible in `ps` and shell history); values are never printed.
import type { Command } from "commander";
import { dataDir } from "../../config/paths.js";
import { openKeyring, vaultPaths } from "../../vault/keys.js";
import { DetachedJournal } from "../../vault/detached.js";
import { VaultLockedError, VaultTamperedError } from "../../vault/errors.js";
import { ResultStore } from "../../vault/results.js";
import { OAuthStore } from "../../vault/oauth.js";
import { SecretStore, parseSecretRef } from "../../vault/secrets.js";
import { formatBytes } from "../../util/units.js";
import type { Store } from "../../store/index.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import { configIfAny, openConfiguredStore } from "./shared-store.js";

/** Retention used only to open the stores for `status` (pruning reads each file's own expiry). */
const STATUS_RETENTION_MS = 24 * 3_600_000;

export function registerVault(program: Command, io: CliIO): void {
  const vault = program
    .command("vault")
    .description("manage secrets in mcphub's encrypted vault (values never go through argv)")
    .addHelpText("after", "\nExamples:\n  mcphub vault set github/GITHUB_TOKEN\n  mcphub vault list\n  mcphub vault rm github/GITHUB_TOKEN\n  mcphub vault status");

  vault
    .command("set")
    .description("store a secret; the value is read from stdin when piped, else from a hidden prompt")
    .argument("<ref>", "PROJECT/KEY, e.g. github/GITHUB_TOKEN")
    .argument("[value...]", "(refused: never pass a secret on the command line)")
    .addHelpText("after", "\nExamples:\n  printf %s \"$TOKEN\" | mcphub vault set github/GITHUB_TOKEN\n  mcphub vault set github/GITHUB_TOKEN     # prompts, input hidden")
    .action(async (ref: string, extra: string[]) => {
      if (extra.length > 0) {
        throw new CliError(
          "refusing a secret value on the command line (it would show in ps and shell history); pipe it on stdin or run without it to be prompted",
        );
      }
      const { project, key } = checkedRef(ref);
      const value = await readSecretValue(`Value for ${project}/${key}: `);
      const store = await guard(() => SecretStore.open({ dataDir: dataDir() }));
      await guard(() => store.set(`${project}/${key}`, value));
      io.err(`stored ${project}/${key}`);
    });

  vault
    .command("list")
    .alias("ls")
    .description("list secret names (PROJECT/KEY), never values")
    .addHelpText("after", "\nExamples:\n  mcphub vault list\n  mcphub vault list github --json")
    .argument("[project]", "only this project")
    .action(async (project: string | undefined, _opts: unknown, cmd: Command) => {
      const store = await guard(() => SecretStore.open({ dataDir: dataDir() }));
      const names = await guard(() => store.list(project));
      if (wantsJson(cmd)) return printJson(io, names);
      if (names.length === 0) {
        io.err(project ? `no secrets in project ${project}` : "no secrets stored; add one with: mcphub vault set PROJECT/KEY");
        return;
      }
      io.out(names.join("\n"));
    });

  vault
    .command("rm")
    .alias("remove")
    .description("delete a secret")
    .addHelpText("after", "\nExamples:\n  mcphub vault rm github/GITHUB_TOKEN")
    .argument("<ref>", "PROJECT/KEY")
    .action(async (ref: string) => {
      const { project, key } = checkedRef(ref);
      const store = await guard(() => SecretStore.open({ dataDir: dataDir() }));
      const removed = await guard(() => store.rm(`${project}/${key}`));
      if (!removed) throw new CliError(`no secret ${project}/${key}`);
      io.err(`removed ${project}/${key}`);
    });

  vault
    .command("status")
    .description("show which key source protects the vault, and what it holds")
    .addHelpText("after", "\nExamples:\n  mcphub vault status\n  mcphub vault status --json")
    .action(async (_opts: unknown, cmd: Command) => {
      const dir = dataDir();
      // In team mode results, detached calls and sign-ins are the store's, under its own key.
      const config = await configIfAny(cmd);
      const shared = config?.store !== undefined ? await openConfiguredStore(config, process.env, { follow: true, migrate: false }) : undefined;
      const report = await vaultStatus(dir, shared).finally(() => shared?.close());
      if (wantsJson(cmd)) {
        printJson(io, report);
      } else {
        const c = colors(io);
        const lines = [`vault      ${vaultPaths(dir).root}${report.store ? ` (results, detached calls and sign-ins: ${report.store})` : ""}`];
        if (report.locked) {
          lines.push(`state      ${c.red("locked")}: ${report.locked}`);
        } else if (report.key) {
          lines.push(`key        ${report.key.source}: ${report.key.detail}`);
          if (report.key.warning) lines.push(`${c.yellow("warning")}    ${report.key.warning}`);
          lines.push(`results    ${report.results?.count ?? 0} (${formatBytes(report.results?.bytes ?? 0)})`);
          lines.push(`detached   ${report.detached?.count ?? 0} (${report.detached?.pending ?? 0} pending)`);
          lines.push(`secrets    ${report.secrets ?? 0}`);
          lines.push(`oauth      ${report.oauth_sign_ins ?? 0} server${report.oauth_sign_ins === 1 ? "" : "s"} signed in (mcphub auth status)`);
        }
        io.out(lines.join("\n"));
      }
      if (report.locked) process.exitCode = 1;
    });
}

interface VaultStatusReport {
  dataDir: string;
  /** The team store holding results, detached calls and sign-ins (team mode). */
  store?: string;
  locked?: string;
  key?: { source: string; detail: string; warning?: string };
  results?: { count: number; bytes: number; diskBytes: number };
  detached?: { count: number; pending: number };
  secrets?: number;
  oauth_sign_ins?: number;
}

async function vaultStatus(dir: string, shared?: Store): Promise<VaultStatusReport> {
  const where = shared ? { store: shared.where } : {};
  try {
    // The local secrets vault has the machine's key; a team store has the team's (passphrase).
    const keyring = await openKeyring(dir, process.env, shared);
    const local = shared ? await openKeyring(dir) : keyring;
    const inStore = shared ? { store: shared } : {};
    const results = await ResultStore.open({ dataDir: dir, retentionMs: STATUS_RETENTION_MS, keyring, ...inStore });
    const journal = await DetachedJournal.open({ dataDir: dir, retentionMs: STATUS_RETENTION_MS, keyring, ...inStore });
    const secrets = await SecretStore.open({ dataDir: dir, keyring: local });
    const oauth = await OAuthStore.open({ dataDir: dir, keyring, ...inStore });
    let signIns = 0;
    for (const server of await oauth.servers()) if ((await oauth.get(server))?.tokens) signIns++;
    return {
      dataDir: dir,
      ...where,
      key: keyring.status,
      results: await results.stats(),
      detached: await journal.stats(),
      secrets: (await secrets.list()).length,
      oauth_sign_ins: signIns,
    };
  } catch (err) {
    if (err instanceof VaultLockedError) return { dataDir: dir, ...where, locked: err.message };
    throw err;
  }
}

function wantsJson(cmd: Command): boolean {
  return Boolean(cmd.optsWithGlobals<{ json?: boolean }>().json);
}

function checkedRef(ref: string): { project: string; key: string } {
  try {
    return parseSecretRef(ref);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

/** Turns vault failures into one-line CLI errors. */
async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof VaultLockedError || err instanceof VaultTamperedError) throw new CliError(err.message);
    if (err instanceof Error && !(err instanceof CliError)) throw new CliError(err.message);
    throw err;
  }
}

/** The secret value: all of stdin when it is not a terminal (one trailing newline dropped), else a
 *  hidden prompt on the terminal. */
async function readSecretValue(prompt: string): Promise<string> {
  const stdin = process.stdin;
  const value = stdin.isTTY ? await promptHidden(prompt) : await readAllStdin();
  if (value === "") throw new CliError("empty secret value; nothing stored");
  return value;
}

async function readAllStdin(): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of process.stdin) parts.push(typeof part === "string" ? Buffer.from(part) : (part as Buffer));
  return Buffer.concat(parts).toString("utf8").replace(/\r?\n$/, "");
}

/** Reads one line from the terminal without echoing it. */
function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("data", onData);
      process.stderr.write("\n");
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (data: Buffer) => {
      for (const ch of data.toString("utf8")) {
        if (ch === "\r" || ch === "\n" || ch === "\u0004") return finish();
        if (ch === "\u0003") return finish(new CliError("cancelled; nothing stored", 130));
        if (ch === "\u007f" || ch === "\b") value = [...value].slice(0, -1).join("");
        else if (ch >= " ") value += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onData);
  });
}
