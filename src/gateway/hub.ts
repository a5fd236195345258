// The Hub is one gateway process's shared state: the supervisor with its downstream connections,
// the live catalogue, the vault stores and telemetry. A stdio gateway has one hub and one view;
// the HTTP daemon has one hub and a view per agent, so every agent shares the same connections.
import { loginCommand } from "../auth/command.js";
import { OAuthManager } from "../auth/manager.js";
import { Catalog } from "../catalog/catalog.js";
import { SemanticSearch } from "../catalog/embeddings/service.js";
import type { ServerMeta } from "../catalog/types.js";
import type { Config } from "../config/schema.js";
import { Supervisor } from "../downstream/supervisor.js";
import type { SecretResolver } from "../downstream/types.js";
import { Telemetry } from "../telemetry/index.js";
import { DetachedJournal } from "../vault/detached.js";
import { openKeyring, type Keyring } from "../vault/keys.js";
import { ResultStore } from "../vault/results.js";
import { VaultSecretResolver } from "../vault/resolver.js";
import { errorText } from "../util/errors.js";
import { VERSION } from "../version.js";
import { DetachedRegistry } from "./detached.js";
import type { Logger } from "./log.js";
import { Passthrough } from "./passthrough/router.js";
import { Scope } from "./policy/scope.js";
import { AgentView } from "./view.js";

export interface HubOptions {
  config: Config;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  /** A stdio gateway serves one agent: only that agent's servers are started. */
  agent?: string;
  log: Logger;
  /** The config file, so a needs-sign-in message names the exact command. */
  configPath?: string;
  /** A stdio gateway: exactly one upstream session, which owns every downstream connection. */
  singleSession?: boolean;
}

export class Hub {
  readonly catalog: Catalog;
  readonly supervisor: Supervisor;
  readonly detached: DetachedRegistry;
  readonly telemetry: Telemetry;
  readonly auth: OAuthManager;
  /** Semantic search, when `search.embeddings` is configured (otherwise search is lexical only). */
  readonly semantic: SemanticSearch | undefined;
  /** Routes server→client requests and notifications between downstreams and upstream sessions. */
  readonly passthrough: Passthrough;
  private readonly views = new Map<string, AgentView>();
  /** Supervisor generation last applied to the catalogue, per server (avoids re-indexing twice). */
  private readonly applied = new Map<string, number>();
  private readonly stores: Promise<{ results?: ResultStore; journal?: DetachedJournal; error?: string }>;
  private closed = false;

  constructor(private readonly opts: HubOptions) {
    const { config } = opts;
    this.catalog = new Catalog(serverMeta(config));
    // One keyring for every store: with a passphrase, scrypt runs once per process, not per store.
    let keyring: Promise<Keyring> | undefined;
    const openOnce = () => {
      if (!keyring) {
        const opening = openKeyring(opts.dataDir, opts.env);
        // A locked vault may be unlocked later: do not cache the failure.
        opening.catch(() => {
          if (keyring === opening) keyring = undefined;
        });
        keyring = opening;
      }
      return keyring;
    };
    const secrets: SecretResolver = new VaultSecretResolver({ dataDir: opts.dataDir, env: opts.env, keyring: openOnce });
    const log = (level: "info" | "warn" | "error", msg: string) => opts.log[level](msg);
    this.auth = new OAuthManager({ dataDir: opts.dataDir, env: opts.env, keyring: openOnce, secrets, log, ...(opts.configPath ? { configPath: opts.configPath } : {}) });
    this.passthrough = new Passthrough({ config, supervisor: () => this.supervisor, log: opts.log, singleSession: opts.singleSession === true });
    this.supervisor = new Supervisor({
      servers: config.servers,
      connectTimeoutMs: config.connect_timeout,
      maxMessageBytes: config.max_downstream_message_size,
      clientInfo: { name: opts.agent ? `mcphub/${opts.agent}` : "mcphub", version: VERSION },
      secrets,
      auth: this.auth,
      log,
      hooks: this.passthrough.hooks,
    });
    this.supervisor.onChange((server) => this.syncServer(server));
    const embeddings = config.search?.embeddings;
    if (embeddings) {
      const key = embeddings.api_key;
      this.semantic = new SemanticSearch({
        config: embeddings,
        dataDir: opts.dataDir,
        ...(key !== undefined ? { apiKey: () => secrets.header(key) } : {}),
        log: (level, msg) => opts.log[level](msg),
      });
      const semantic = this.semantic;
      this.catalog.onChange((server) => semantic.updateServer(server, this.catalog.hasServer(server) ? this.catalog.entriesOf(server) : undefined));
    }
    this.telemetry = Telemetry.open({ dataDir: opts.dataDir });
    // The vault is opened in the background: initialize and tools/list never wait for it.
    this.stores = openStores(opts, openOnce).catch((err: unknown) => ({ error: errorText(err) }));
    this.detached = new DetachedRegistry(this);
  }

  get config(): Config {
    return this.opts.config;
  }

  get log(): Logger {
    return this.opts.log;
  }

  get dataDir(): string {
    return this.opts.dataDir;
  }

  /**
   * Applies a server's current snapshot to the catalogue. Called on every supervisor change, and
   * directly by callers that just waited for a server, so they never race the change listener.
   */
  syncServer(server: string): void {
    const snap = this.supervisor.snapshot(server);
    const generation = snap?.connected ? snap.generation : -1;
    if (this.applied.get(server) === generation) return;
    this.applied.set(server, generation);
    this.catalog.updateServer(server, snap?.connected ? snap.tools : undefined);
  }

  /** Starts connecting every enabled server this process may need. */
  start(): void {
    const names = new Scope(this.config, this.opts.agent).startableServers();
    this.supervisor.start(names);
  }

  /** Whether this process starts the server (enabled, and in `--agent`'s scope if one was given). */
  willStart(server: string): boolean {
    return this.config.servers[server]?.enabled === true && new Scope(this.config, this.opts.agent).allowsServer(server);
  }

  /**
   * Applies an enable/disable of one server to the running gateway (the status page has already
   * written it to the config file): the connection is stopped or started and views built from
   * now on see the new config. Until config hot reload exists, this is the one change the hub
   * applies at run time.
   */
  async setServerEnabled(server: string, enabled: boolean): Promise<void> {
    const cfg = this.config.servers[server];
    if (!cfg) throw new Error(`unknown server "${server}"`);
    if (cfg.enabled === enabled) return;
    const next = { ...cfg, enabled };
    this.opts.config = { ...this.config, servers: { ...this.config.servers, [server]: next } };
    this.views.clear();
    await this.supervisor.replace(server, next);
    if (this.willStart(server)) this.supervisor.start([server]);
    this.syncServer(server);
  }

  /** The per-agent projection; an unknown agent throws with a clear message (via Scope). */
  view(agent?: string): AgentView {
    const key = agent ?? "";
    let v = this.views.get(key);
    if (!v) {
      v = new AgentView(this.config, this.catalog, agent);
      this.views.set(key, v);
    }
    return v;
  }

  async resultStore(): Promise<ResultStore | undefined> {
    return (await this.stores).results;
  }

  async journal(): Promise<DetachedJournal | undefined> {
    return (await this.stores).journal;
  }

  /** The exact command that signs a server in (for servers in state needs_auth). */
  signInCommand(server: string): string {
    return loginCommand(server, this.opts.configPath, this.opts.env);
  }

  /** Why the vault could not be opened, if it could not (for list_servers/doctor). */
  async vaultProblem(): Promise<string | undefined> {
    return (await this.stores).error;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.passthrough.close();
    this.detached.cancelAll();
    await this.supervisor.close();
    this.auth.close();
    await this.semantic?.close();
    await this.telemetry.close();
  }
}

async function openStores(opts: HubOptions, keyring: () => Promise<Keyring>) {
  const retentionMs = opts.config.result_retention;
  const ring = await keyring();
  const results = await ResultStore.open({ dataDir: opts.dataDir, retentionMs, env: opts.env, keyring: ring });
  const journal = await DetachedJournal.open({ dataDir: opts.dataDir, retentionMs, env: opts.env, keyring: ring });
  return { results, journal };
}

function serverMeta(config: Config): Record<string, ServerMeta> {
  const out: Record<string, ServerMeta> = {};
  for (const [name, s] of Object.entries(config.servers)) {
    out[name] = {
      ...(s.description !== undefined ? { description: s.description } : {}),
      ...(s.tags ? { tags: s.tags } : {}),
      ...(s.use_when ? { use_when: s.use_when } : {}),
      ...(s.tool_use_when ? { tool_use_when: s.tool_use_when } : {}),
    };
  }
  return out;
}
