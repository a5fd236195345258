// The SDK's OAuthClientProvider for one remote server, backed by the vault's OAuth store. The SDK's
// auth() does the protocol (protected-resource and authorization-server discovery, client ID
// metadata documents, dynamic registration, PKCE, the resource parameter, scope selection, the
// token requests); this class only decides which client to present and keeps what auth() hands
// back. Two modes:
//   - "login": the authorization-code flow of `mcphub auth login`, with a loopback redirect URL;
//     it never presents stored tokens, so auth() always asks the person again.
//   - "client_credentials": machine-to-machine, no person and no redirect.
// The PKCE verifier and the state live in this object only: the process that started the flow is
// the one whose loopback listener receives the code, so they never need to be written anywhere.
import { randomBytes } from "node:crypto";
import type { AddClientAuthentication, OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { createPrivateKeyJwtAuth } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { OAuthConfig } from "../config/schema.js";
import type { OAuthRecord, OAuthStore, StoredTokens } from "../vault/oauth.js";
import { accountFromTokens } from "./jwt.js";
import { scopeCovers } from "./scopes.js";
import { VERSION } from "../version.js";

export interface ProviderTarget {
  server: string;
  url: string;
  oauth: OAuthConfig | undefined;
}

/** Resolves a `vault://PROJECT/KEY` reference (client_secret, private_key). */
export type SecretLookup = (ref: string) => Promise<string>;

export type ProviderMode =
  | { kind: "login"; redirectUrl: string; onRedirect: (url: URL) => Promise<void> | void }
  | { kind: "client_credentials"; scope?: string };

export class StoreBackedProvider implements OAuthClientProvider {
  private verifier?: string;
  private stateValue?: string;
  private discovery?: OAuthDiscoveryState;
  private client?: OAuthClientInformationMixed;
  private requestedScope?: string;
  private authorizationUrl?: URL;
  private jwtAuth?: AddClientAuthentication;

  /** Present only for clients that can be registered (dynamic registration, metadata documents). */
  readonly saveClientInformation?: (info: OAuthClientInformationMixed) => Promise<void>;
  /** Present only for client_credentials, so auth() uses its default code exchange otherwise. */
  readonly prepareTokenRequest?: (scope?: string) => URLSearchParams;
  /** Present only with a private key (private_key_jwt). */
  readonly addClientAuthentication?: AddClientAuthentication;

  constructor(
    private readonly target: ProviderTarget,
    private readonly store: OAuthStore,
    private readonly secret: SecretLookup,
    private readonly mode: ProviderMode,
    /** The stored record at the start (its client registration and discovery may be reused). */
    private readonly record: OAuthRecord | undefined,
  ) {
    const o = target.oauth;
    if (mode.kind === "login" && o?.client_id === undefined) {
      this.saveClientInformation = (info) => this.keepClient(info);
    }
    if (mode.kind === "client_credentials") {
      this.requestedScope = mode.scope;
      this.prepareTokenRequest = (scope) => {
        const params = new URLSearchParams({ grant_type: "client_credentials" });
        if (scope) params.set("scope", scope);
        return params;
      };
      const keyRef = o?.private_key;
      const clientId = o?.client_id;
      if (keyRef !== undefined && clientId !== undefined) {
        this.addClientAuthentication = async (headers, params, url, metadata) => {
          this.jwtAuth ??= createPrivateKeyJwtAuth({
            issuer: clientId,
            subject: clientId,
            privateKey: await this.secret(keyRef),
            alg: o?.signing_alg ?? "RS256",
          });
          await this.jwtAuth(headers, params, url, metadata);
        };
      }
      // Discovery is cached across token requests of a machine client; a sign-in rediscovers.
      if (record?.url === target.url && record.discovery) this.discovery = record.discovery as unknown as OAuthDiscoveryState;
    }
  }

  get redirectUrl(): string | undefined {
    return this.mode.kind === "login" ? this.mode.redirectUrl : undefined;
  }

  get clientMetadataUrl(): string | undefined {
    return this.mode.kind === "login" ? this.target.oauth?.client_metadata_url : undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    const o = this.target.oauth;
    const scope = this.mode.kind === "client_credentials" ? this.mode.scope : o?.scopes?.join(" ");
    const base = { client_name: "mcphub", software_id: "mcphub", software_version: VERSION, ...(scope ? { scope } : {}) };
    if (this.mode.kind === "client_credentials") {
      return { ...base, redirect_uris: [], grant_types: ["client_credentials"], token_endpoint_auth_method: o?.private_key ? "private_key_jwt" : "client_secret_basic" };
    }
    return {
      ...base,
      redirect_uris: [this.mode.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: o?.client_secret ? "client_secret_basic" : "none",
    };
  }

  state(): string {
    this.stateValue ??= randomBytes(24).toString("base64url");
    return this.stateValue;
  }

  /** The state sent with the authorization request, to check against the redirect. */
  get expectedState(): string | undefined {
    return this.stateValue;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const o = this.target.oauth;
    if (o?.client_id !== undefined) {
      const issuer = o.issuer ?? (this.record?.url === this.target.url ? this.record.configured_issuer : undefined);
      return {
        client_id: o.client_id,
        ...(o.client_secret !== undefined ? { client_secret: await this.secret(o.client_secret) } : {}),
        ...(issuer !== undefined ? { issuer } : {}),
      };
    }
    if (this.client) return this.client;
    const rec = this.record;
    if (this.mode.kind !== "login" || rec?.url !== this.target.url || !rec.client || typeof rec.client.client_id !== "string") return undefined;
    const stored = rec.client as OAuthClientInformationMixed;
    if (rec.client_kind === "metadata_document") return stored.client_id === this.clientMetadataUrl ? stored : undefined;
    // A registration is only reused for the redirect URI it was registered with.
    const uris = (rec.client as { redirect_uris?: unknown }).redirect_uris;
    return Array.isArray(uris) && uris.includes(this.mode.redirectUrl) ? stored : undefined;
  }

  tokens(): OAuthTokens | undefined {
    // A sign-in always asks the person; machine clients always ask for a new token.
    return undefined;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const now = Date.now();
    const stored: StoredTokens = {
      access_token: tokens.access_token,
      token_type: tokens.token_type,
      ...(tokens.refresh_token !== undefined ? { refresh_token: tokens.refresh_token } : {}),
      ...(tokens.id_token !== undefined ? { id_token: tokens.id_token } : {}),
      ...(tokens.scope !== undefined ? { scope: tokens.scope } : this.requestedScope !== undefined ? { scope: this.requestedScope } : {}),
      ...(tokens.expires_in !== undefined ? { expires_at: now + tokens.expires_in * 1000 } : {}),
      obtained_at: now,
      ...(tokens.issuer !== undefined ? { issuer: tokens.issuer } : {}),
    };
    const o = this.target.oauth;
    const resource = this.resourceIndicator();
    const account = accountFromTokens(stored);
    await this.store.update(this.target.server, (cur) => {
      const same = cur?.url === this.target.url ? cur : undefined;
      const stepUp = same?.step_up_scope !== undefined && !scopeCovers(stored.scope, same.step_up_scope) ? same.step_up_scope : undefined;
      const client = o?.client_id === undefined ? ((this.client ?? same?.client) as Record<string, unknown> | undefined) : undefined;
      return {
        url: this.target.url,
        tokens: stored,
        ...(client ? { client, client_kind: same?.client_kind ?? this.clientKind(client) } : o?.client_id !== undefined ? { client_kind: "configured" as const } : {}),
        ...(o?.client_id !== undefined && o.issuer === undefined && tokens.issuer !== undefined ? { configured_issuer: tokens.issuer } : {}),
        ...(this.discovery ? { discovery: this.discovery as unknown as Record<string, unknown> } : same?.discovery ? { discovery: same.discovery } : {}),
        ...(resource !== undefined ? { resource } : same?.resource !== undefined ? { resource: same.resource } : {}),
        ...(stepUp !== undefined ? { step_up_scope: stepUp } : {}),
        ...(account !== undefined ? { account } : {}),
      };
    });
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.mode.kind !== "login") throw new Error("a machine client (client_credentials) has no browser step");
    this.authorizationUrl = authorizationUrl;
    this.requestedScope = authorizationUrl.searchParams.get("scope") ?? undefined;
    await this.mode.onRedirect(authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error("no PKCE code verifier: the authorization request was not started by this process");
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
    if ((scope === "all" || scope === "client") && this.saveClientInformation) {
      this.client = undefined;
      await this.store.update(this.target.server, (cur) => {
        if (!cur?.client) return false;
        const { client: _client, client_kind: _kind, ...rest } = cur;
        return rest;
      });
    }
  }

  /** The authorization URL this flow sent the person to (after redirectToAuthorization). */
  get lastAuthorizationUrl(): URL | undefined {
    return this.authorizationUrl;
  }

  private async keepClient(info: OAuthClientInformationMixed): Promise<void> {
    this.client = info;
    const client = info as unknown as Record<string, unknown>;
    // Kept at once: a sign-in abandoned after registering should not register again next time.
    await this.store.update(this.target.server, (cur) => {
      const same = cur?.url === this.target.url ? cur : undefined;
      return { ...(same ?? { url: this.target.url }), url: this.target.url, client, client_kind: this.clientKind(client) };
    });
  }

  private clientKind(client: Record<string, unknown>): "dynamic" | "metadata_document" {
    return client.client_id === this.clientMetadataUrl ? "metadata_document" : "dynamic";
  }

  /** The RFC 8707 resource auth() used: the protected-resource metadata's, verbatim. */
  private resourceIndicator(): string | undefined {
    const fromUrl = this.authorizationUrl?.searchParams.get("resource");
    if (fromUrl) return fromUrl;
    const meta = this.discovery?.resourceMetadata;
    return meta?.resource;
  }
}
