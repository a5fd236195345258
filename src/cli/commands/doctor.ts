// `doctor`: checks the config, each enabled server (command on PATH, or URL reachable over TCP),
// the vault key source, each agent's harness file and, with --probe, a real MCP handshake per
// server. Prints every check, then exits non-zero if any failed.
import { connect } from "node:net";
import type { Command } from "commander";
import { type Config, type ServerConfig } from "../../config/index.js";
import { probeServer } from "../../downstream/probe.js";
import { findCommand } from "../../downstream/spawn-plan.js";
import { probeEmbeddings } from "../../catalog/embeddings/probe.js";
import { formatBytes } from "../../util/units.js";
import { pendingApprovals } from "../../guard/index.js";
import { planSync } from "../../harness/index.js";
import { openKeyring } from "../../vault/keys.js";
import { VaultSecretResolver } from "../../vault/resolver.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import { dataDirOf, example, globalsOf, load, requireServer, syncContext, tildify } from "./common.js";

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  warning?: string;
  handshake_ok?: boolean;
  tool_count?: number;
  latency_ms?: number;
  error?: string;
  needs_auth?: boolean;
  stderr_tail?: string;
}

const PROBE_TIMEOUT_MS = 45_000;
const TCP_TIMEOUT_MS = 3_000;


/** Resolves when a TCP connection to the URL's host and port opens; rejects with the reason. */
function tcpReach(url: string): Promise<void> {
  const u = new URL(url);
  const port = Number(u.port || (u.protocol === "https:" ? 443 : 80));
  const host = u.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port });
    const done = (err?: Error) => {
      sock.destroy();
      if (err) reject(err);
      else resolve();
    };
    sock.setTimeout(TCP_TIMEOUT_MS, () => done(new Error(`no answer from ${host}:${port} within ${TCP_TIMEOUT_MS / 1000}s`)));
    sock.once("connect", () => done());
    sock.once("error", (e: NodeJS.ErrnoException) => done(new Error(`${host}:${port}: ${e.code ?? e.message}`)));
  });
}

async function serverCheck(name: string, s: ServerConfig): Promise<Check> {
  if (s.url !== undefined) {
    try {
      await tcpReach(s.url);
      return { name: `server:${name}`, ok: true, detail: `${s.url} reachable` };
    } catch (err) {
      return { name: `server:${name}`, ok: false, detail: `${s.url} unreachable: ${(err as Error).message}` };
    }
  }
  const found = findCommand({ command: s.command ?? "", platform: process.platform, env: { ...process.env, ...(s.env ?? {}) } });
  return found
    ? { name: `server:${name}`, ok: true, detail: `command ${found}` }
    : { name: `server:${name}`, ok: false, detail: `command "${s.command}" not found on PATH` };
}

export function registerDoctor(program: Command, io: CliIO): void {
  program
    .command("doctor")
    .description("check config, servers, vault and agents (--probe: real MCP handshakes)")
    .option("--probe", "perform a real MCP handshake with each enabled server")
    .option("-s, --server <name>", "check (and probe) only this server")
    .option("-v, --verbose", "with --probe: show the stderr tail of a server that failed to start")
    .addHelpText("after", example(["mcphub doctor", "mcphub doctor --probe", "mcphub doctor --probe --verbose --server notes", "mcphub doctor --probe --server memory --json"]))
    .action(async (opts: { probe?: boolean; server?: string; verbose?: boolean }, cmd: Command) => {
      const json = Boolean(globalsOf(cmd).json);
      const loaded = await load(cmd);
      const { config } = loaded;
      if (opts.server !== undefined) requireServer(config, opts.server);
      const ctx = syncContext(loaded);
      const progress = !json && Boolean(process.stderr.isTTY);
      const checks: Check[] = [{ name: "config", ok: true, detail: `${tildify(loaded.path, ctx.home)} is valid` }];
      const servers = selectServers(config, opts.server);
      for (const [name, s] of servers) checks.push(await serverCheck(name, s));

      const data = dataDirOf();
      // Loaded here, not at the top: every operator command loads this module.
      const [{ loginCommand }, { OAuthManager }, { authStatus }, { OAuthStore }] = await Promise.all([
        import("../../auth/command.js"),
        import("../../auth/manager.js"),
        import("../../auth/status.js"),
        import("../../vault/oauth.js"),
      ]);
      checks.push(...definitionChecks(data, config, opts.server));
      try {
        const ring = await openKeyring(data);
        checks.push({ name: "vault", ok: true, detail: `key from ${ring.status.source}: ${ring.status.detail}`, ...(ring.status.warning ? { warning: ring.status.warning } : {}) });
        const store = await OAuthStore.open({ dataDir: data, keyring: ring });
        const picked = new Set(servers.map(([n]) => n));
        for (const e of await authStatus(config, store, (n) => loginCommand(n, loaded.path))) {
          if (!picked.has(e.server)) continue;
          const ok = e.state === "signed_in" || e.state === "refresh_due";
          const who = e.account !== undefined ? ` as ${e.account}` : "";
          const detail = ok ? `signed in${who}${e.step_up_scope ? `; a request needs scope ${e.step_up_scope}: run \`${e.sign_in}\`` : ""}` : `needs sign-in: run \`${e.sign_in}\``;
          checks.push({ name: `auth:${e.server}`, ok, detail, ...(ok ? {} : { needs_auth: true }) });
        }
      } catch (err) {
        checks.push({ name: "vault", ok: false, detail: (err as Error).message.split("\n")[0] ?? "vault unavailable" });
      }

      const embeddings = config.search?.embeddings;
      if (embeddings && opts.server === undefined) {
        const key = embeddings.api_key;
        const secrets = new VaultSecretResolver({ dataDir: data, env: process.env });
        const p = await probeEmbeddings(embeddings, data, key !== undefined ? () => secrets.header(key) : undefined);
        const cache = p.cache ? `cache: ${p.cache.vectors} vectors (${formatBytes(p.cache.bytes)}) in ${tildify(p.cache.file, ctx.home)}` : "cache: empty (vectors are computed when the gateway starts)";
        checks.push({
          name: "search:embeddings",
          ok: p.ok,
          detail: p.ok
            ? `model ${p.model} at ${p.url}: ${p.dimensions}-dimensional vectors in ${p.latency_ms}ms; ${cache}`
            : `model ${p.model} at ${p.url}: ${p.error}; search falls back to lexical; ${cache}`,
        });
      }

      if (opts.server === undefined) {
        for (const name of Object.keys(config.agents).sort()) {
          const agent = config.agents[name];
          if (!agent || agent.disabled) continue;
          try {
            const plan = await planSync(config, name, ctx);
            const pending = plan.actions.filter((a) => a.action !== "unchanged").length;
            checks.push({
              name: `agent:${name}`,
              ok: true,
              detail: `${tildify(plan.path, ctx.home)}: ${plan.original === undefined ? "not created yet; " : ""}${pending ? `${pending} pending (run \`mcphub sync ${name} --write\`)` : "in sync"}`,
            });
          } catch (err) {
            checks.push({ name: `agent:${name}`, ok: false, detail: (err as Error).message.split("\n")[0] ?? "unreadable" });
          }
        }
      }

      if (opts.probe) {
        const secrets = new VaultSecretResolver({ dataDir: data, env: process.env });
        const auth = new OAuthManager({ dataDir: data, env: process.env, secrets, configPath: loaded.path });
        for (const [name, s] of servers) {
          if (progress) process.stderr.write(`probing ${name}...\n`);
          const r = await probeServer(name, s, { timeoutMs: PROBE_TIMEOUT_MS, secrets, auth, allServers: config.servers });
          checks.push({
            name: `probe:${name}`,
            ok: r.handshake_ok,
            detail: r.handshake_ok ? `${r.tool_count ?? 0} tools in ${r.latency_ms}ms` : (r.error ?? "handshake failed"),
            handshake_ok: r.handshake_ok,
            ...(r.tool_count !== undefined ? { tool_count: r.tool_count } : {}),
            latency_ms: r.latency_ms,
            ...(r.error !== undefined ? { error: r.error } : {}),
            ...(r.needs_auth ? { needs_auth: true } : {}),
            ...(opts.verbose && r.stderr_tail ? { stderr_tail: r.stderr_tail } : {}),
          });
        }
      }

      const failed = checks.filter((c) => !c.ok);
      if (json) {
        printJson(io, checks);
        // The JSON says what failed; a second document on stdout would break its readers.
        if (failed.length) process.exitCode = 1;
        return;
      }
      const c = colors(io);
      const tail = (t: string) => `\n${t.replace(/\s+$/, "").split("\n").map((l) => `      ${c.dim(`| ${l}`)}`).join("\n")}`;
      io.out(
        checks
          .map(
            (ch) =>
              `${ch.ok ? c.green("ok  ") : c.red("FAIL")}  ${ch.name.padEnd(22)} ${ch.detail}${ch.warning ? `\n      ${c.yellow(`warning: ${ch.warning}`)}` : ""}${ch.stderr_tail ? tail(ch.stderr_tail) : ""}`,
          )
          .join("\n"),
      );
      if (failed.length) throw new CliError(`doctor found ${failed.length} problem${failed.length > 1 ? "s" : ""}: ${failed.map((f) => f.name).join(", ")}`);
    });
}

/**
 * Pinned tool definitions that wait for an operator: one failed check per server with tools whose
 * definition changed since approved (what changed, and the approve command), awaiting a first
 * approval, or a definitions file that cannot be read; one passing line when nothing waits.
 */
function definitionChecks(dataDir: string, config: Config, only: string | undefined): Check[] {
  const { pending, unreadable } = pendingApprovals(dataDir, config, only);
  const checks: Check[] = [];
  for (const u of unreadable) checks.push({ name: `definitions:${u.server}`, ok: false, detail: `${u.file} cannot be read (${u.problem}); its tools are refused until it is fixed or deleted` });
  const servers = [...new Set(pending.map((p) => p.server))];
  for (const server of servers) {
    const mine = pending.filter((p) => p.server === server);
    const changed = mine.filter((p) => p.state === "changed");
    const awaiting = mine.filter((p) => p.state === "awaiting_approval");
    const parts = [
      ...changed.map((p) => `${p.namespaced} changed since approved (${p.changes.join("; ")})`),
      ...(awaiting.length ? [`${awaiting.length} tool${awaiting.length > 1 ? "s" : ""} await${awaiting.length > 1 ? "" : "s"} a first approval (${awaiting.map((p) => p.namespaced).join(", ")})`] : []),
    ];
    const approve = mine.length === 1 ? `mcphub approve ${mine[0]?.namespaced}` : `mcphub approve ${server}`;
    checks.push({ name: `definitions:${server}`, ok: false, detail: `${parts.join("; ")}; calls are refused until an operator reviews and runs \`${approve}\`` });
  }
  if (checks.length === 0) checks.push({ name: "definitions", ok: true, detail: "every recorded tool definition is approved" });
  return checks;
}

function selectServers(config: Config, only: string | undefined): [string, ServerConfig][] {
  return Object.entries(config.servers)
    .filter(([n, s]) => (only !== undefined ? n === only : s.enabled))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
