// signIn() against the local OAuth fixture: a refusal in the browser stores no tokens; a second
// sign-in reuses the stored registration (same loopback port) instead of registering again; a
// fixed port that is taken, and a stdio server, are refused with a clear message.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenLoopback } from "../../../src/auth/loopback.js";
import { SignInError, signIn } from "../../../src/auth/login.js";
import { validateConfig, type ServerConfig } from "../../../src/config/index.js";
import { OAuthStore } from "../../../src/vault/oauth.js";
import { approveInBrowser, startOAuthFixture, type OAuthFixture } from "../../fixtures/oauth-server.js";
import { removeTempDirs, tempDataDir, vaultEnv } from "../vault/helpers.js";

let fixture: OAuthFixture;
beforeAll(async () => {
  fixture = await startOAuthFixture();
});
afterAll(async () => {
  await fixture?.close();
  await removeTempDirs();
});

const cfgOf = (server: Record<string, unknown>) => validateConfig({ servers: { s: server } }).servers.s as ServerConfig;
const noSecrets = () => Promise.reject(new Error("no secrets here"));

async function store(): Promise<OAuthStore> {
  const dataDir = await tempDataDir();
  return OAuthStore.open({ dataDir, env: vaultEnv(dataDir) });
}

describe("signIn", () => {
  it("a refusal in the browser is a clear error and stores no tokens", async () => {
    const s = await store();
    const err = await signIn({ server: "notes", cfg: cfgOf({ url: fixture.mcpUrl }), store: s, secret: noSecrets, openUrl: async (u) => void (await approveInBrowser(u.href, "deny")) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignInError);
    expect((err as Error).message).toBe('the authorization server refused the sign-in to "notes": access_denied');
    expect((await s.get("notes"))?.tokens).toBeUndefined();
  });

  it("a second sign-in reuses the registration and its loopback port", async () => {
    const s = await store();
    const cfg = cfgOf({ url: fixture.mcpUrl });
    const ports: string[] = [];
    const openUrl = async (u: URL) => {
      ports.push(new URL(u.searchParams.get("redirect_uri") ?? "").port);
      await approveInBrowser(u.href);
    };
    const registered = fixture.counts.register;
    const first = await signIn({ server: "notes", cfg, store: s, secret: noSecrets, openUrl });
    expect(first).toMatchObject({ server: "notes", grant: "authorization_code", client: "dynamic", account: "alice@example.com", scope: "mcp:read", refreshable: true });
    await signIn({ server: "notes", cfg, store: s, secret: noSecrets, openUrl });
    expect(fixture.counts.register).toBe(registered + 1);
    expect(ports[0]).toBe(ports[1]);
  });

  it("refuses a taken fixed port and a stdio server", async () => {
    const s = await store();
    const busy = await listenLoopback(0, "x");
    try {
      const cfg = cfgOf({ url: fixture.mcpUrl, oauth: { redirect_port: busy.port } });
      await expect(signIn({ server: "notes", cfg, store: s, secret: noSecrets, openUrl: () => undefined })).rejects.toThrow(
        `port ${busy.port} on 127.0.0.1 is in use; the redirect port is fixed (oauth.redirect_port or --port), so free it or choose another`,
      );
    } finally {
      await busy.close();
    }
    await expect(signIn({ server: "local", cfg: cfgOf({ command: "x" }), store: s, secret: noSecrets, openUrl: () => undefined })).rejects.toThrow(
      'server "local" is a stdio server; sign-in applies only to remote (url) servers',
    );
  });
});
