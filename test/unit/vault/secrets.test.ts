import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseSecretRef, ResultStore, SecretStore, secretRefFromUrl, VaultTamperedError } from "../../../src/vault/index.js";
import { withLockFile } from "../../../src/vault/fsutil.js";
import { allFiles, modeOf, removeTempDirs, runCli, tempDataDir, vaultEnv, Worker } from "./helpers.js";

afterAll(removeTempDirs);

async function openSecrets(extra: Record<string, string> = {}) {
  const dataDir = await tempDataDir();
  return { dataDir, store: await SecretStore.open({ dataDir, env: vaultEnv(dataDir, extra) }) };
}

describe("parseSecretRef", () => {
  it("accepts PROJECT/KEY", () => {
    expect(parseSecretRef("github/GITHUB_TOKEN")).toEqual({ project: "github", key: "GITHUB_TOKEN" });
    expect(parseSecretRef("my-proj.v2/_KEY1")).toEqual({ project: "my-proj.v2", key: "_KEY1" });
    expect(secretRefFromUrl("vault://github/TOKEN")).toBe("github/TOKEN");
    expect(secretRefFromUrl("Bearer x")).toBeUndefined();
  });

  it.each([
    ["TOKEN", /expected PROJECT\/KEY/],
    ["a/b/c", /exactly one "\/"/],
    ["/KEY", /invalid project ""/],
    ["-x/KEY", /invalid project "-x"/],
    ["p/", /invalid key ""/],
    ["p/1KEY", /invalid key "1KEY"/],
    ["p/KEY-WITH-DASH", /environment-variable name/],
  ])("rejects %j precisely", (ref, message) => {
    expect(() => parseSecretRef(ref)).toThrow(message);
  });
});

describe("SecretStore", () => {
  it("sets, gets, lists names only, removes and groups by project", async () => {
    const { store, dataDir } = await openSecrets();
    expect(await store.list()).toEqual([]);
    await store.set("github/TOKEN", "ghp_123");
    await store.set("github/USER", "octocat");
    await store.set("slack/TOKEN", "xoxb-1");
    await store.set("github/TOKEN", "ghp_456"); // overwrite
    expect(await store.get("github/TOKEN")).toBe("ghp_456");
    expect(await store.get("github/NOPE")).toBeUndefined();
    expect(await store.list()).toEqual(["github/TOKEN", "github/USER", "slack/TOKEN"]);
    expect(await store.list("github")).toEqual(["github/TOKEN", "github/USER"]);
    expect(await store.project("github")).toEqual({ TOKEN: "ghp_456", USER: "octocat" });
    expect(await store.project("none")).toEqual({});
    expect(await store.rm("github/USER")).toBe(true);
    expect(await store.rm("github/USER")).toBe(false);
    expect(await store.list()).toEqual(["github/TOKEN", "slack/TOKEN"]);
    await expect(store.set("github/EMPTY", "")).rejects.toThrow(/empty value/);
    expect(await modeOf(join(dataDir, "vault", "secrets.enc"))).toBe(0o600);
    // A second store (another process, a restart) sees the same secrets.
    const again = await SecretStore.open({ dataDir, env: vaultEnv(dataDir) });
    expect(await again.get("slack/TOKEN")).toBe("xoxb-1");
  });

  it("keeps __proto__-like keys as plain data", async () => {
    const { store } = await openSecrets();
    await store.set("p/__proto__", "v1");
    expect(await store.get("p/__proto__")).toBe("v1");
    expect(await store.project("p")).toEqual(Object.fromEntries([["__proto__", "v1"]]));
  });

  it("detects a tampered store file", async () => {
    const { store, dataDir } = await openSecrets();
    await store.set("p/K", "value");
    const path = join(dataDir, "vault", "secrets.enc");
    const bytes = await readFile(path);
    bytes[bytes.length - 5]! ^= 0x01;
    await writeFile(path, bytes);
    await expect(store.get("p/K")).rejects.toBeInstanceOf(VaultTamperedError);
    await expect(store.set("p/K2", "x")).rejects.toBeInstanceOf(VaultTamperedError);
  });

  it("never writes a secret value in plaintext anywhere under the data dir", async () => {
    const sources: Record<string, string>[] = [{}, { MCPHUB_VAULT_PASSPHRASE: "pw" }];
    for (const extra of sources) {
      const { store, dataDir } = await openSecrets(extra);
      const canary = `canary-${randomBytes(12).toString("hex")}`;
      await store.set("proj/CANARY", canary);
      await store.set("proj/OTHER", "x");
      await store.rm("proj/OTHER");
      const results = await ResultStore.open({ dataDir, retentionMs: 60_000, env: vaultEnv(dataDir, extra) });
      await results.put({ server: "s", tool: "t", namespaced: "s__t", agent: "a" }, `result mentioning ${canary}`);
      const files = await allFiles(dataDir);
      expect(files.length).toBeGreaterThanOrEqual(3);
      for (const file of files) {
        const bytes = await readFile(file);
        for (const needle of [canary, Buffer.from(canary).toString("base64"), Buffer.from(canary).toString("hex")]) {
          expect(bytes.includes(needle), `${file} contains the canary`).toBe(false);
        }
        expect(bytes.includes(Buffer.from(canary, "utf16le"))).toBe(false);
      }
    }
  });

  it("concurrent writers in several processes lose nothing", async () => {
    const dataDir = await tempDataDir();
    const env = vaultEnv(dataDir);
    const workers = await Promise.all([Worker.start(env), Worker.start(env), Worker.start(env)]);
    try {
      await Promise.all(workers.map((w) => w.send({ op: "open" })));
      const replies = await Promise.all(workers.map((w, i) => w.send({ op: "setMany", prefix: `p${i}`, count: 15 })));
      expect(replies).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    const store = await SecretStore.open({ dataDir, env });
    const names = await store.list();
    expect(names).toHaveLength(45);
    expect(await store.get("p2/K14")).toBe("v-p2-14");
  });

  it("recovers a lock left by a dead process", async () => {
    const { store, dataDir } = await openSecrets();
    // A lock file whose holder pid cannot exist on this host.
    const { hostname } = await import("node:os");
    await writeFile(join(dataDir, "vault", "secrets.lock"), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), created: Date.now() }));
    await store.set("p/K", "v");
    expect(await store.get("p/K")).toBe("v");
  });

  it("a held lock serialises writers instead of interleaving them", async () => {
    const { store, dataDir } = await openSecrets();
    const order: string[] = [];
    let release: () => void = () => undefined;
    const held = withLockFile(join(dataDir, "vault", "secrets.lock"), async () => {
      order.push("holder in");
      await new Promise<void>((r) => (release = r));
      order.push("holder out");
    });
    await new Promise((r) => setTimeout(r, 0));
    const write = store.set("p/K", "v").then(() => order.push("write done"));
    await new Promise((r) => setTimeout(r, 50));
    expect(order).toEqual(["holder in"]);
    release();
    await Promise.all([held, write]);
    expect(order).toEqual(["holder in", "holder out", "write done"]);
  });
});

describe("mcphub vault CLI", { timeout: 180_000 }, () => {
  it("set reads stdin, never echoes the value, and refuses a value in argv or a bad ref", async () => {
    const dataDir = await tempDataDir();
    const env = vaultEnv(dataDir);
    const set = await runCli(["vault", "set", "github/TOKEN"], env, "ghp_secret_value\n");
    expect(set).toMatchObject({ code: 0, stdout: "" });
    expect(set.stderr).toContain("stored github/TOKEN");
    expect(set.stderr).not.toContain("ghp_secret_value");
    const store = await SecretStore.open({ dataDir, env });
    expect(await store.get("github/TOKEN")).toBe("ghp_secret_value"); // one trailing newline dropped

    const argv = await runCli(["vault", "set", "github/OTHER", "hunter2"], env);
    expect(argv.code).toBe(1);
    expect(argv.stderr).toMatch(/^mcphub: refusing a secret value on the command line/);
    expect(argv.stderr).not.toContain("hunter2");
    expect(await store.get("github/OTHER")).toBeUndefined();

    const bad = await runCli(["vault", "set", "no-slash"], env, "x");
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toMatch(/expected PROJECT\/KEY/);
  });

  it("list (names only, --json), rm and status", async () => {
    const dataDir = await tempDataDir();
    const env = vaultEnv(dataDir);
    const store = await SecretStore.open({ dataDir, env });
    await store.set("github/TOKEN", "ghp_secret_value");
    await runCli(["vault", "set", "slack/TOKEN"], env, "xoxb");
    const list = await runCli(["vault", "list"], env);
    expect(list.stdout.trim().split("\n")).toEqual(["github/TOKEN", "slack/TOKEN"]);
    const json = await runCli(["vault", "list", "github", "--json"], env);
    expect(JSON.parse(json.stdout)).toEqual(["github/TOKEN"]);
    expect(json.stdout).not.toContain("ghp_secret_value");

    expect((await runCli(["vault", "rm", "slack/TOKEN"], env)).code).toBe(0);
    const missing = await runCli(["vault", "rm", "slack/TOKEN"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no secret slack\/TOKEN/);

    const status = await runCli(["vault", "status", "--json"], env);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      key: { source: "key-file", warning: expect.stringMatching(/next to the data/) as unknown },
      results: { count: 0, bytes: 0 },
      detached: { count: 0, pending: 0 },
      secrets: 1,
      oauth_sign_ins: 0,
    });
  });

  it("status reports a locked vault and exits non-zero", async () => {
    const dataDir = await tempDataDir();
    await SecretStore.open({ dataDir, env: vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "pw" }) });
    const status = await runCli(["vault", "status"], vaultEnv(dataDir));
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/locked.*set MCPHUB_VAULT_PASSPHRASE/);
    const list = await runCli(["vault", "list"], vaultEnv(dataDir));
    expect(list.code).toBe(1);
    expect(list.stderr).toMatch(/^mcphub: vault is locked/);
    const ok = await runCli(["vault", "status", "--json"], vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "pw" }));
    expect(JSON.parse(ok.stdout)).toMatchObject({ key: { source: "passphrase" } });
  });
});
