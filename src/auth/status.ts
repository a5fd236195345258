// `mcphub auth status` and `mcphub auth logout`: what the vault holds for each remote server (who
// signed in, which scopes, until when; never a token), and signing out: the refresh and access
// tokens are revoked at the authorization server when it offers revocation (RFC 7009), then the
// server's record is deleted whatever the revocation's outcome.
import type { OAuthClientInformationMixed } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Config, ServerConfig } from "../config/schema.js";
import { errorText } from "../util/errors.js";
import type { OAuthRecord, OAuthStore } from "../vault/oauth.js";
import type { SecretLookup } from "./provider.js";

export type SignInState = "signed_in" | "refresh_due" | "expired" | "not_signed_in";

export interface AuthStatusEntry {
  server: string;
  state: SignInState;
  grant: "authorization_code" | "client_credentials";
  account?: string;
  scopes?: string[];
  /** ISO time the access token expires, when the authorization server said. */
  expires_at?: string;
  refreshable: boolean;
  client?: "dynamic" | "metadata_document" | "configured";
  /** Scope a request asked for that the sign-in does not grant yet. */
  step_up_scope?: string;
  /** The command that signs the server in, when it needs it. */
  sign_in?: string;
}

/** The remote servers that use OAuth (configured, or with a stored sign-in), or just `only`. */
export async function authStatus(config: Config, store: OAuthStore, command: (server: string) => string, only?: string, now = Date.now()): Promise<AuthStatusEntry[]> {
  const stored = new Set(await store.servers());
  const names = Object.keys(config.servers)
    .filter((n) => (only !== undefined ? n === only : config.servers[n]?.url !== undefined && (config.servers[n]?.oauth !== undefined || stored.has(n))))
    .sort();
  const out: AuthStatusEntry[] = [];
  for (const name of names) {
    const cfg = config.servers[name];
    if (!cfg?.url) continue;
    const rec = await store.get(name);
    out.push(entry(name, cfg, rec?.url === cfg.url ? rec : undefined, command, now));
  }
  return out;
}

function entry(server: string, cfg: ServerConfig, rec: OAuthRecord | undefined, command: (server: string) => string, now: number): AuthStatusEntry {
  const grant = cfg.oauth?.grant ?? "authorization_code";
  const t = rec?.tokens;
  const refreshable = t?.refresh_token !== undefined || grant === "client_credentials";
  const expired = t?.expires_at !== undefined && t.expires_at <= now;
  const state: SignInState = !t ? (grant === "client_credentials" ? "refresh_due" : "not_signed_in") : expired ? (refreshable ? "refresh_due" : "expired") : "signed_in";
  return {
    server,
    state,
    grant,
    ...(rec?.account !== undefined ? { account: rec.account } : {}),
    ...(t?.scope ? { scopes: t.scope.split(/\s+/).filter(Boolean) } : {}),
    ...(t?.expires_at !== undefined ? { expires_at: new Date(t.expires_at).toISOString() } : {}),
    refreshable,
    ...(rec?.client_kind !== undefined ? { client: rec.client_kind } : cfg.oauth?.client_id !== undefined ? { client: "configured" as const } : {}),
    ...(rec?.step_up_scope !== undefined ? { step_up_scope: rec.step_up_scope } : {}),
    ...(state === "not_signed_in" || state === "expired" || rec?.step_up_scope !== undefined ? { sign_in: command(server) } : {}),
  };
}

export interface SignOutResult {
  removed: boolean;
  /** "revoked", "not offered" (no revocation endpoint), "nothing to revoke", or why it failed. */
  revocation: string;
}

export async function signOut(server: string, cfg: ServerConfig, store: OAuthStore, secret: SecretLookup, fetchFn: FetchLike): Promise<SignOutResult> {
  const rec = await store.get(server);
  let revocation = "nothing to revoke";
  if (rec?.tokens && rec.url === cfg.url) {
    try {
      revocation = await revoke(rec, cfg, secret, fetchFn);
    } catch (err) {
      revocation = `failed (${errorText(err)}); the tokens were deleted here anyway`;
    }
  }
  const removed = await store.remove(server);
  return { removed, revocation };
}

async function revoke(rec: OAuthRecord, cfg: ServerConfig, secret: SecretLookup, fetchFn: FetchLike): Promise<string> {
  const meta = (rec.discovery as { authorizationServerMetadata?: { revocation_endpoint?: unknown } } | undefined)?.authorizationServerMetadata;
  const endpoint = typeof meta?.revocation_endpoint === "string" ? meta.revocation_endpoint : undefined;
  if (endpoint === undefined) return "not offered by the authorization server";
  const client = await clientFor(rec, cfg, secret);
  if (!client) return "skipped (no client registration)";
  const t = rec.tokens;
  const tokens: [string, string][] = [];
  if (t?.refresh_token) tokens.push([t.refresh_token, "refresh_token"]);
  if (t?.access_token) tokens.push([t.access_token, "access_token"]);
  for (const [token, hint] of tokens) {
    const headers = new Headers({ "content-type": "application/x-www-form-urlencoded", accept: "application/json" });
    const body = new URLSearchParams({ token, token_type_hint: hint });
    if (client.client_secret) headers.set("authorization", `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString("base64")}`);
    else body.set("client_id", client.client_id);
    const res = await fetchFn(endpoint, { method: "POST", headers, body, signal: AbortSignal.timeout(15_000) });
    await res.body?.cancel().catch(() => undefined);
    // RFC 7009: 200 for a revoked or an unknown token alike.
    if (!res.ok) return `failed (HTTP ${res.status} from the revocation endpoint); the tokens were deleted here anyway`;
  }
  return "revoked";
}

async function clientFor(rec: OAuthRecord, cfg: ServerConfig, secret: SecretLookup): Promise<OAuthClientInformationMixed | undefined> {
  const o = cfg.oauth;
  if (o?.client_id !== undefined) return { client_id: o.client_id, ...(o.client_secret ? { client_secret: await secret(o.client_secret) } : {}) };
  const c = rec.client;
  return c && typeof c.client_id === "string" ? (c as OAuthClientInformationMixed) : undefined;
}
