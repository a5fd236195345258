// The vault's OAuth store: encrypted at rest, private, shared by processes without losing writes,
// tamper-evident, and its read cache follows writes made by another instance (another process).
import { readFile, writeFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { VaultTamperedError } from "../../../src/vault/errors.js";
import { vaultPaths } from "../../../src/vault/keys.js";
import { OAuthStore } from "../../../src/vault/oauth.js";
import { allFiles, modeOf, removeTempDirs, tempDataDir, vaultEnv } from "../vault/helpers.js";

afterAll(removeTempDirs);

const SECRET = "mcphub-canary-store-access-token-value";

async function twoStores() {
  const dataDir = await tempDataDir();
  const env = vaultEnv(dataDir);
  return { dataDir, a: await OAuthStore.open({ dataDir, env }), b: await OAuthStore.open({ dataDir, env }) };
}

describe("OAuthStore", () => {
  it("keeps tokens encrypted in a 0600 file and returns them intact", async () => {
    const { dataDir, a } = await twoStores();
    await a.update("linear", () => ({ url: "https://mcp.linear.app/mcp", tokens: { access_token: SECRET, token_type: "Bearer", obtained_at: 1, refresh_token: `${SECRET}-r` } }));
    const rec = await a.get("linear");
    expect(rec?.tokens?.access_token).toBe(SECRET);
    expect(rec?.generation).toBe(1);
    for (const f of await allFiles(dataDir)) expect((await readFile(f)).toString("latin1")).not.toContain("canary");
    expect(await modeOf(vaultPaths(dataDir).oauth)).toBe(0o600);
  });

  it("another instance (another process) sees a write at once; concurrent updates lose nothing", async () => {
    const { a, b } = await twoStores();
    expect(await b.get("x")).toBeUndefined();
    await a.update("x", () => ({ url: "u", step_up_scope: "one" }));
    expect((await b.get("x"))?.step_up_scope).toBe("one");
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).update(`s${i}`, () => ({ url: `u${i}` }))),
    );
    expect(await a.servers()).toEqual(["s0", "s1", "s10", "s11", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "x"]);
    expect(await b.remove("x")).toBe(true);
    expect(await a.get("x")).toBeUndefined();
    expect(await a.remove("x")).toBe(false);
  });

  it("tells in-process listeners which server changed; a no-op update writes nothing", async () => {
    const { a } = await twoStores();
    const seen: string[] = [];
    a.onWrite((s) => seen.push(s));
    await a.update("one", () => ({ url: "u" }));
    await a.update("one", () => false);
    await a.update("two", () => undefined);
    expect(seen).toEqual(["one"]);
  });

  it("refuses a tampered file instead of returning anything", async () => {
    const { dataDir, a } = await twoStores();
    await a.update("x", () => ({ url: "u" }));
    const path = vaultPaths(dataDir).oauth;
    const bytes = await readFile(path);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 1;
    await writeFile(path, bytes);
    const fresh = await OAuthStore.open({ dataDir, env: vaultEnv(dataDir) });
    await expect(fresh.get("x")).rejects.toBeInstanceOf(VaultTamperedError);
  });
});
