// `doctor`: checks the config, each enabled server (command on PATH, or URL reachable over TCP),
// the vault key source, each agent's harness file and, with --probe, a real MCP handshake per
// server. Prints every check, then exits non-zero if any failed. In team mode the store is checked
// (reachable, schema version, latency) and the pins, approvals, vault key and sign-ins are read from it.
import { connect } from "node:net";
import type { Command } from "commander";
import { type Config, type ServerConfig } from "../../config/index.js";
import { probeServer } from "../../downstream/probe.js";
import { connectionFingerprint } from "../../downstream/identity.js";
import { CatalogCache } from "../../catalog/cache/store.js";
import { makeListing } from "../../catalog/cache/listing.js";
import { findCommand } from "../../downstream/stdio/spawn-plan.js";
import { resolveChildCwd } from "../../downstream/stdio/child-env.js";
import { isSandboxed } from "../../config/sandbox.js";
import { expandHome } from "../../config/paths.js";
import { describeSandbox, SandboxError, summaryLine } from "../../sandbox/index.js";
import { harnessFiles } from "../harness-files.js";
import { probeEmbeddings } from "../../catalog/embeddings/probe.js";
import { formatBytes } from "../../util/units.js";
import { pendingApprovals } from "../../guard/index.js";
import { planSync } from "../../harness/index.js";
import { findDaemon, healthProblem, reachableBase } from "../../service/index.js";
import { openKeyring } from "../../vault/keys.js";
import { VaultSecretResolver } from "../../vault/resolver.js";
import { CliError, colors, printJson, type CliIO } from "../context.js";
import type { Store } from "../../store/index.js";
import type { PgStore } from "../../store/postgres/index.js";
import { dataDirOf, example, globalsOf, load, requireServer, syncContext, tildify } from "./common.js";
import { openConfiguredStore } from "./shared-store.js";

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

/** What sandboxes hide besides the built-in list: every known harness's config and the agents' files. */
function sandboxProtect(config: Config, home: string): string[] {
  return [...harnessFiles(process.env), ...Object.values(config.agents).flatMap((a) => (a.path !== undefined ? [expandHome(a.path, home)] : []))];
}

/**
 * How a stdio server would be confined, checked for real (bubblewrap's trial sandbox, every path
 * it lists): the summary, or the cause and fix that would fail its start. Off is said plainly.
 */
async function sandboxCheck(name: string, s: ServerConfig, config: Config, home: string): Promise<Check | undefined> {
  if (s.url !== undefined) return undefined;
  const check = `sandbox:${name}`;
  if (!isSandboxed(s.sandbox)) return { name: check, ok: true, detail: "off: it runs with your full rights (docs/sandbox.md)" };
  const env = { ...(process.env as Record<string, string>), ...(s.env ?? {}) };
  const cwd = resolveChildCwd(s.cwd);
  try {
    const summary = await describeSandbox({
      server: name,
      settings: s.sandbox,
      command: s.command ?? "",
      resolvedCommand: findCommand({ command: s.command ?? "", platform: process.platform, env, ...(cwd ? { cwd } : {}) }),
      args: s.args ?? [],
      env,
      ownEnv: Object.keys(s.env ?? {}),
      cwd,
      protect: sandboxProtect(config, home),
    });
    const backend = `${summary.backend}${summary.version ? ` ${summary.version}` : ""}`;
    return { name: check, ok: true, detail: `${backend}: ${summaryLine(summary)}`, ...(summary.notes.length ? { warning: summary.notes.join("; ") } : {}) };
  } catch (err) {
    if (err instanceof SandboxError) return { name: check, ok: false, detail: err.message };
    throw err;
  }
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
      if (opts.server === undefined && servers.length === 0) {
        const n = Object.keys(config.servers).length;
        checks.push({
          name: "servers",
          ok: false,
          detail: `no server is enabled${n ? ` (${n} configured, all disabled; \`mcphub enable NAME\`)` : ""}: the gateway serves only its own management tools; add one with \`mcphub add NAME COMMAND [ARGS...]\``,
        });
      }
      for (const [name, s] of servers) checks.push(await serverCheck(name, s));
      for (const [name, s] of servers) {
        const c = await sandboxCheck(name, s, config, ctx.home);
        if (c) checks.push(c);
      }

      const data = dataDirOf();
      // The shared state: the data directory, or PostgreSQL in team mode (checked first: the
      // definitions, vault key and sign-ins below are read from it).
      let shared: Store | undefined;
      if (config.store !== undefined) {
        try {
          shared = await openConfiguredStore(config, process.env, { follow: true, migrate: false });
          checks.push(await storeCheck(shared as PgStore));
        } catch (err) {
          checks.push({ name: "store", ok: false, detail: `${(err as Error).message}; the definitions, vault key and sign-ins it holds were not checked` });
        }
      }
      try {
        // Loaded here, not at the top: every operator command loads this module.
        const [{ loginCommand }, { OAuthManager }, { authStatus }, { OAuthStore }] = await Promise.all([
          import("../../auth/command.js"),
          import("../../auth/manager.js"),
          import("../../auth/status.js"),
          import("../../vault/oauth.js"),
        ]);
        if (shared || config.store === undefined) {
          checks.push(...definitionChecks(shared ?? data, config, opts.server));
          try {
            const ring = await openKeyring(data, process.env, shared);
            checks.push({ name: "vault", ok: true, detail: `key from ${ring.status.source}: ${ring.status.detail}`, ...(ring.status.warning ? { warning: ring.status.warning } : {}) });
            const store = await OAuthStore.open({ dataDir: data, keyring: ring, ...(shared ? { store: shared } : {}) });
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

        /** Daemon URLs harness entries point at (or will, after sync), and which agents use each. */
        const daemonUsers = new Map<string, string[]>();
        if (opts.server === undefined) {
          for (const name of Object.keys(config.agents).sort()) {
            const agent = config.agents[name];
            if (!agent || agent.disabled) continue;
            try {
              const plan = await planSync(config, name, ctx);
              const pending = plan.actions.filter((a) => a.action !== "unchanged").length;
              for (const e of plan.desired) if (e.url !== undefined) daemonUsers.set(e.url, [...(daemonUsers.get(e.url) ?? []), name]);
              const dups = plan.duplicates;
              checks.push({
                name: `agent:${name}`,
                ok: dups.length === 0,
                detail:
                  `${tildify(plan.path, ctx.home)}: ${plan.original === undefined ? "not created yet; " : ""}${pending ? `${pending} pending (run \`mcphub sync ${name} --write\`)` : "in sync"}` +
                  (dups.length
                    ? `; ${dups.map((d) => (d.name === d.server ? d.name : `${d.name} (= ${d.server})`)).join(", ")} ${dups.length === 1 ? "is" : "are"} also served by the gateway, so the model sees ${dups.length === 1 ? "its" : "their"} tools twice: run \`mcphub offload ${name} --write\``
                    : ""),
              });
            } catch (err) {
              checks.push({ name: `agent:${name}`, ok: false, detail: (err as Error).message.split("\n")[0] ?? "unreadable" });
            }
          }
        }

        if (opts.server === undefined) checks.push(...(await daemonChecks(data, loaded.path, daemonUsers)));

        if (opts.probe) {
          const secrets = new VaultSecretResolver({ dataDir: data, env: process.env });
          const auth = new OAuthManager({ dataDir: data, env: process.env, secrets, configPath: loaded.path, ...(shared ? { store: shared } : {}) });
          const cache = new CatalogCache(shared ?? data);
          for (const [name, s] of servers) {
            if (progress) process.stderr.write(`probing ${name}...\n`);
            const r = await probeServer(name, s, { timeoutMs: PROBE_TIMEOUT_MS, secrets, auth, allServers: config.servers, sandboxProtect: [data, ...sandboxProtect(config, ctx.home)] });
            // What the probe listed is what a gateway would: it fills the catalogue cache, so the next
            // gateway answers discovery for this server at once without starting it.
            let cached = "";
            if (r.listing) {
              try {
                await cache.write(name, connectionFingerprint(s), makeListing({ ...r.listing, ...(r.serverVersion ? { serverVersion: r.serverVersion } : {}) }, "live", Date.now()));
                cached = "; catalogue cached";
              } catch (err) {
                cached = `; the catalogue cache could not be written (${(err as Error).message.split("\n")[0]})`;
              }
            }
            checks.push({
              name: `probe:${name}`,
              ok: r.handshake_ok,
              detail: r.handshake_ok ? `${r.tool_count ?? 0} tools in ${r.latency_ms}ms${cached}` : (r.error ?? "handshake failed"),
              handshake_ok: r.handshake_ok,
              ...(r.tool_count !== undefined ? { tool_count: r.tool_count } : {}),
              latency_ms: r.latency_ms,
              ...(r.error !== undefined ? { error: r.error } : {}),
              ...(r.needs_auth ? { needs_auth: true } : {}),
              ...(opts.verbose && r.stderr_tail ? { stderr_tail: r.stderr_tail } : {}),
            });
          }
        }

      } finally {
        await shared?.close();
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
function definitionChecks(dataDir: string | Store, config: Config, only: string | undefined): Check[] {
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

/**
 * Every daemon address a harness entry points at must answer, or that harness has no tools at all;
 * a daemon recorded in the data directory is reported too (where it really listens).
 */
async function daemonChecks(dataDir: string, configPath: string, users: Map<string, string[]>): Promise<Check[]> {
  const checks: Check[] = [];
  const recorded = findDaemon(dataDir, configPath);
  const recordedBase = recorded ? reachableBase(recorded) : undefined;
  for (const [url, agents] of users) {
    const base = url.replace(/\/mcp$/, "/");
    const problem = await healthProblem(base);
    const elsewhere = recorded && recordedBase !== base ? ` (a daemon for this config runs at ${recorded.url}, pid ${recorded.pid}: is \`listen:\` what it was started with?)` : "";
    checks.push(
      problem === undefined
        ? { name: "daemon", ok: true, detail: `${url} answers (used by ${agents.join(", ")})` }
        : {
            name: "daemon",
            ok: false,
            detail: `${agents.join(", ")} point${agents.length === 1 ? "s" : ""} at ${url}, where no mcphub daemon answers (${problem})${elsewhere}; start it with \`mcphub up\`, or keep it running with \`mcphub service install\``,
          },
    );
  }
  if (recorded && users.size === 0) {
    const problem = await healthProblem(recordedBase ?? "");
    checks.push(
      problem === undefined
        ? { name: "daemon", ok: true, detail: `${recorded.url} answers (pid ${recorded.pid}; no harness entry points at it: set \`listen:\` and run \`mcphub sync --write\` to use it)` }
        : { name: "daemon", ok: false, detail: `the daemon recorded at ${recorded.url} (pid ${recorded.pid}) does not answer (${problem})` },
    );
  }
  return checks;
}

/** The team store: reachable, its schema (pending migrations fail: a replica would apply them), latency. */
async function storeCheck(store: PgStore): Promise<Check> {
  const probe = await store.probe(3000);
  if (!probe.reachable) return { name: "store", ok: false, detail: `${store.where}: ${probe.problem ?? probe.reason ?? "unreachable"}` };
  const schema = await store.schema();
  const pending = schema.pending.map((m) => m.version);
  return {
    name: "store",
    ok: pending.length === 0,
    detail: `PostgreSQL ${store.where}: schema ${probe.schema_version ?? 0}, ${probe.latency_ms} ms${pending.length ? `; migrations ${pending.join(", ")} pending: run \`mcphub store migrate\`` : ""}`,
  };
}

function selectServers(config: Config, only: string | undefined): [string, ServerConfig][] {
  return Object.entries(config.servers)
    .filter(([n, s]) => (only !== undefined ? n === only : s.enabled))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
