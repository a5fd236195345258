// `mcphub token create|list|revoke`: bearer tokens that let an agent use the HTTP daemon
// (`mcphub up`). A token is shown once, at creation; mcphub keeps only its hash.
import type { Command } from "commander";
import { TokenStore, type TokenInfo } from "../../serve/tokens.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import type { Config } from "../../config/index.js";
import { dataDirOf, example, globalsOf, load, table } from "./common.js";
import { openConfiguredStore } from "./shared-store.js";

/** The agent must be configured: a token for a typo would authenticate into an unknown scope. */
async function requireAgent(cmd: Command, agent: string): Promise<void> {
  const { config } = await load(cmd);
  if (config.agents[agent] !== undefined) return;
  const known = Object.keys(config.agents).sort();
  throw new CliError(
    `unknown agent "${agent}"${known.length ? `; configured agents: ${known.join(", ")}` : " (no agents are configured; add one under agents: in the config)"}`,
  );
}

/**
 * The tokens of the configured store (PostgreSQL in team mode), run and closed. A config that
 * cannot be read leaves the data directory's tokens, as before the store existed, so a broken
 * config never locks an operator out of revoking a token.
 */
async function withTokens<T>(cmd: Command, fn: (tokens: TokenStore) => Promise<T>): Promise<T> {
  let config: Config | undefined;
  try {
    config = (await load(cmd)).config;
  } catch {
    config = undefined;
  }
  if (config?.store === undefined) return fn(TokenStore.open(dataDirOf())).catch((err: unknown) => {
    throw storeError(err);
  });
  // Followed: the token document is read through its copy in memory, as a daemon reads it.
  const store = await openConfiguredStore(config, process.env, { follow: true });
  try {
    return await fn(TokenStore.open(store));
  } catch (err) {
    throw storeError(err);
  } finally {
    await store.close();
  }
}

function storeError(err: unknown): CliError {
  return err instanceof CliError ? err : new CliError(err instanceof Error ? err.message : String(err));
}

export function registerToken(program: Command, io: CliIO): void {
  const token = program
    .command("token")
    .description("manage the bearer tokens agents use to reach the HTTP daemon (mcphub up)")
    .addHelpText("after", example(["mcphub token create claude", "mcphub token list", "mcphub token revoke claude"]));

  token
    .command("create <agent>")
    .description("Create a token for AGENT and print it once")
    .addHelpText("after", example(["mcphub token create claude", "TOKEN=$(mcphub token create claude)   # only the token goes to stdout", "mcphub token create claude --json"]))
    .action(async (agent: string, _flags: unknown, cmd: Command) => {
      await requireAgent(cmd, agent);
      const created = await withTokens(cmd, (t) => t.create(agent));
      if (globalsOf(cmd).json) {
        printJson(io, { ...created.info, token: created.token });
        return;
      }
      const c = colors(io);
      io.out(created.token);
      io.err(
        c.dim(
          `Token ${created.info.id} for agent "${agent}". It is shown only now and cannot be displayed again; ` +
            `give it to the harness as "Authorization: Bearer <token>" (mcphub sync --write does this for you).`,
        ),
      );
    });

  token
    .command("list [agent]")
    .description("List tokens (id, agent, created, last four characters; never the secret)")
    .addHelpText("after", example(["mcphub token list", "mcphub token list claude --json"]))
    .action(async (agent: string | undefined, _flags: unknown, cmd: Command) => {
      const tokens = await withTokens(cmd, (t) => t.list(agent));
      if (globalsOf(cmd).json) {
        printJson(io, tokens);
        return;
      }
      io.out(renderTokens(tokens, io, agent));
    });

  token
    .command("revoke <agentOrId>")
    .description("Revoke one token by id, or every token of an agent")
    .addHelpText("after", example(["mcphub token revoke claude", "mcphub token revoke tok_99f3c5355529"]))
    .action(async (agentOrId: string, _flags: unknown, cmd: Command) => {
      const n = await withTokens(cmd, (t) => t.revoke(agentOrId));
      if (n === 0) throw new CliError(`no live token matches "${agentOrId}"; see \`mcphub token list\``);
      if (globalsOf(cmd).json) printJson(io, { revoked: n });
      else io.out(`Revoked ${n} token${n === 1 ? "" : "s"} (${agentOrId}). A running daemon refuses ${n === 1 ? "it" : "them"} from its next request.`);
    });
}

function renderTokens(tokens: TokenInfo[], io: CliIO, agent: string | undefined): string {
  if (tokens.length === 0) return agent ? `No tokens for agent "${agent}".` : "No tokens. Create one with `mcphub token create AGENT`.";
  const c = colors(io);
  const rows = tokens.map((t) => [t.id, t.agent, t.created.slice(0, 19).replace("T", " "), `…${t.last4}`, t.revoked ? `revoked ${t.revoked.slice(0, 10)}` : "live"]);
  const header = ["ID", "AGENT", "CREATED (UTC)", "ENDS", "STATE"];
  const [head, ...lines] = table(header, rows).split("\n");
  return [c.bold(head ?? ""), ...lines.map((l, i) => (rows[i]?.[4] === "live" ? l : c.dim(l)))].join("\n");
}
