// OAuth for a gateway process: the RemoteAuth the supervisor is given. It hands each remote
// server's connection a signed fetch (src/auth/signed-fetch.ts), keeps one ServerAuth per server,
// and tells a server waiting for sign-in when its record changed, whether `mcphub auth login` ran
// in this process or in another one (the store is shared: its file is polled while anyone waits,
// PostgreSQL notifies).
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ServerConfig } from "../config/schema.js";
import { LockedError, type RemoteAuth, type RemoteAuthSession, type SecretResolver } from "../downstream/types.js";
import { errorText } from "../util/errors.js";
import { storeOf, type Store } from "../store/index.js";
import type { Keyring } from "../vault/keys.js";
import { OAuthStore } from "../vault/oauth.js";
import { loginCommand } from "./command.js";
import { ServerAuth } from "./server-auth.js";
import { SignedFetchSession } from "./signed-fetch.js";

/** How often the shared OAuth file is checked while some server waits for sign-in. */
export const WATCH_INTERVAL_MS = 1_000;
/** Token-endpoint requests never hang a connect. */
export const TOKEN_REQUEST_TIMEOUT_MS = 30_000;
const REMEMBERED_VALUES = 64;
/** A vault that cannot be opened is not tried again for this long (a passphrase costs a scrypt run). */
export const STORE_RETRY_MS = 30_000;

export interface OAuthManagerOptions {
  dataDir: string;
  /** Where sign-ins are shared, and the refresh lock (default: the data directory's files). */
  store?: Store;
  env: NodeJS.ProcessEnv;
  /** The gateway's keyring (one scrypt run per process). */
  keyring?: () => Promise<Keyring>;
  /** For `vault://` client_secret and private_key references. */
  secrets?: SecretResolver;
  log?: (level: "info" | "warn" | "error", msg: string) => void;
  /** The config file, so the sign-in command names it. */
  configPath?: string;
  /** The network (tests inject one); defaults to the global fetch. */
  fetch?: FetchLike;
  watchIntervalMs?: number;
}

export class OAuthManager implements RemoteAuth {
  private store?: Promise<OAuthStore>;
  private storeFailure?: { at: number; message: string };
  private readonly auths = new Map<string, ServerAuth>();
  private readonly listeners = new Map<string, Set<() => void>>();
  /** The sign-in stamp each waiting server was last told about. */
  private readonly seen = new Map<string, string>();
  private readonly remembered = new Set<string>();
  private unwatch: (() => void) | undefined;
  private readonly base: FetchLike;
  private readonly store_: Store;

  constructor(private readonly opts: OAuthManagerOptions) {
    this.base = opts.fetch ?? ((url, init) => fetch(url, init));
    this.store_ = storeOf(opts.store ?? opts.dataDir);
  }

  sessionFor(server: string, cfg: ServerConfig): RemoteAuthSession | undefined {
    if (cfg.url === undefined) return undefined;
    // A static Authorization header means the operator manages credentials themselves.
    if (Object.keys(cfg.headers ?? {}).some((h) => h.toLowerCase() === "authorization")) return undefined;
    return new SignedFetchSession(this.serverAuth(server, cfg), this.base, () => this.storeProblem());
  }

  onChange(server: string, listener: () => void): () => void {
    let set = this.listeners.get(server);
    if (!set) {
      set = new Set();
      this.listeners.set(server, set);
      void this.stamp(server).then((g) => {
        if (this.seen.has(server)) return;
        this.seen.set(server, g);
        // Tokens written between the failed attempt and this read would otherwise go unnoticed:
        // one extra attempt is cheap, a missed sign-in waits minutes.
        if (g !== "none") this.notify(server);
      });
    }
    set.add(listener);
    this.startWatch();
    return () => {
      const s = this.listeners.get(server);
      s?.delete(listener);
      if (s && s.size === 0) {
        this.listeners.delete(server);
        this.seen.delete(server);
      }
      if (this.listeners.size === 0) this.stopWatch();
    };
  }

  knownSecretValues(): string[] {
    return [...this.remembered];
  }

  /** Stops watching the vault file. */
  close(): void {
    this.listeners.clear();
    this.stopWatch();
  }

  /** The OAuth store, opened once; a failure (locked vault) is not cached. */
  openStore(): Promise<OAuthStore> {
    if (!this.store) {
      const opening = (async () => {
        const keyring = this.opts.keyring ? await this.opts.keyring() : undefined;
        const store = await OAuthStore.open({ dataDir: this.opts.dataDir, store: this.store_, env: this.opts.env, ...(keyring ? { keyring } : {}) });
        store.onWrite((server) => void this.notifyIfChanged(server));
        return store;
      })();
      opening.catch(() => {
        if (this.store === opening) this.store = undefined;
      });
      this.store = opening;
    }
    return this.store;
  }

  /** Why the store cannot be opened (remembered for a while, so requests do not retry it each time). */
  private async storeProblem(): Promise<string | undefined> {
    const f = this.storeFailure;
    if (f && Date.now() - f.at < STORE_RETRY_MS) return f.message;
    try {
      await this.openStore();
      this.storeFailure = undefined;
      return undefined;
    } catch (err) {
      this.storeFailure = { at: Date.now(), message: errorText(err) };
      return this.storeFailure.message;
    }
  }

  private serverAuth(server: string, cfg: ServerConfig): ServerAuth {
    const url = cfg.url ?? "";
    const existing = this.auths.get(server);
    if (existing && existing.url === url && JSON.stringify(existing.oauth) === JSON.stringify(cfg.oauth)) return existing;
    const created = new ServerAuth(server, url, cfg.oauth, {
      store: async () => {
        try {
          return await this.openStore();
        } catch (err) {
          throw new LockedError(`the vault holding the sign-in cannot be opened: ${errorText(err)}`);
        }
      },
      secret: (ref) => this.secret(ref),
      fetch: (u, init) => this.base(u, { ...init, signal: init?.signal ?? AbortSignal.timeout(TOKEN_REQUEST_TIMEOUT_MS) }),
      log: (level, msg) => this.opts.log?.(level, msg),
      command: (name) => loginCommand(name, this.opts.configPath, this.opts.env),
      remember: (v) => this.remember(v),
    });
    this.auths.set(server, created);
    return created;
  }

  private async secret(ref: string): Promise<string> {
    if (!this.opts.secrets) throw new LockedError(`${ref} is needed, but no vault is available`);
    const value = await this.opts.secrets.header(ref);
    this.remember(value);
    return value;
  }

  private remember(value: string): void {
    if (this.remembered.has(value)) return;
    this.remembered.add(value);
    if (this.remembered.size > REMEMBERED_VALUES) {
      const oldest = this.remembered.values().next().value;
      if (oldest !== undefined) this.remembered.delete(oldest);
    }
  }

  private startWatch(): void {
    if (this.unwatch) return;
    this.unwatch = this.store_.docs("oauth").mirror().watch(this.onStoreChange, { pollMs: this.opts.watchIntervalMs ?? WATCH_INTERVAL_MS });
  }

  private stopWatch(): void {
    this.unwatch?.();
    this.unwatch = undefined;
  }

  private readonly onStoreChange = (): void => {
    for (const server of [...this.listeners.keys()]) void this.notifyIfChanged(server);
  };

  /** Changes exactly when the server's tokens change; a client registration written halfway
   *  through a sign-in does not count. */
  private async stamp(server: string): Promise<string> {
    try {
      const rec = await (await this.openStore()).get(server);
      return rec?.tokens ? `${rec.url}|${rec.tokens.obtained_at}` : "none";
    } catch {
      return "unreadable";
    }
  }

  private async notifyIfChanged(server: string): Promise<void> {
    if (!this.listeners.has(server)) return;
    const g = await this.stamp(server);
    if (this.seen.get(server) === g) return;
    this.seen.set(server, g);
    this.notify(server);
  }

  private notify(server: string): void {
    for (const l of [...(this.listeners.get(server) ?? [])]) {
      try {
        l();
      } catch (err) {
        this.opts.log?.("error", `${server}: sign-in change listener failed: ${errorText(err)}`);
      }
    }
  }
}
