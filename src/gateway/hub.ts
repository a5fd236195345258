// The Hub is one gateway process's shared state: the supervisor with its downstream connections,
// the catalogue (live listings, and cached ones from disk so discovery works before any downstream
// runs), the vault stores and telemetry. A stdio gateway has one hub and one view; the HTTP daemon
// has one hub and a view per agent, so every agent shares the same connections. The hub decides
// which servers start now and which on first use, waits (bounded) for servers discovery still
// needs, and applies a reloaded config as a diff.
import type { Store } from "../store/index.js";
import { loginCommand, mcphubCommand } from "../auth/command.js";
import { OAuthManager } from "../auth/manager.js";
import { makeListing, type ServerListing } from "../catalog/cache/listing.js";
import { CatalogCache } from "../catalog/cache/store.js";
import { Catalog } from "../catalog/catalog.js";
import { SemanticSearch } from "../catalog/embeddings/service.js";
import type { ServerMeta } from "../catalog/types.js";
import { expandHome, homeDir } from "../config/paths.js";
import { idleTimeoutOf, startModeOf } from "../config/queries.js";
import type { Config } from "../config/schema.js";
import { connectionFingerprint } from "../downstream/identity.js";
import { Supervisor, type ReconcileResult } from "../downstream/supervisor.js";
import type { SecretResolver } from "../downstream/types.js";
import { canonicalJson } from "../util/json/canonical.js";
import { configureTracing, errorClassOf, NO_METRICS, shutdownTracing, spanName, Telemetry, type Metrics } from "../telemetry/index.js";
import { DetachedJournal } from "../vault/detached.js";
import { openKeyring, type Keyring } from "../vault/keys.js";
import { ResultStore } from "../vault/results.js";
import { VaultSecretResolver } from "../vault/resolver.js";
import { errorText } from "../util/errors.js";
import { VERSION } from "../version.js";
import { Guard } from "../guard/index.js";
import type { Logger } from "../util/log.js";
import { DetachedRegistry, type CallPorts } from "./call/index.js";
import { Limiter } from "./limits/index.js";
import { observeStore, registerHubGauges } from "./observe.js";
import { Passthrough } from "./passthrough/index.js";
import { Scope } from "./policy/index.js";
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
  /** Where calls, stores and state are counted (the daemon's /metrics); none by default. */
  metrics?: Metrics;
  /** The limits' clock (tests); Date.now by default. */
  now?: () => number;
  /** The shared state (PostgreSQL in team mode); absent, the data directory's files. */
  store?: Store;
  /** Every known harness's config file (the CLI owns the harness registry): hidden from sandboxes. */
  harnessFiles?: readonly string[];
}

/** What a reload changed, for the one log line that reports it. */
export interface ReloadSummary extends ReconcileResult {
  /** Top-level keys (other than servers) whose value changed. */
  settings: string[];
  /** Keys that changed but only take effect after a restart. */
  needsRestart: string[];
}

/** Grace added to connect_timeout when a call waits for a server to become ready. */
const READY_GRACE_MS = 5000;

export class Hub {
  readonly catalog: Catalog;
  readonly supervisor: Supervisor;
  readonly detached: DetachedRegistry;
  readonly telemetry: Telemetry;
  readonly auth: OAuthManager;
  readonly cache: CatalogCache;
  private current: Config;
  /** Semantic search, when `search.embeddings` is configured (otherwise search is lexical only). */
  readonly semantic: SemanticSearch | undefined;
  /** Routes server→client requests and notifications between downstreams and upstream sessions. */
  readonly passthrough: Passthrough;
  /** Effect classes, agent policies, confirmation and pinned definitions (docs/guardrails.md). */
  readonly guard: Guard;
  /** What the call pipeline may use of this hub (gateway/call/context.ts). */
  readonly calls: CallPorts;
  /** Call limits and the ledger of calls in flight (docs/operations.md#limits). */
  readonly limits: Limiter;
  readonly metrics: Metrics;
  private readonly views = new Map<string, AgentView>();
  /** Supervisor generation last applied to the catalogue, per server (avoids re-indexing twice). */
  private readonly applied = new Map<string, number>();
  private readonly reloadListeners = new Set<() => void>();
  /** Servers whose cache write failed once (warned once, not on every re-list). */
  private readonly cacheWarned = new Set<string>();
  private readonly stores: Promise<{ results?: ResultStore; journal?: DetachedJournal; error?: string }>;
  private started = false;
  private closed = false;

  constructor(private readonly opts: HubOptions) {
    const { config } = opts;
    this.current = config;
    this.catalog = new Catalog(serverMeta(config));
    this.cache = new CatalogCache(opts.store ?? opts.dataDir);
    // One keyring for every store: with a passphrase, scrypt runs once per process, not per store.
    let keyring: Promise<Keyring> | undefined;
    const openOnce = () => {
      if (!keyring) {
        const opening = openKeyring(opts.dataDir, opts.env, opts.store);
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
    this.auth = new OAuthManager({ dataDir: opts.dataDir, env: opts.env, keyring: openOnce, secrets, log, ...(opts.store ? { store: opts.store } : {}), ...(opts.configPath ? { configPath: opts.configPath } : {}) });
    // A getter, so the pass-through reads the config in force after a reload.
    const configNow = () => this.config;
    this.passthrough = new Passthrough({
      get config() {
        return configNow();
      },
      supervisor: () => this.supervisor,
      log: opts.log,
      singleSession: opts.singleSession === true,
    });
    this.supervisor = new Supervisor({
      servers: config.servers,
      connectTimeoutMs: config.connect_timeout,
      maxMessageBytes: config.max_downstream_message_size,
      clientInfo: { name: opts.agent ? `mcphub/${opts.agent}` : "mcphub", version: VERSION },
      secrets,
      auth: this.auth,
      log: (level, msg) => opts.log[level](msg),
      idleTimeoutMs: (_name, cfg) => idleTimeoutOf(this.config, cfg),
      hooks: this.passthrough.hooks,
      // Besides the built-in list: this gateway's data dir, every known harness's config file and
      // the ones its agents name.
      sandboxProtect: () => [
        opts.dataDir,
        ...(opts.harnessFiles ?? []),
        ...Object.values(this.config.agents).flatMap((a) => (a.path !== undefined ? [expandHome(a.path, homeDir(opts.env))] : [])),
      ],
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
    // Before the cached listings are loaded, so their definitions are pinned at first sight too.
    this.guard = new Guard({ config: () => this.config, catalog: this.catalog, dataDir: opts.dataDir, ...(opts.store ? { store: opts.store } : {}), telemetry: () => this.telemetry, log: opts.log });
    this.guard.watch();
    // Cached listings before anything answers (and after every catalogue listener is in place),
    // so every discovery surface works before any downstream runs.
    this.cache.prune(new Set(Object.keys(config.servers)));
    for (const name of this.startable()) this.loadCached(name);
    this.telemetry = Telemetry.open({ dataDir: opts.dataDir, ...(opts.store ? { store: opts.store } : {}) });
    this.metrics = opts.metrics ?? NO_METRICS;
    const metrics = this.metrics;
    if (metrics.enabled) this.telemetry.onAudit((r) => metrics.guardrail(r.event, r.reason, r.agent));
    this.limits = new Limiter({ config: () => this.config, ...(opts.now ? { now: opts.now } : {}) });
    registerHubGauges(metrics, { snapshots: () => this.supervisor.snapshots(), limits: this.limits });
    this.applyTracing(config);
    // The vault is opened in the background: initialize and tools/list never wait for it.
    this.stores = openStores(opts, openOnce).then(
      (s) => ({ results: observeStore(s.results, "results", metrics), journal: observeStore(s.journal, "detached", metrics) }),
      (err: unknown) => ({ error: errorText(err) }),
    );
    this.detached = new DetachedRegistry({
      journal: () => this.journal(),
      log: opts.log,
      retentionMs: () => this.config.result_retention,
      limits: () => this.config.detached,
    });
    this.calls = this.callPorts();
  }

  /** The narrow ports the call pipeline runs on: each stage sees only what it needs of the hub. */
  private callPorts(): CallPorts {
    const telemetry = this.telemetry;
    return {
      servers: {
        config: () => this.config,
        catalog: this.catalog,
        ensureListing: (server, signal) => this.ensureListing(server, signal),
        ensureLive: (server, signal) => this.ensureLive(server, signal),
        isLive: (server) => this.isLive(server),
        waitForPending: (view, signal) => this.waitForPending(view, signal),
        command: (args) => this.operatorCommand(args),
      },
      guard: this.guard,
      // The downstream call is a client span of the call's trace; an HTTP downstream gets its
      // traceparent (the fetch deep in the SDK finds the span as the current context: within).
      send: (caller, entry, args, o) => {
        const send = () =>
          this.passthrough.run(
            caller,
            entry.server,
            (route) => {
              const limits: { timeoutMs?: number; idleTimeoutMs?: number; maxTotalMs?: number } = o.limits;
              // Every field set, in one order: one shape for every call's options (spreading
              // the parts built a new shape per combination, and the reads downstream went
              // megamorphic on the hot path).
              return this.supervisor.callTool(entry.server, entry.wire, args, {
                connection: route.connection,
                timeoutMs: limits.timeoutMs,
                idleTimeoutMs: limits.idleTimeoutMs,
                maxTotalMs: limits.maxTotalMs,
                signal: o.signal,
                onProgress: o.onProgress,
                task: o.task,
                // The pass-through routes by the downstream's task id; the registry mirrors its status.
                onTask: (t) => {
                  route.onTask?.(t);
                  o.onTask?.(t);
                },
              });
            },
            o.signal,
          );
        if (!o.trace) return send();
        const span = o.trace.child(spanName("tools/call", entry.wire), "client", { "mcp.method.name": "tools/call", "gen_ai.tool.name": entry.wire, "mcphub.server": entry.server });
        const remote = this.config.servers[entry.server]?.url !== undefined;
        return (remote ? span.within(send) : send()).then(
          (result) => {
            span.end();
            return result;
          },
          (err: unknown) => {
            span.end({ error: errorClassOf(err) });
            throw err;
          },
        );
      },
      results: { store: () => this.resultStore(), problem: () => this.vaultProblem() },
      telemetry: { record: (rec) => telemetry.record(rec) },
      detached: this.detached,
      log: this.opts.log,
      limits: this.limits,
      metrics: this.metrics,
    };
  }

  /** Starts, changes or stops the OTLP exporter for `telemetry.otlp` (loaded only when set). */
  private applyTracing(config: Config): void {
    const otlp = config.telemetry?.otlp;
    configureTracing(otlp, VERSION).catch((err: unknown) => this.log.warn(`tracing: could not start the OTLP exporter (${errorText(err)}); no spans are exported`));
  }

  get config(): Config {
    return this.current;
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
    const cfg = this.config.servers[server];
    if (!cfg?.enabled) {
      this.applied.delete(server);
      this.catalog.setListing(server, undefined);
      return;
    }
    const snap = this.supervisor.snapshot(server);
    if (!snap?.connected) {
      // Gone (stopped when idle, crashed, reconnecting): its tools stay routable, marked cached.
      this.applied.delete(server);
      const had = this.catalog.listingOf(server);
      if (had?.source === "live") this.catalog.setListing(server, { ...had, source: "cached" });
      return;
    }
    if (this.applied.get(server) === snap.generation) return;
    this.applied.set(server, snap.generation);
    const listing = makeListing(
      {
        tools: snap.tools,
        resources: snap.resources,
        resourceTemplates: snap.resourceTemplates,
        prompts: snap.prompts,
        ...(snap.instructions !== undefined ? { instructions: snap.instructions } : {}),
        ...(snap.serverVersion !== undefined ? { serverVersion: snap.serverVersion } : {}),
      },
      "live",
      Date.now(),
    );
    this.catalog.setListing(server, listing);
    this.cache.write(server, connectionFingerprint(cfg), listing).then(
      () => this.cacheWarned.delete(server),
      (err: unknown) => {
        if (this.cacheWarned.has(server)) return;
        this.cacheWarned.add(server);
        this.log.warn(`${server}: could not write its catalogue cache (${errorText(err)}); the next start lists it again`);
      },
    );
  }

  /**
   * Admits every enabled server this process may need, and starts now those that should run
   * now: `eager` ones, and `auto` ones without a cached catalogue (to fill it). The rest start on
   * first use.
   */
  start(): void {
    this.started = true;
    this.admitAndStart(this.startable());
  }

  /** Whether this process starts the server (enabled, and in `--agent`'s scope if one was given). */
  willStart(server: string): boolean {
    return this.config.servers[server]?.enabled === true && new Scope(this.config, this.opts.agent).allowsServer(server);
  }

  /**
   * Applies an enable/disable of one server to the running gateway (the status page has already
   * written it to the config file; the reload that follows finds nothing left to do). It is the
   * same diff as a hot reload, except that an operator who enables a server wants it running, so
   * it is started now whatever its start mode (idle stopping applies as usual). Resolves once a
   * disabled server's process tree is gone.
   */
  async setServerEnabled(server: string, enabled: boolean): Promise<void> {
    const cfg = this.config.servers[server];
    if (!cfg) throw new Error(`unknown server "${server}"`);
    // The config watcher may have applied the page's own write already: the start below still
    // runs then (an idle server with a cached catalogue would otherwise stay idle).
    if (cfg.enabled !== enabled) this.applyConfig({ ...this.config, servers: { ...this.config.servers, [server]: { ...cfg, enabled } } });
    if (enabled && this.started && this.willStart(server)) this.supervisor.start([server]);
    await this.supervisor.settled();
  }

  /** The per-agent projection; an unknown agent throws with a clear message (via Scope). */
  view(agent?: string): AgentView {
    const key = agent ?? "";
    let v = this.views.get(key);
    if (!v) {
      v = new AgentView(this.config, this.catalog, agent, this.guard);
      this.views.set(key, v);
    }
    return v;
  }

  /** Whether `agent` is configured and not disabled (the daemon re-checks it after a reload). */
  hasAgent(agent: string): boolean {
    const a = Object.hasOwn(this.config.agents, agent) ? this.config.agents[agent] : undefined;
    return a !== undefined && !a.disabled;
  }

  /**
   * In-scope, enabled servers whose tools are not known yet (no live and no cached listing) and
   * that have not failed: discovery cannot rule out that they hold what is asked for.
   */
  pendingServers(view: AgentView): string[] {
    return this.startable()
      .filter((name) => view.scope.allowsServer(name) && !this.catalog.listingOf(name))
      .filter((name) => {
        // A server that became ready in this event-loop turn reaches the catalogue one turn later
        // through the change listener; apply it now rather than answer without it.
        this.syncServer(name);
        return !this.catalog.listingOf(name);
      })
      .filter((name) => {
        const snap = this.supervisor.snapshot(name);
        return snap !== undefined && snap.error === undefined && (snap.state === "idle" || snap.state === "connecting");
      });
  }

  /**
   * Before discovery answers: starts pending servers (a `lazy` one is needed now) and waits for
   * them up to `discovery_wait`. Returns the servers still pending afterwards.
   */
  async awaitDiscovery(view: AgentView, signal?: AbortSignal): Promise<string[]> {
    const pending = this.pendingServers(view);
    if (pending.length === 0) return [];
    this.demand(pending);
    const waitMs = this.config.discovery_wait;
    if (waitMs > 0) {
      await Promise.allSettled(pending.map((name) => this.supervisor.waitForServer(name, { timeoutMs: waitMs, ...(signal ? { signal } : {}) })));
      for (const name of pending) this.syncServer(name);
    }
    return this.pendingServers(view);
  }

  /**
   * Waits for the in-scope servers whose listing is not known yet (no live and no cached one),
   * starting idle ones; true when any became ready. A server known from its cache is not waited
   * for: its names are already published.
   */
  async waitForPending(view: AgentView, signal?: AbortSignal): Promise<boolean> {
    const pending = this.pendingServers(view);
    if (pending.length === 0) return false;
    const results = await Promise.allSettled(pending.map((name) => this.ensureListing(name, signal)));
    return results.some((r) => r.status === "fulfilled");
  }

  /**
   * Makes sure the server has a listing (describe, call): starts it when it is idle and waits
   * until it is ready, bounded by connect_timeout + 5s. Throws NotConnectedError when it cannot.
   */
  async ensureListing(server: string, signal?: AbortSignal): Promise<void> {
    if (this.catalog.listingOf(server)) return;
    await this.waitLive(server, signal);
  }

  /**
   * Makes sure the server runs and its listing is live before a call goes out, so the call is
   * checked against the tools the server has now (a stale cache is corrected first).
   */
  ensureLive(server: string, signal?: AbortSignal): Promise<void> | undefined {
    // Every call through call_tool asks: a server that is up answers without a promise to wait on.
    if (this.isLive(server)) return undefined;
    return this.waitLive(server, signal);
  }

  /** The server is connected and its listing is live (no start, no wait needed for a call). */
  isLive(server: string): boolean {
    return this.catalog.listingOf(server)?.source === "live" && this.supervisor.isConnected(server);
  }

  /** Called after a reload was applied (sessions re-check what they advertise). */
  onReload(listener: () => void): () => void {
    this.reloadListeners.add(listener);
    return () => this.reloadListeners.delete(listener);
  }

  /**
   * Applies a new, validated config without a restart: servers added, removed or changed (only a
   * server whose connection changed is restarted; the others keep their sessions and in-flight
   * calls), metadata, pins, budgets, agents, groups. Views are rebuilt. Throws (and changes
   * nothing) when the new config drops the agent this stdio gateway serves.
   */
  applyConfig(next: Config): ReloadSummary {
    if (this.closed) throw new Error("the gateway is shutting down");
    if (this.opts.agent !== undefined) new Scope(next, this.opts.agent); // throws with a clear message
    const prev = this.current;
    const wasStartable = new Set(this.startable());
    const diff = this.supervisor.reconcile(next.servers);
    this.current = next;
    this.supervisor.setConnectTimeout(next.connect_timeout);
    const prevMeta = serverMeta(prev);
    const nextMeta = serverMeta(next);
    this.catalog.setMeta(nextMeta);
    for (const name of diff.removed) {
      this.dropListing(name);
      this.cache.remove(name).catch((err: unknown) => this.log.warn(`${name}: could not remove its catalogue cache (${errorText(err)})`));
    }
    // A changed connection may serve other tools: its old listing is not trusted any more.
    for (const name of diff.restarted) this.dropListing(name);
    const startable = this.startable();
    const nowStartable = new Set(startable);
    for (const name of wasStartable) {
      if (!nowStartable.has(name) && next.servers[name] !== undefined && !diff.restarted.includes(name)) {
        // Out of this process's scope now: stop it (a fresh Downstream is never spawned until admitted).
        this.supervisor.reset(name, "it is no longer in this agent's scope");
        this.dropListing(name);
      }
    }
    for (const name of startable) {
      if (!this.catalog.listingOf(name)) this.loadCached(name);
      else if (canonicalJson(prevMeta[name] ?? {}) !== canonicalJson(nextMeta[name] ?? {})) this.catalog.reindex(name);
    }
    if (this.started) this.admitAndStart(startable.filter((name) => this.supervisor.snapshot(name) === undefined || !wasStartable.has(name) || diff.restarted.includes(name)));
    this.views.clear();
    // Pinning, quarantine, effects or policies may have changed: record and re-derive.
    this.guard.observeAll();
    // Calls waiting in a server's queue look at the new limits; tracing follows telemetry.otlp.
    this.limits.reconfigure();
    this.applyTracing(next);
    const summary: ReloadSummary = { ...diff, ...settingChanges(prev, next) };
    for (const l of [...this.reloadListeners]) {
      try {
        l();
      } catch (err) {
        this.log.error(`reload listener failed: ${errorText(err)}`);
      }
    }
    return summary;
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
    this.guard.close();
    this.detached.cancelAll();
    await this.supervisor.close();
    this.auth.close();
    await this.semantic?.close();
    await this.telemetry.close();
    // The spans still queued are sent before the process ends.
    await shutdownTracing();
  }

  /** Enabled servers in this process's scope (the stdio gateway's agent; all for the daemon). */
  private startable(): string[] {
    return new Scope(this.config, this.opts.agent).startableServers();
  }

  private admitAndStart(names: string[]): void {
    this.supervisor.admit(names);
    const now = names.filter((name) => {
      const cfg = this.config.servers[name];
      if (!cfg) return false;
      const mode = startModeOf(this.config, cfg);
      return mode === "eager" || (mode === "auto" && !this.catalog.listingOf(name));
    });
    if (now.length > 0) this.supervisor.start(now);
  }

  /** Starts servers that are admitted but idle, because something needs them now. */
  private demand(names: string[]): void {
    const idle = names.filter((name) => this.supervisor.snapshot(name)?.state === "idle");
    if (idle.length > 0) this.supervisor.start(idle);
  }

  private async waitLive(server: string, signal?: AbortSignal): Promise<void> {
    this.demand([server]);
    await this.supervisor.waitForServer(server, { timeoutMs: this.config.connect_timeout + READY_GRACE_MS, ...(signal ? { signal } : {}) });
    this.syncServer(server);
  }

  /** Installs the server's cached listing when one exists for its current connection. */
  /**
   * The cached listing of a server that is configured but not installed in the catalogue (a
   * disabled one): what discovery shows of it, marked disabled. Undefined when none was cached.
   */
  dormantListing(server: string): ServerListing | undefined {
    const cfg = this.config.servers[server];
    if (!cfg || this.catalog.listingOf(server)) return undefined;
    const got = this.cache.read(server, connectionFingerprint(cfg));
    return "listing" in got ? got.listing : undefined;
  }

  /** The CLI command an operator runs (with --config when this gateway's config is not the default). */
  operatorCommand(args: readonly string[]): string {
    return mcphubCommand(args, this.opts.configPath, this.opts.env);
  }

  private loadCached(server: string): void {
    const cfg = this.config.servers[server];
    if (!cfg?.enabled) return;
    const got = this.cache.read(server, connectionFingerprint(cfg));
    if ("listing" in got) {
      this.catalog.setListing(server, got.listing);
    } else if (got.reason === "unreadable") {
      this.log.warn(`${server}: ignoring its catalogue cache (${got.detail}); it is listed again on start`);
    }
  }

  private dropListing(server: string): void {
    this.applied.delete(server);
    this.catalog.setListing(server, undefined);
  }
}

/** Top-level settings that differ, and which of those need a restart to take effect. */
export function settingChanges(prev: Config, next: Config): { settings: string[]; needsRestart: string[] } {
  const settings: string[] = [];
  for (const key of Object.keys(next) as (keyof Config)[]) {
    if (key === "servers") continue;
    if (canonicalJson(prev[key] ?? null) !== canonicalJson(next[key] ?? null)) settings.push(key);
  }
  // The listener address is bound once; the stores were opened with the old retention; the
  // semantic search (search.embeddings) is built with the hub.
  const needsRestart: string[] = settings.filter((k) => k === "listen" || k === "result_retention" || k === "search" || k === "store" || k === "allowed_hosts" || k === "replica_timeout");
  // The metrics port of `mcp serve` is bound once; telemetry.otlp applies at once.
  if (canonicalJson(prev.telemetry?.metrics ?? null) !== canonicalJson(next.telemetry?.metrics ?? null)) needsRestart.push("telemetry.metrics");
  return { settings: settings.sort(), needsRestart };
}

async function openStores(opts: HubOptions, keyring: () => Promise<Keyring>) {
  const retentionMs = opts.config.result_retention;
  const ring = await keyring();
  const store = opts.store ? { store: opts.store } : {};
  const results = await ResultStore.open({ dataDir: opts.dataDir, retentionMs, env: opts.env, keyring: ring, ...store });
  const journal = await DetachedJournal.open({ dataDir: opts.dataDir, retentionMs, env: opts.env, keyring: ring, ...store });
  return { results, journal };
}

/** Each server's routing metadata from the config, as the catalogue attaches it to its entries. */
export function serverMeta(config: Config): Record<string, ServerMeta> {
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
