import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TokenStore } from "../../../src/serve/tokens.js";

let dataDir: string;
beforeEach(() => {
  dataDir = join(mkdtempSync(join(tmpdir(), "mcphub-tokens-")), "data");
});
afterEach(() => {
  rmSync(join(dataDir, ".."), { recursive: true, force: true });
});

describe("TokenStore", () => {
  it("authenticate: nothing required without live tokens, then exactly the token's agent", async () => {
    const store = TokenStore.open(dataDir);
    expect(await store.authenticate(undefined)).toEqual({ required: false });
    expect(await store.authenticate("mcphub_whatever")).toEqual({ required: false });
    const { token, info } = await store.create("claude");
    expect(await store.authenticate(undefined)).toEqual({ required: true });
    expect(await store.authenticate("mcphub_wrong")).toEqual({ required: true });
    expect(await store.authenticate(token)).toEqual({ required: true, who: { agent: "claude", id: info.id } });
    await store.revoke("claude");
    // Revoking the last token must not reopen the daemon to anonymous callers.
    expect(await store.authenticate(token)).toEqual({ required: true });
    expect(await store.authenticate(undefined)).toEqual({ required: true });
  });

  it("creates mcphub_ tokens, stores only their hash in a 0600 file inside a 0700 dir", async () => {
    const store = TokenStore.open(dataDir);
    expect(await store.hasAny()).toBe(false);
    const { token, info } = await store.create("claude");
    expect(token).toMatch(/^mcphub_[A-Za-z0-9_-]{43}$/);
    expect(info).toMatchObject({ agent: "claude", last4: token.slice(-4) });
    expect(info.id).toMatch(/^tok_[0-9a-f]{12}$/);
    const file = join(dataDir, "tokens.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.slice("mcphub_".length));
    expect(await store.hasAny()).toBe(true);
  });

  it("verifies a token to its agent and refuses unknown, altered and malformed ones", async () => {
    const store = TokenStore.open(dataDir);
    const a = await store.create("claude");
    const b = await store.create("codex");
    expect(await store.verify(a.token)).toEqual({ agent: "claude", id: a.info.id });
    expect(await store.verify(b.token)).toEqual({ agent: "codex", id: b.info.id });
    const flipped = a.token.slice(0, -1) + (a.token.endsWith("A") ? "B" : "A");
    expect(await store.verify(flipped)).toBeUndefined();
    expect(await store.verify("")).toBeUndefined();
    expect(await store.verify("mcphub_short")).toBeUndefined();
    expect(await store.verify(a.info.id)).toBeUndefined();
  });

  it("lists tokens without secrets, per agent, with revoked ones marked", async () => {
    const store = TokenStore.open(dataDir);
    const a1 = await store.create("claude");
    await store.create("claude");
    const c = await store.create("codex");
    expect(await store.revoke(a1.info.id)).toBe(1);
    const all = await store.list();
    expect(all.map((t) => t.agent)).toEqual(["claude", "claude", "codex"]);
    expect(all[0]?.revoked).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(all[1]?.revoked).toBeUndefined();
    expect(JSON.stringify(all)).not.toContain(a1.token);
    expect(Object.keys(all[2] ?? {}).sort()).toEqual(["agent", "created", "id", "last4"]);
    expect((await store.list("codex")).map((t) => t.id)).toEqual([c.info.id]);
  });

  it("revokes by agent (all live tokens) or by id; a revoked token stops verifying", async () => {
    const store = TokenStore.open(dataDir);
    const a1 = await store.create("claude");
    const a2 = await store.create("claude");
    const c = await store.create("codex");
    expect(await store.revoke("claude")).toBe(2);
    expect(await store.revoke("claude")).toBe(0);
    expect(await store.verify(a1.token)).toBeUndefined();
    expect(await store.verify(a2.token)).toBeUndefined();
    expect(await store.verify(c.token)).toEqual({ agent: "codex", id: c.info.id });
    expect(await store.revoke(c.info.id)).toBe(1);
    expect(await store.hasAny()).toBe(false);
    expect(await store.revoke("nobody")).toBe(0);
  });

  it("a long-lived reader (the daemon) sees another process's create and revoke without restarting", async () => {
    const daemon = TokenStore.open(dataDir);
    const cli = TokenStore.open(dataDir);
    expect(await daemon.hasAny()).toBe(false);
    const { token } = await cli.create("claude");
    expect(await daemon.verify(token)).toMatchObject({ agent: "claude" });
    await TokenStore.open(dataDir).revoke("claude");
    expect(await daemon.verify(token)).toBeUndefined();
    expect(await daemon.hasAny()).toBe(false);
  });

  it("concurrent creates from separate stores all land (the lock serialises read-modify-write)", async () => {
    const created = await Promise.all(Array.from({ length: 12 }, (_, i) => TokenStore.open(dataDir).create(`agent${i % 3}`)));
    const store = TokenStore.open(dataDir);
    expect(await store.list()).toHaveLength(12);
    for (const c of created) expect(await store.verify(c.token)).toEqual({ agent: c.info.agent, id: c.info.id });
  });

  it("takes over a stale lock left by a crashed process, and waits for a live one", async () => {
    const store = TokenStore.open(dataDir);
    await store.create("claude");
    const lock = join(dataDir, "tokens.json.lock");
    writeFileSync(lock, "99999");
    const old = new Date(Date.now() - 60_000);
    const { utimesSync } = await import("node:fs");
    utimesSync(lock, old, old);
    await store.create("codex");
    expect((await store.list()).map((t) => t.agent)).toEqual(["claude", "codex"]);
    // A fresh lock held briefly by "someone else": create waits, then proceeds.
    writeFileSync(lock, "1");
    const pending = store.create("gemini");
    setTimeout(() => rmSync(lock, { force: true }), 100);
    await pending;
    expect((await store.list()).map((t) => t.agent)).toEqual(["claude", "codex", "gemini"]);
  });

  it("reports a corrupt tokens.json precisely instead of treating it as empty", async () => {
    const store = TokenStore.open(dataDir);
    await store.create("claude");
    writeFileSync(join(dataDir, "tokens.json"), "{ not json");
    await expect(store.verify("mcphub_x")).rejects.toThrow(/tokens\.json is not valid JSON/);
    writeFileSync(join(dataDir, "tokens.json"), JSON.stringify({ version: 1, tokens: [{ id: "x" }] }));
    await expect(TokenStore.open(dataDir).list()).rejects.toThrow(/tokens\.json: tokens\.0\.id/);
  });

  it("rejects an empty or control-character agent name", async () => {
    await expect(TokenStore.open(dataDir).create("")).rejects.toThrow(/agent name/);
    await expect(TokenStore.open(dataDir).create("a\nb")).rejects.toThrow(/agent name/);
  });
});
