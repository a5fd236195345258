// Team mode and OAuth: two `mcphub up` replicas on one PostgreSQL share a downstream's sign-in,
// and when its access token runs out while both are serving calls, the authorization server sees
// ONE refresh (refresh tokens rotate: a second refresh with the spent token would be refused and
// sign the server out). The replicas take the refresh lock (a PostgreSQL advisory lock); the one
// that waits reads the other's new token from the store. Both ways a token runs out are covered:
// expired by the clock as stored (each replica refreshes before sending), and refused by the
// resource server (each replica gets a 401 first). The authorization server is the real fixture
// (test/fixtures/oauth-server.ts), answering refreshes slowly so the two replicas overlap.
// The sign-in is made in this process against the shared store (what `mcphub auth login` does on
// a machine whose config names the store). Skips with the reason when PostgreSQL cannot start.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signIn } from "../../src/auth/login.js";
import { validateConfig, type ServerConfig } from "../../src/config/index.js";
import { openStore, type Store } from "../../src/store/index.js";
import { OAuthStore } from "../../src/vault/oauth.js";
import { VaultSecretResolver } from "../../src/vault/resolver.js";
import { approveInBrowser, startOAuthFixture, type OAuthFixture } from "../fixtures/oauth-server.js";
import { createTokens, httpClient, startDaemon, type Daemon } from "../helpers/daemon.js";
import { tempHome, text, type TempHome } from "../helpers/gateway.js";
import { startPostgres, type Postgres } from "../helpers/postgres.js";

const PASSPHRASE = "team-oauth-passphrase-not-a-secret";
/** Long enough that, without the shared lock, both replicas' refreshes would be in flight at once. */
const REFRESH_DELAY_MS = 400;

let pg: Postgres | undefined;
let skip = "";
let fixture: OAuthFixture;
const homes: TempHome[] = [];
const replicas: Daemon[] = [];
let store: Store | undefined;
let oauth: OAuthStore | undefined;
let token = "";

beforeAll(async () => {
  const started = await startPostgres();
  if ("skip" in started) {
    skip = started.skip;
    return;
  }
  pg = started;
  fixture = await startOAuthFixture({ refreshDelayMs: REFRESH_DELAY_MS });
  for (let i = 0; i < 2; i++) {
    const home = tempHome("mcphub-team-oauth-");
    home.env.MCPHUB_VAULT_PASSPHRASE = PASSPHRASE;
    homes.push(home);
  }
  const config = { store: pg.url, agents: { alpha: {} }, servers: { secure: { url: fixture.mcpUrl, oauth: { scopes: ["mcp:read"] } } } };
  const cfgs = homes.map((h) => h.writeConfig(config));
  const home0 = homes[0] as TempHome;
  const dataDir = home0.env.MCPHUB_DATA_DIR as string;
  // Signed in once, into PostgreSQL, sealed with the data key every replica unwraps.
  store = await openStore({ dataDir, url: pg.url });
  oauth = await OAuthStore.open({ dataDir, store, env: home0.env });
  const secrets = new VaultSecretResolver({ dataDir, env: home0.env });
  const cfg = validateConfig(config).servers.secure as ServerConfig;
  await signIn({ server: "secure", cfg, store: oauth, secret: (r) => secrets.header(r), openUrl: async (u) => void (await approveInBrowser(u.href)) });
  token = (await createTokens(home0, cfgs[0] as string, ["alpha"])).alpha as string;
  for (let i = 0; i < 2; i++) replicas.push(await startDaemon(homes[i] as TempHome, cfgs[i] as string, []));
}, 180_000);

afterAll(async () => {
  for (const r of replicas) await r.stop();
  await store?.close();
  await fixture?.close();
  pg?.destroy();
  for (const h of homes) h.cleanup();
});

/** One call on each replica, sent together; both answers. */
async function bothAtOnce(clients: Awaited<ReturnType<typeof httpClient>>[]): Promise<string[]> {
  const answers = await Promise.all(clients.map((c) => c.caller.call("secure__whoami")));
  return answers.map((r) => (r.isError ? `error: ${text(r)}` : text(r)));
}

describe("team mode: two replicas refreshing one OAuth token refresh it once", () => {
  it("the token as stored has expired: both replicas refresh before sending, the authorization server sees one refresh, both calls carry the new token", async (ctx) => {
    if (!pg || !oauth) return ctx.skip(skip);
    const clients = await Promise.all(replicas.map((r) => httpClient(r.url, token)));
    try {
      // Both replicas connected and calling with the sign-in's token.
      expect(await bothAtOnce(clients)).toEqual(["alice@example.com (mcp:read)", "alice@example.com (mcp:read)"]);
      const grants = fixture.counts.refreshGrants;
      const refused = fixture.counts.refusedRefreshes;
      const calls = fixture.callTokens().length;
      // The stored token's expiry passes (as the clock would have it); every replica hears of it.
      await oauth.update("secure", (cur) => (cur?.tokens ? { ...cur, tokens: { ...cur.tokens, expires_at: Date.now() - 1000 } } : false));
      await new Promise((r) => setTimeout(r, 300));
      expect(await bothAtOnce(clients)).toEqual(["alice@example.com (mcp:read)", "alice@example.com (mcp:read)"]);
      expect(fixture.counts.refreshGrants - grants).toBe(1);
      expect(fixture.counts.refusedRefreshes - refused).toBe(0);
      // Both calls went out with the token the one refresh issued.
      const fresh = fixture.accessTokens().at(-1);
      expect(fixture.callTokens().slice(calls)).toEqual([fresh, fresh]);
    } finally {
      for (const c of clients) await c.close();
    }
  });

  it("the resource server refuses the token: both replicas get a 401 at once, one refresh, both calls succeed with the new token", async (ctx) => {
    if (!pg || !oauth) return ctx.skip(skip);
    const clients = await Promise.all(replicas.map((r) => httpClient(r.url, token)));
    try {
      expect(await bothAtOnce(clients)).toEqual(["alice@example.com (mcp:read)", "alice@example.com (mcp:read)"]);
      const grants = fixture.counts.refreshGrants;
      const refused = fixture.counts.refusedRefreshes;
      const unauthorized = fixture.counts.unauthorized;
      const calls = fixture.callTokens().length;
      fixture.expireAccessTokens("mcp");
      expect(await bothAtOnce(clients)).toEqual(["alice@example.com (mcp:read)", "alice@example.com (mcp:read)"]);
      // Both were refused with the old token (so both wanted a new one), and one refresh served both.
      expect(fixture.counts.unauthorized - unauthorized).toBeGreaterThanOrEqual(2);
      expect(fixture.counts.refreshGrants - grants).toBe(1);
      expect(fixture.counts.refusedRefreshes - refused).toBe(0);
      const fresh = fixture.accessTokens().at(-1);
      expect(fixture.callTokens().slice(calls)).toEqual([fresh, fresh]);
      // The sign-in stays good on both: later calls need no refresh.
      expect(await bothAtOnce(clients)).toEqual(["alice@example.com (mcp:read)", "alice@example.com (mcp:read)"]);
      expect(fixture.counts.refreshGrants - grants).toBe(1);
    } finally {
      for (const c of clients) await c.close();
    }
  });
});
