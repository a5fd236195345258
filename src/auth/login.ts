// `mcphub auth login SERVER`: the authorization-code flow with PKCE for one remote server.
//   1. ask the server what it wants (challenge.ts): resource-metadata location and scope;
//   2. listen on a loopback port (the configured one, else the port the stored registration was
//      made for, else a random one) and build the redirect URL from it;
//   3. the SDK's auth() discovers, registers (metadata document or dynamic registration) when no
//      client is configured, and builds the authorization URL, which is shown (and opened);
//   4. the redirect brings the code; auth() exchanges it (PKCE verifier, resource) and the tokens
//      land in the vault. A machine client (client_credentials) skips 2-4 and gets its token.
// The browser step is the caller's `openUrl`: the CLI prints the URL and starts a browser; tests
// follow the URL themselves. Everything else is the same code path.
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ServerConfig } from "../config/schema.js";
import { errorText } from "../util/errors.js";
import type { OAuthRecord, OAuthStore } from "../vault/oauth.js";
import { probeChallenge } from "./challenge.js";
import { listenLoopback, PortInUseError, CALLBACK_PATH, type LoopbackListener } from "./loopback.js";
import { StoreBackedProvider, type SecretLookup } from "./provider.js";
import { unionScope } from "./scopes.js";
import { ServerAuth } from "./server-auth.js";

export const DEFAULT_SIGN_IN_TIMEOUT_MS = 5 * 60_000;
const PROBE_TIMEOUT_MS = 15_000;

/** A sign-in that did not complete; the message says why and what to do. */
export class SignInError extends Error {
  override name = "SignInError";
}

export interface SignInOptions {
  server: string;
  cfg: ServerConfig;
  store: OAuthStore;
  secret: SecretLookup;
  /** Shows the authorization URL to the person (and opens a browser). */
  openUrl: (url: URL) => void | Promise<void>;
  /** Static headers of the server, already resolved (sent with the challenge probe). */
  headers?: Record<string, string>;
  timeoutMs?: number;
  /** Scopes to ask for on top of what the server and the config ask for. */
  scopes?: string[];
  /** Loopback port override (else oauth.redirect_port, else the registered one, else random). */
  port?: number;
  fetch?: FetchLike;
  signal?: AbortSignal;
}

export interface SignInResult {
  server: string;
  grant: "authorization_code" | "client_credentials";
  client: "dynamic" | "metadata_document" | "configured";
  account?: string;
  scope?: string;
  expiresAt?: number;
  refreshable: boolean;
}

export async function signIn(opts: SignInOptions): Promise<SignInResult> {
  const { server, cfg, store } = opts;
  const url = cfg.url;
  if (url === undefined) throw new SignInError(`server "${server}" is a stdio server; sign-in applies only to remote (url) servers`);
  const fetchFn = opts.fetch ?? ((u, init) => fetch(u, init));
  const record = await store.get(server);
  const same = record?.url === url ? record : undefined;

  if (cfg.oauth?.grant === "client_credentials") return machineSignIn(opts, url, fetchFn);

  const challenge = await probeChallenge({ url, transport: cfg.transport, ...(opts.headers ? { headers: opts.headers } : {}), timeoutMs: PROBE_TIMEOUT_MS, fetch: fetchFn });
  const scope = unionScope(cfg.oauth?.scopes?.join(" "), challenge?.scope, same?.step_up_scope, opts.scopes?.join(" "));
  const listener = await listen(cfg.oauth?.redirect_port ?? opts.port, registeredPort(same), server);
  try {
    const provider = new StoreBackedProvider({ server, url, oauth: cfg.oauth }, store, opts.secret, {
      kind: "login",
      redirectUrl: listener.redirectUrl,
      onRedirect: async (authorizationUrl) => {
        const state = authorizationUrl.searchParams.get("state");
        if (state) listener.expectState(state);
        await opts.openUrl(authorizationUrl);
      },
    }, same);
    const common = { serverUrl: url, fetchFn, ...(scope ? { scope } : {}), ...(challenge?.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}) };
    const first = await guarded(server, () => auth(provider, common));
    if (first !== "REDIRECT") throw new SignInError(`the authorization server of "${server}" answered without a browser step; nothing was stored`);
    const outcome = await listener.wait(opts.timeoutMs ?? DEFAULT_SIGN_IN_TIMEOUT_MS, opts.signal).catch((err: unknown) => {
      throw new SignInError(`sign-in to "${server}" did not complete: ${errorText(err)}; run the command again`);
    });
    if ("error" in outcome) {
      throw new SignInError(`the authorization server refused the sign-in to "${server}": ${outcome.error}${outcome.description ? ` (${outcome.description})` : ""}`);
    }
    const second = await guarded(server, () => auth(provider, { ...common, authorizationCode: outcome.code }));
    if (second !== "AUTHORIZED") throw new SignInError(`the code exchange for "${server}" did not yield tokens`);
  } finally {
    await listener.close();
  }
  return summary(server, "authorization_code", await store.get(server));
}

async function machineSignIn(opts: SignInOptions, url: string, fetchFn: FetchLike): Promise<SignInResult> {
  const { server, store } = opts;
  const serverAuth = new ServerAuth(server, url, opts.cfg.oauth, {
    store: () => Promise.resolve(store),
    secret: opts.secret,
    fetch: fetchFn,
    log: () => undefined,
    command: () => "",
    remember: () => undefined,
  });
  const token = await guarded(server, () => serverAuth.newMachineToken());
  if (token === undefined) throw new SignInError(`the authorization server of "${server}" issued no token`);
  return summary(server, "client_credentials", await store.get(server));
}

function summary(server: string, grant: SignInResult["grant"], rec: OAuthRecord | undefined): SignInResult {
  const t = rec?.tokens;
  if (!t) throw new SignInError(`sign-in to "${server}" finished but no tokens were stored`);
  return {
    server,
    grant,
    client: rec.client_kind ?? "dynamic",
    ...(rec.account !== undefined ? { account: rec.account } : {}),
    ...(t.scope !== undefined ? { scope: t.scope } : {}),
    ...(t.expires_at !== undefined ? { expiresAt: t.expires_at } : {}),
    refreshable: t.refresh_token !== undefined,
  };
}

async function listen(fixed: number | undefined, registered: number | undefined, label: string): Promise<LoopbackListener> {
  if (fixed !== undefined) {
    try {
      return await listenLoopback(fixed, label);
    } catch (err) {
      if (err instanceof PortInUseError) throw new SignInError(`${err.message}; the redirect port is fixed (oauth.redirect_port or --port), so free it or choose another`);
      throw err;
    }
  }
  if (registered !== undefined) {
    // The stored registration names this port; reusing it avoids registering again.
    try {
      return await listenLoopback(registered, label);
    } catch (err) {
      if (!(err instanceof PortInUseError)) throw err;
    }
  }
  return listenLoopback(0, label);
}

function registeredPort(rec: OAuthRecord | undefined): number | undefined {
  const uris = (rec?.client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
  if (rec?.client_kind !== "dynamic" || !Array.isArray(uris)) return undefined;
  for (const u of uris) {
    if (typeof u !== "string") continue;
    try {
      const parsed = new URL(u);
      if (parsed.hostname === "127.0.0.1" && parsed.pathname === CALLBACK_PATH && parsed.port !== "") return Number(parsed.port);
    } catch {
      // not a URL
    }
  }
  return undefined;
}

async function guarded<T>(server: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof SignInError) throw err;
    const why = err instanceof OAuthError ? `${err.errorCode}${err.message ? `: ${err.message}` : ""}` : errorText(err);
    throw new SignInError(`sign-in to "${server}" failed: ${why}`);
  }
}

