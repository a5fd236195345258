// The oauth block of a remote server: precise messages for what cannot work, secrets only as
// vault references (never plaintext in the config file).
import { describe, expect, it } from "vitest";
import { ConfigError, validateConfig } from "../../../src/config/index.js";

function problems(server: Record<string, unknown>): string[] {
  try {
    validateConfig({ servers: { s: server } });
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.issues.map((i) => `${i.path}: ${i.message}`);
  }
}

const URL_ = "https://mcp.example.com/mcp";

describe("oauth config", () => {
  it("accepts the usual shapes, defaulting the grant", () => {
    expect(problems({ url: URL_, oauth: {} })).toEqual([]);
    expect(problems({ url: URL_, oauth: { client_id: "abc", client_secret: "vault://ex/SECRET", scopes: ["read", "write"], redirect_port: 8765 } })).toEqual([]);
    expect(problems({ url: URL_, oauth: { grant: "client_credentials", client_id: "m2m", private_key: "vault://ex/KEY", signing_alg: "ES256" } })).toEqual([]);
    const cfg = validateConfig({ servers: { s: { url: URL_, oauth: { client_metadata_url: "https://me.example/client.json" } } } });
    expect(cfg.servers.s?.oauth?.grant).toBe("authorization_code");
  });

  it.each([
    [{ command: "x", oauth: {} }, "servers.s.oauth: oauth applies only to remote servers (this one has a command)"],
    [{ url: URL_, oauth: { client_id: "a", client_secret: "hunter2" } }, "servers.s.oauth.client_secret: client_secret must be a vault reference"],
    [{ url: URL_, oauth: { client_secret: "vault://a/B" } }, "servers.s.oauth.client_secret: client_secret needs client_id"],
    [{ url: URL_, oauth: { grant: "client_credentials", client_secret: "vault://a/B" } }, "servers.s.oauth.client_id: client_credentials needs client_id"],
    [{ url: URL_, oauth: { grant: "client_credentials", client_id: "a" } }, "servers.s.oauth.grant: client_credentials needs client_secret or private_key"],
    [{ url: URL_, oauth: { private_key: "vault://a/K", client_id: "a" } }, 'servers.s.oauth.private_key: private_key applies only to grant: "client_credentials"'],
    [{ url: URL_, oauth: { scopes: ["two words"] } }, "servers.s.oauth.scopes[0]: each scope is one word without spaces or quotes"],
    [{ url: URL_, oauth: { client_metadata_url: "http://x.example/c.json" } }, "servers.s.oauth.client_metadata_url: client_metadata_url must be an https URL with a path"],
    [{ url: URL_, headers: { Authorization: "Bearer x" }, oauth: {} }, "servers.s.headers: an Authorization header and oauth exclude each other"],
    [{ url: URL_, oauth: { redirect_port: 70000 } }, "servers.s.oauth.redirect_port: redirect_port must be a port number (1-65535)"],
  ])("%j is refused precisely", (server, message) => {
    const found = problems(server);
    expect(found.some((p) => p.startsWith(message)), found.join("\n")).toBe(true);
  });
});
