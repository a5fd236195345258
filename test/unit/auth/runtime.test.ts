// OAuth at run time against the local OAuth fixture (a real authorization server and resource
// server on loopback), through mcphub's own downstream sessions: the token goes only to its
// server, is refreshed before it expires, one refresh serves several processes, a refused refresh
// token or a missing scope becomes NeedsAuthError with the command, a server waiting for sign-in
// does not retry hot and connects as soon as another process signs it in.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signIn } from "../../../src/auth/login.js";
import { OAuthManager } from "../../../src/auth/manager.js";
import { validateConfig, type ServerConfig } from "../../../src/config/index.js";
import { openSession } from "../../../src/downstream/session.js";
import { Supervisor } from "../../../src/downstream/supervisor.js";
import { LockedError, NeedsAuthError, NotConnectedError } from "../../../src/downstream/types.js";
import { OAuthStore } from "../../../src/vault/oauth.js";
import { VaultSecretResolver } from "../../../src/vault/resolver.js";
import { SecretStore } from "../../../src/vault/secrets.js";
import { approveInBrowser, startOAuthFixture, type OAuthFixture } from "../../fixtures/oauth-server.js";
import { startServerEverything, type RunningServer } from "../../helpers/servers.js";
import { removeTempDirs, tempDataDir, vaultEnv } from "../vault/helpers.js";

let fixture: OAuthFixture;
beforeAll(async () => {
  fixture = await startOAuthFixture();
});
afterAll(async () => {
  await fixture?.close();
  await removeTempDirs();
});

const clientInfo = { name: "mcphub-test", version: "0" };

function remote(url: string, extra: Record<string, unknown> = {}): ServerConfig {
  return validateConfig({ servers: { s: { url, ...extra } } }).servers.s as ServerConfig;
}

async function world(env: Record<string, string> = {}) {
  const dataDir = await tempDataDir();
  const e = vaultEnv(dataDir, env);
  const secrets = new VaultSecretResolver({ dataDir, env: e });
  const manager = new OAuthManager({ dataDir, env: e, secrets, watchIntervalMs: 50 });
  return { dataDir, env: e, secrets, manager };
}

async function signedIn(cfg: ServerConfig) {
  const w = await world();
  const store = await w.manager.openStore();
  await signIn({ server: "secure", cfg, store, secret: (r) => w.secrets.header(r), openUrl: async (u) => void (await approveInBrowser(u.href)) });
  return { ...w, store };
}

function session(manager: OAuthManager, cfg: ServerConfig) {
  return openSession({ name: "secure", cfg, allServers: { secure: cfg }, clientInfo, auth: manager, timeoutMs: 15_000 });
}

async function whoami(manager: OAuthManager, cfg: ServerConfig): Promise<string> {
  const s = await session(manager, cfg);
  try {
    const r = await s.client.callTool({ name: "whoami", arguments: {} });
    return (r.content as { text: string }[])[0]?.text ?? "";
  } finally {
    await s.close();
  }
}

/** Makes the stored access token look like it expires in a moment. */
async function nearExpiry(store: OAuthStore): Promise<void> {
  await store.update("secure", (cur) => (cur?.tokens ? { ...cur, tokens: { ...cur.tokens, obtained_at: Date.now() - 3_600_000, expires_at: Date.now() + 500 } } : false));
}

describe("OAuth at run time", () => {
  const cfg = () => remote(fixture.mcpUrl, { oauth: { scopes: ["mcp:read"] } });

  it("sends the access token to its server only", async () => {
    const { manager } = await signedIn(cfg());
    const seen: (string | undefined)[] = [];
    const other = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.end("{}");
    });
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", () => r()));
    try {
      const s = manager.sessionFor("secure", cfg());
      if (!s) throw new Error("no auth session");
      await s.fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/x`, { headers: { accept: "application/json" } });
      const own = await s.fetch(fixture.mcpUrl, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
      expect(own.status).not.toBe(401);
      expect(seen).toEqual([undefined]);
    } finally {
      other.close();
    }
  });

  it("refreshes shortly before expiry, before sending, so the server never sees a stale token", async () => {
    const { manager, store } = await signedIn(cfg());
    await nearExpiry(store);
    const refreshes = fixture.counts.refreshGrants;
    const unauthorized = fixture.counts.unauthorized;
    expect(await whoami(manager, cfg())).toBe("alice@example.com (mcp:read)");
    expect(fixture.counts.refreshGrants).toBe(refreshes + 1);
    expect(fixture.counts.unauthorized).toBe(unauthorized);
    const t = (await store.get("secure"))?.tokens;
    expect((t?.expires_at ?? 0) - Date.now()).toBeGreaterThan(3_000_000);
  });

  it("two processes that need a refresh at once share one refresh (rotating refresh tokens)", async () => {
    const { manager, store, dataDir, env, secrets } = await signedIn(cfg());
    const second = new OAuthManager({ dataDir, env, secrets });
    const [s1, s2] = await Promise.all([session(manager, cfg()), session(second, cfg())]);
    fixture.expireAccessTokens("mcp");
    await nearExpiry(store);
    const refreshes = fixture.counts.refreshGrants;
    const refused = fixture.counts.refusedRefreshes;
    const results = await Promise.all([s1, s2].map((s) => s.client.callTool({ name: "whoami", arguments: {} })));
    expect(results.map((r) => (r.content as { text: string }[])[0]?.text)).toEqual(["alice@example.com (mcp:read)", "alice@example.com (mcp:read)"]);
    expect(fixture.counts.refreshGrants).toBe(refreshes + 1);
    expect(fixture.counts.refusedRefreshes).toBe(refused);
    await Promise.all([s1.close(), s2.close()]);
  });

  it("a refused refresh token is NeedsAuthError with the command; the dead tokens are forgotten, the registration kept", async () => {
    const { manager, store } = await signedIn(cfg());
    const s = await session(manager, cfg());
    fixture.revokeRefreshTokens("mcp");
    fixture.expireAccessTokens("mcp");
    const err = await s.client.callTool({ name: "whoami", arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NeedsAuthError);
    expect((err as NeedsAuthError).message).toBe("needs sign-in: run `mcphub auth login secure` (the authorization server refused the refresh token (invalid_grant))");
    expect((err as NeedsAuthError).stepUp).toBe(false);
    const rec = await store.get("secure");
    expect(rec?.tokens).toBeUndefined();
    expect(rec?.client?.client_id).toMatch(/^client-/);
    await s.close();
    await expect(session(manager, cfg())).rejects.toThrow("needs sign-in: run `mcphub auth login secure` (no sign-in is stored)");
  });

  it("a request needing a broader scope is a step-up NeedsAuthError, recorded for the next sign-in; the session stays usable", async () => {
    const { manager, store } = await signedIn(cfg());
    const s = await session(manager, cfg());
    const err = await s.client.callTool({ name: "write_note", arguments: { text: "x" } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NeedsAuthError);
    expect((err as NeedsAuthError).stepUp).toBe(true);
    expect((await store.get("secure"))?.step_up_scope).toBe("mcp:read mcp:write");
    expect((await s.client.callTool({ name: "whoami", arguments: {} })).isError).toBeFalsy();
    await s.close();
  });

  it("a locked vault does not break a server that never asks for sign-in; one that asks is locked, not needs_auth", async () => {
    const dataDir = await tempDataDir();
    await SecretStore.open({ dataDir, env: vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "right" }) });
    const env = vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "wrong" });
    const manager = new OAuthManager({ dataDir, env, secrets: new VaultSecretResolver({ dataDir, env }) });
    let everything: RunningServer | undefined;
    try {
      everything = await startServerEverything("streamableHttp");
      const open = await openSession({ name: "ev", cfg: remote(everything.url), allServers: {}, clientInfo, auth: manager, timeoutMs: 30_000 });
      expect(open.tools.length).toBeGreaterThan(0);
      await open.close();
    } finally {
      await everything?.close();
    }
    await expect(openSession({ name: "secure", cfg: remote(fixture.mcpUrl), allServers: {}, clientInfo, auth: manager, timeoutMs: 15_000 })).rejects.toBeInstanceOf(LockedError);
  });

  it("needs_auth does not retry hot, and connects as soon as another process signs in", async () => {
    const w = await world();
    const plainCfg = remote(fixture.mcpUrl); // no oauth block: sign-in starts from the Bearer challenge
    const sup = new Supervisor({
      servers: { secure: plainCfg },
      connectTimeoutMs: 15_000,
      clientInfo,
      secrets: w.secrets,
      auth: w.manager,
      backoff: { initialMs: 1, maxMs: 5 },
    });
    try {
      sup.start();
      await expect(sup.waitForServer("secure", { timeoutMs: 15_000 })).rejects.toBeInstanceOf(NotConnectedError);
      expect(sup.snapshot("secure")?.state).toBe("needs_auth");
      expect(sup.snapshot("secure")?.error).toBe("needs sign-in: run `mcphub auth login secure` (no sign-in is stored)");
      const before = fixture.counts.unauthorized;
      // A failed server with this backoff would retry every few milliseconds.
      await new Promise((r) => setTimeout(r, 400));
      expect(fixture.counts.unauthorized).toBe(before);
      // `mcphub auth login` in another process: its own store instance, the same vault file.
      const other = await OAuthStore.open({ dataDir: w.dataDir, env: w.env });
      await signIn({ server: "secure", cfg: plainCfg, store: other, secret: (r) => w.secrets.header(r), openUrl: async (u) => void (await approveInBrowser(u.href)) });
      // Ready may come before this line runs (the reconnect races the end of signIn): look first.
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`still ${sup.snapshot("secure")?.state} after the sign-in`)), 30_000);
        const check = () => {
          if (sup.snapshot("secure")?.state !== "ready") return;
          clearTimeout(timer);
          stop();
          resolve();
        };
        const stop = sup.onChange(check);
        check();
      });
      expect((await sup.callTool("secure", "whoami", {})).content).toEqual([{ type: "text", text: "alice@example.com (mcp:read)" }]);
    } finally {
      await sup.close();
      w.manager.close();
    }
  });
});
