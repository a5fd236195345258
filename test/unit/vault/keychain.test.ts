// The OS-keychain key source, exercised against the Linux kernel keyring (keyutils). Runs inside
// `keyctl session -` and under a throwaway account name (MCPHUB_KEYCHAIN_ACCOUNT), and deletes that
// entry afterwards, so it never reads, changes or leaves behind anything of the user's own.
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, tempDataDir, vaultEnv, Worker } from "./helpers.js";

afterAll(removeTempDirs);

const keyctl = spawnSync("keyctl", ["--version"], { encoding: "utf8" });
const hasKeyctl = process.platform === "linux" && keyctl.error === undefined && keyctl.status === 0;
if (!hasKeyctl) {
  console.warn("skipping the keychain tests: `keyctl` is not installed (Debian/Ubuntu: apt-get install keyutils)");
}
const SESSION = ["keyctl", "session", "-"];

describe.skipIf(!hasKeyctl)("keychain key source (keyutils, throwaway account)", () => {
  it("wraps the data key with a master key held in the keychain, reuses it, and locks without it", async () => {
    const dataDir = await tempDataDir();
    const account = `mcphub-test-${randomBytes(6).toString("hex")}`;
    const env = vaultEnv(dataDir, { MCPHUB_KEYCHAIN: "keyutils", MCPHUB_KEYCHAIN_ACCOUNT: account });
    const worker = await Worker.start(env, SESSION);
    try {
      const first = await worker.send<{ source: string; fingerprint: string; error?: string }>({ op: "open" });
      expect(first.error).toBeUndefined();
      expect(first.source).toBe("keychain");
      // No key file: the master key lives only in the keychain; the keyring records where.
      await expect(access(join(dataDir, "vault", "master.key"))).rejects.toThrow(/ENOENT/);
      expect(JSON.parse(await readFile(join(dataDir, "vault", "keyring.json"), "utf8"))).toMatchObject({
        source: "keychain",
        keychainStore: "keyutils",
        keychainAccount: account,
      });

      // Another process finds the same master key and so the same data key.
      const second = await Worker.start(env, SESSION);
      try {
        expect(await second.send({ op: "open" })).toEqual({ source: "keychain", fingerprint: first.fingerprint });
      } finally {
        await second.stop();
      }

      // With the entry deleted the vault is locked (never silently re-keyed).
      expect(await worker.send({ op: "forgetKeychain" })).toEqual({ removed: true });
      const locked = await worker.send<{ error?: string; name?: string }>({ op: "open" });
      expect(locked.name).toBe("VaultLockedError");
      expect(locked.error).toContain(`OS keychain has no "mcphub"/"${account}" entry`);
    } finally {
      await worker.send({ op: "forgetKeychain" }).catch(() => undefined);
      await worker.stop();
    }

    // With the keychain switched off, the vault says why it is locked.
    const off = await Worker.start(vaultEnv(dataDir));
    try {
      expect((await off.send<{ error?: string }>({ op: "open" })).error).toMatch(/MCPHUB_KEYCHAIN=off/);
    } finally {
      await off.stop();
    }
  });
});
