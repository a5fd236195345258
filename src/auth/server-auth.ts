// One remote server's tokens at run time: the access token to send (refreshed shortly before it
// expires), recovery after a 401 (refresh, or a new machine token), and step-up bookkeeping.
// Several gateway processes share the vault, and refresh tokens are often single-use (rotation),
// so a refresh runs under a per-server lock (a lock file; an advisory lock in PostgreSQL, shared by
// every replica) and first re-reads the store, never a cache: if another process already
// refreshed, its tokens are used and the spent refresh token is never sent again.
import { auth, refreshAuthorization, type OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { InvalidClientError, InvalidGrantError, UnauthorizedClientError, OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { OAuthClientInformationMixed } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { OAuthConfig } from "../config/schema.js";
import { NeedsAuthError } from "../downstream/types.js";
import { errorText } from "../util/errors.js";
import type { OAuthRecord, OAuthStore, StoredTokens } from "../vault/oauth.js";
import { StoreBackedProvider, type SecretLookup } from "./provider.js";
import { scopeCovers, unionScope } from "./scopes.js";

/** Refresh this long before expiry (capped at a tenth of the token's lifetime for short ones). */
export const REFRESH_EARLY_MS = 60_000;

export interface ServerAuthDeps {
  store: () => Promise<OAuthStore>;
  secret: SecretLookup;
  /** For token-endpoint requests (bounded by a timeout). */
  fetch: FetchLike;
  log: (level: "info" | "warn" | "error", msg: string) => void;
  command: (server: string) => string;
  /** Token values seen, for redaction of error text. */
  remember: (value: string) => void;
}

export class ServerAuth {
  private recovering?: Promise<string | undefined>;
  /** Why the last recovery ended without a token (shown in the needs-sign-in message). */
  lastRefusal?: string;

  constructor(
    readonly server: string,
    readonly url: string,
    readonly oauth: OAuthConfig | undefined,
    private readonly deps: ServerAuthDeps,
  ) {}

  /** True when the config says this server uses OAuth (else OAuth starts only on a Bearer challenge). */
  get configured(): boolean {
    return this.oauth !== undefined;
  }

  get machine(): boolean {
    return this.oauth?.grant === "client_credentials";
  }

  /** The stored tokens for this server's URL, if any (`fresh`: read from the store, not a cache). */
  async tokens(fresh = false): Promise<StoredTokens | undefined> {
    const rec = await this.record(fresh);
    const t = rec?.tokens;
    if (t) {
      this.deps.remember(t.access_token);
      if (t.refresh_token) this.deps.remember(t.refresh_token);
    }
    return t;
  }

  /** The access token to send now, refreshed first when it is about to expire. */
  async accessToken(): Promise<string | undefined> {
    const t = await this.tokens();
    if (this.machine && (!t || expiringSoon(t))) return this.recover(t?.access_token);
    if (!t) return undefined;
    if (expiringSoon(t) && t.refresh_token) {
      try {
        return (await this.recover(t.access_token)) ?? t.access_token;
      } catch (err) {
        // The authorization server is unreachable: a token that has not expired yet still works.
        if (t.expires_at !== undefined && t.expires_at > Date.now()) return t.access_token;
        throw err;
      }
    }
    return t.access_token;
  }

  /**
   * A new access token after `stale` was refused or is about to expire: another process's fresh
   * one, a refreshed one, or (machine clients) a new one. Undefined when only a person can help;
   * throws on transient failures (the authorization server is down), which are not a sign-in problem.
   */
  recover(stale: string | undefined): Promise<string | undefined> {
    this.recovering ??= this.recoverLocked(stale).finally(() => {
      this.recovering = undefined;
    });
    return this.recovering;
  }

  /** A 403 insufficient_scope asked for `needed`. Machine clients get a broader token at once. */
  async stepUp(needed: string | undefined): Promise<string | undefined> {
    const t = await this.tokens();
    const want = unionScope(t?.scope, needed);
    await this.update((cur) => (cur ? { ...cur, step_up_scope: unionScope(cur.step_up_scope, want) } : { url: this.url, step_up_scope: want }));
    if (!this.machine) return undefined;
    return this.recover(t?.access_token);
  }

  needsSignIn(reason: string): NeedsAuthError {
    const cmd = this.deps.command(this.server);
    return new NeedsAuthError(`needs sign-in: run \`${cmd}\` (${reason})`, cmd);
  }

  needsScope(needed: string | undefined): NeedsAuthError {
    const cmd = this.deps.command(this.server);
    return new NeedsAuthError(`this request needs more access${needed ? ` (scope "${needed}")` : ""} than the stored sign-in grants: run \`${cmd}\` to sign in again with it`, cmd, true);
  }

  /** The granted scope covers `needed` already (so asking again would loop). */
  async covers(needed: string | undefined): Promise<boolean> {
    return scopeCovers((await this.tokens())?.scope, needed);
  }

  private async record(fresh = false): Promise<OAuthRecord | undefined> {
    const store = await this.deps.store();
    const rec = await (fresh ? store.getFresh(this.server) : store.get(this.server));
    return rec?.url === this.url ? rec : undefined;
  }

  private async update(fn: (cur: OAuthRecord | undefined) => Omit<OAuthRecord, "generation" | "updated_at"> | undefined | false): Promise<void> {
    await (await this.deps.store()).update(this.server, (cur) => fn(cur?.url === this.url ? cur : undefined));
  }

  private async recoverLocked(stale: string | undefined): Promise<string | undefined> {
    // A refresh is a network round trip; the lock outlives the default 30 s staleness guard.
    const store = await this.deps.store();
    return store.refreshLock(this.server, async () => {
      const t = await this.tokens(true);
      if (t && t.access_token !== stale && !expiringSoon(t)) return t.access_token;
      if (this.machine) return this.machineToken();
      if (!t?.refresh_token) {
        this.lastRefusal = t ? "the access token was refused and there is no refresh token" : "no sign-in is stored";
        return undefined;
      }
      return this.refresh(t);
    }, { timeoutMs: 60_000, staleMs: 120_000 });
  }

  private async refresh(t: StoredTokens): Promise<string | undefined> {
    const rec = await this.record(true);
    const disc = rec?.discovery as OAuthDiscoveryState | undefined;
    const asUrl = disc?.authorizationServerUrl ?? t.issuer;
    if (asUrl === undefined) {
      this.lastRefusal = "the stored sign-in does not say which authorization server issued it";
      return undefined;
    }
    const client = await this.clientInformation(rec);
    if (!client) {
      this.lastRefusal = "the client registration is gone";
      return undefined;
    }
    const refreshToken = t.refresh_token ?? "";
    let fresh;
    try {
      fresh = await refreshAuthorization(asUrl, {
        metadata: disc?.authorizationServerMetadata,
        clientInformation: client,
        refreshToken,
        ...(rec?.resource !== undefined ? { resource: rec.resource } : {}),
        fetchFn: this.deps.fetch,
      });
    } catch (err) {
      if (err instanceof InvalidGrantError || err instanceof InvalidClientError || err instanceof UnauthorizedClientError) {
        this.lastRefusal = `the authorization server refused the refresh token (${err.errorCode})`;
        // Forget the dead tokens, unless another process replaced them meanwhile.
        await this.update((cur) => {
          if (!cur?.tokens || cur.tokens.refresh_token !== refreshToken) return false;
          const { tokens: _dead, ...rest } = cur;
          return rest;
        });
        this.deps.log("info", `${this.server}: ${this.lastRefusal}; sign-in needed (\`${this.deps.command(this.server)}\`)`);
        return undefined;
      }
      throw new Error(`refreshing the access token failed: ${err instanceof OAuthError ? `${err.errorCode}: ${err.message}` : errorText(err)}`);
    }
    const now = Date.now();
    const stored: StoredTokens = {
      access_token: fresh.access_token,
      token_type: fresh.token_type,
      ...(fresh.refresh_token !== undefined ? { refresh_token: fresh.refresh_token } : {}),
      ...((fresh.id_token ?? t.id_token) !== undefined ? { id_token: fresh.id_token ?? t.id_token } : {}),
      ...((fresh.scope ?? t.scope) !== undefined ? { scope: fresh.scope ?? t.scope } : {}),
      ...(fresh.expires_in !== undefined ? { expires_at: now + fresh.expires_in * 1000 } : {}),
      obtained_at: now,
      issuer: t.issuer ?? asUrl,
    };
    this.deps.remember(stored.access_token);
    if (stored.refresh_token) this.deps.remember(stored.refresh_token);
    await this.update((cur) => (cur ? { ...cur, tokens: stored } : { url: this.url, tokens: stored }));
    this.deps.log("info", `${this.server}: access token refreshed`);
    return stored.access_token;
  }

  private async clientInformation(rec: OAuthRecord | undefined): Promise<OAuthClientInformationMixed | undefined> {
    const o = this.oauth;
    if (o?.client_id !== undefined) {
      return { client_id: o.client_id, ...(o.client_secret !== undefined ? { client_secret: await this.deps.secret(o.client_secret) } : {}) };
    }
    const c = rec?.client;
    return c && typeof c.client_id === "string" ? (c as OAuthClientInformationMixed) : undefined;
  }

  /** client_credentials: a new token from the configured client, with any stepped-up scope. */
  newMachineToken(): Promise<string | undefined> {
    return this.machineToken();
  }

  private async machineToken(): Promise<string | undefined> {
    const store = await this.deps.store();
    const rec = await this.record();
    const scope = unionScope(this.oauth?.scopes?.join(" "), rec?.step_up_scope);
    const provider = new StoreBackedProvider({ server: this.server, url: this.url, oauth: this.oauth }, store, this.deps.secret, { kind: "client_credentials", ...(scope ? { scope } : {}) }, rec);
    try {
      await auth(provider, { serverUrl: this.url, fetchFn: this.deps.fetch });
    } catch (err) {
      throw new Error(`getting a client_credentials token failed: ${err instanceof OAuthError ? `${err.errorCode}: ${err.message}` : errorText(err)}`);
    }
    const t = await this.tokens();
    if (t) this.deps.log("info", `${this.server}: client_credentials token obtained`);
    return t?.access_token;
  }
}

export function expiringSoon(t: StoredTokens, now = Date.now()): boolean {
  if (t.expires_at === undefined) return false;
  const lifetime = t.expires_at - t.obtained_at;
  const early = Math.min(REFRESH_EARLY_MS, Math.max(1_000, lifetime / 10));
  return t.expires_at - now <= early;
}
