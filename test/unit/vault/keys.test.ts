import { createHash } from "node:crypto";
import { chmod, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openKeyring, ResultStore, SecretStore, VaultLockedError } from "../../../src/vault/index.js";
import { modeOf, removeTempDirs, tempDataDir, vaultEnv, Worker } from "./helpers.js";

afterAll(removeTempDirs);

const fingerprint = (key: Buffer) => createHash("sha256").update(key).digest("hex");

describe("openKeyring key sources", () => {
  it("falls back to a 0600 key file next to the data and warns about it", async () => {
    const dataDir = await tempDataDir();
    const ring = await openKeyring(dataDir, vaultEnv(dataDir));
    expect(ring.dataKey.length).toBe(32);
    expect(ring.status.source).toBe("key-file");
    expect(ring.status.warning).toMatch(/next to the data/);
    expect(await modeOf(join(dataDir, "vault", "master.key"))).toBe(0o600);
    const keyring = JSON.parse(await readFile(join(dataDir, "vault", "keyring.json"), "utf8")) as { source: string };
    expect(keyring.source).toBe("key-file");
    // Reopening gives the same data key.
    const again = await openKeyring(dataDir, vaultEnv(dataDir));
    expect(again.dataKey.equals(ring.dataKey)).toBe(true);
  });

  it("a missing key file locks the vault instead of making a new key", async () => {
    const dataDir = await tempDataDir();
    await openKeyring(dataDir, vaultEnv(dataDir));
    await rm(join(dataDir, "vault", "master.key"));
    await expect(openKeyring(dataDir, vaultEnv(dataDir))).rejects.toThrow(VaultLockedError);
    await expect(openKeyring(dataDir, vaultEnv(dataDir))).rejects.toThrow(/key file .* is missing/);
  });

  it("uses a passphrase first; a missing or wrong passphrase locks it", async () => {
    const dataDir = await tempDataDir();
    const env = vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "correct horse battery staple" });
    const ring = await openKeyring(dataDir, env);
    expect(ring.status).toMatchObject({ source: "passphrase" });
    expect(ring.status.warning).toBeUndefined();
    const file = await readFile(join(dataDir, "vault", "keyring.json"), "utf8");
    expect(file).not.toContain("correct horse");
    expect(JSON.parse(file)).toMatchObject({ source: "passphrase", kdf: { name: "scrypt", N: 32768, r: 8, p: 1 } });
    await expect(readFile(join(dataDir, "vault", "master.key"))).rejects.toThrow(/ENOENT/);

    const missing = await openKeyring(dataDir, vaultEnv(dataDir)).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(VaultLockedError);
    expect((missing as Error).message).toMatch(/^vault is locked: .*set MCPHUB_VAULT_PASSPHRASE/);
    const wrong = await openKeyring(dataDir, vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "wrong" })).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(VaultLockedError);
    expect((wrong as Error).message).toMatch(/passphrase is wrong/);
    // Still the same key with the right passphrase: nothing was replaced.
    expect((await openKeyring(dataDir, env)).dataKey.equals(ring.dataKey)).toBe(true);
  });

  it("reads the passphrase from MCPHUB_VAULT_PASSPHRASE_FILE and unlocks with either variable", async () => {
    const dataDir = await tempDataDir();
    const passFile = join(dataDir, "pass.txt");
    await writeFile(passFile, "from a file\n", { mode: 0o600 });
    const ring = await openKeyring(dataDir, vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE_FILE: passFile }));
    expect(ring.status.source).toBe("passphrase-file");
    expect(ring.status.warning).toBeUndefined();
    const viaEnv = await openKeyring(dataDir, vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "from a file" }));
    expect(viaEnv.dataKey.equals(ring.dataKey)).toBe(true);
    await chmod(passFile, 0o644);
    const loose = await openKeyring(dataDir, vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE_FILE: passFile }));
    expect(loose.status.warning).toMatch(/readable by other users/);
    await expect(openKeyring(dataDir, vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE_FILE: join(dataDir, "nope") }))).rejects.toThrow(
      /cannot be read/,
    );
  });

  it("a vault created with a key file keeps it when a passphrase appears later, and says so", async () => {
    const dataDir = await tempDataDir();
    const ring = await openKeyring(dataDir, vaultEnv(dataDir));
    const later = await openKeyring(dataDir, vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "new" }));
    expect(later.dataKey.equals(ring.dataKey)).toBe(true);
    expect(later.status.source).toBe("key-file");
    expect(later.status.warning).toMatch(/keeps using it/);
  });

  it("a keychain-wrapped vault with the keychain switched off is locked, not re-keyed", async () => {
    const dataDir = await tempDataDir();
    await openKeyring(dataDir, vaultEnv(dataDir));
    const path = join(dataDir, "vault", "keyring.json");
    const file = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
    await writeFile(path, JSON.stringify({ ...file, source: "keychain" }));
    await expect(openKeyring(dataDir, vaultEnv(dataDir))).rejects.toThrow(/MCPHUB_KEYCHAIN=off/);
  });

  it("an edited source or a malformed keyring.json is reported as locked with the reason", async () => {
    const dataDir = await tempDataDir();
    await openKeyring(dataDir, vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "pw" }));
    const path = join(dataDir, "vault", "keyring.json");
    const file = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
    // Claiming a key file while a key file exists elsewhere must not unwrap (AAD binds the source).
    await writeFile(path, JSON.stringify({ ...file, source: "key-file" }));
    await writeFile(join(dataDir, "vault", "master.key"), Buffer.alloc(32, 7).toString("base64"));
    await expect(openKeyring(dataDir, vaultEnv(dataDir))).rejects.toThrow(/does not match this vault/);
    await writeFile(path, "{not json");
    await expect(openKeyring(dataDir, vaultEnv(dataDir))).rejects.toThrow(/not valid JSON/);
    await writeFile(path, JSON.stringify({ version: 1, source: "passphrase" }));
    await expect(openKeyring(dataDir, vaultEnv(dataDir))).rejects.toThrow(/malformed at wrappedKey/);
  });
});

describe("several processes", () => {
  it("two processes opening a fresh vault at once get the same key and read each other's results", async () => {
    const dataDir = await tempDataDir();
    const env = vaultEnv(dataDir);
    const [a, b] = await Promise.all([Worker.start(env), Worker.start(env)]);
    try {
      // Both are running and idle; tell both to open at the same moment.
      const [ka, kb] = await Promise.all([a.send<{ fingerprint: string }>({ op: "open" }), b.send<{ fingerprint: string }>({ op: "open" })]);
      expect(ka.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect(ka.fingerprint).toBe(kb.fingerprint);
      await Promise.all([a.send({ op: "put", callId: "from-a", text: "written by A 😀" }), b.send({ op: "put", callId: "from-b", text: "written by B" })]);
      expect(await b.send({ op: "read", callId: "from-a" })).toEqual({ text: "written by A 😀" });
      expect(await a.send({ op: "read", callId: "from-b" })).toEqual({ text: "written by B" });
      // And this process agrees on the key.
      expect(fingerprint((await openKeyring(dataDir, env)).dataKey)).toBe(ka.fingerprint);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("two processes with a passphrase agree too (one creates, the other unwraps)", async () => {
    const dataDir = await tempDataDir();
    const env = vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "shared pass" });
    const [a, b] = await Promise.all([Worker.start(env), Worker.start(env)]);
    try {
      const [ka, kb] = await Promise.all([a.send<{ fingerprint: string; source: string }>({ op: "open" }), b.send<{ fingerprint: string }>({ op: "open" })]);
      expect(ka.source).toBe("passphrase");
      expect(ka.fingerprint).toBe(kb.fingerprint);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("stores opened with a passphrase vault refuse to open without it", async () => {
    const dataDir = await tempDataDir();
    await SecretStore.open({ dataDir, env: vaultEnv(dataDir, { MCPHUB_VAULT_PASSPHRASE: "pw" }) });
    await expect(ResultStore.open({ dataDir, retentionMs: 1000, env: vaultEnv(dataDir) })).rejects.toThrow(VaultLockedError);
    await expect(SecretStore.open({ dataDir, env: vaultEnv(dataDir) })).rejects.toThrow(VaultLockedError);
  });
});
