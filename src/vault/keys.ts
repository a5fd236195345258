// Key management: one random 32-byte data key encrypts everything in the vault; it is stored in
// vault/keyring.json wrapped (AES-256-GCM) by a master key taken from, in order of preference:
//   1. a passphrase (MCPHUB_VAULT_PASSPHRASE, or MCPHUB_VAULT_PASSPHRASE_FILE), stretched by scrypt;
//   2. the OS keychain via the optional @napi-rs/keyring (service "mcphub", account "vault-master-key");
//   3. a generated key file vault/master.key (0600) — the weakest: it sits next to the data.
// The source that wrapped the data key is recorded. Opening never silently replaces a data key it
// cannot unwrap (that would orphan every secret and result): it throws VaultLockedError instead.
// The wrapped key lives in the store's `keyring` document: vault/keyring.json on the files, a row
// in PostgreSQL, where every replica unwraps the same data key with the same passphrase (a shared
// store never gets a key-file or keychain keyring: those would exist on one machine only).
import { randomBytes, scrypt as scryptCb, type ScryptOptions } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { AuthFailure, KEY_BYTES, openSealed, seal } from "./crypto.js";
import { VaultLockedError } from "./errors.js";
import { storeOf, type CopyCodec, type Docs, type Store } from "../store/index.js";
import { createFileExclusive, ensurePrivateDir, isErrno } from "./fsutil.js";
import { KEYCHAIN_ACCOUNT, keychainAccount, openKeychain, type KeychainStore } from "./keychain.js";

export type KeySource = "passphrase" | "passphrase-file" | "keychain" | "key-file";

export interface KeyStatus {
  source: KeySource;
  /** Where the master key comes from, in words (never the key itself). */
  detail: string;
  /** Set when the source is weak or something about it deserves attention. */
  warning?: string;
}

export interface Keyring {
  /** The 32-byte data key. Keep it in memory only. */
  dataKey: Buffer;
  status: KeyStatus;
}

/** Paths of the vault inside a data directory. */
export function vaultPaths(dataDir: string) {
  const root = join(dataDir, "vault");
  return {
    root,
    keyring: join(root, "keyring.json"),
    keyringLock: join(root, "keyring.lock"),
    masterKeyFile: join(root, "master.key"),
    results: join(root, "results"),
    detached: join(root, "detached"),
    secrets: join(root, "secrets.enc"),
    secretsLock: join(root, "secrets.lock"),
    oauth: join(root, "oauth.enc"),
    oauthLock: join(root, "oauth.lock"),
  };
}

// scrypt cost: N=2^15, r=8 needs 32 MiB and takes ~0.1-0.2 s on a laptop core; paid once per
// process start. Parameters are stored so they can be raised later without breaking old vaults.
const SCRYPT_DEFAULT = { N: 2 ** 15, r: 8, p: 1 } as const;

const b64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, "expected base64");

const KeyringFileSchema = z.object({
  version: z.literal(1),
  source: z.enum(["passphrase", "passphrase-file", "keychain", "key-file"]),
  kdf: z
    .object({
      name: z.literal("scrypt"),
      salt: b64,
      N: z.number().int().min(2 ** 10).max(2 ** 22),
      r: z.number().int().min(1).max(32),
      p: z.number().int().min(1).max(16),
    })
    .optional(),
  keychainStore: z.enum(["auto", "secret-service", "keyutils"]).optional(),
  keychainAccount: z.string().min(1).optional(),
  /** nonce ‖ ciphertext ‖ tag of the data key, base64. */
  wrappedKey: b64,
  created: z.string(),
});
type KeyringFile = z.infer<typeof KeyringFileSchema>;

/** The AAD binds the wrapped key to its recorded source, so editing the source fails to unwrap. */
function wrapAad(source: KeySource): Buffer {
  const family = source === "passphrase-file" ? "passphrase" : source;
  return Buffer.from(`mcphub-vault-keyring-v1|${family}`, "utf8");
}

function scrypt(passphrase: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const opts: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scryptCb(passphrase.normalize("NFC"), salt, KEY_BYTES, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

interface PassphraseInput {
  source: "passphrase" | "passphrase-file";
  passphrase: string;
  detail: string;
  warning?: string;
}

/** Reads the passphrase from the environment; undefined when neither variable is set. */
async function passphraseFromEnv(env: NodeJS.ProcessEnv): Promise<PassphraseInput | undefined> {
  const direct = env.MCPHUB_VAULT_PASSPHRASE;
  if (direct !== undefined && direct !== "") {
    return { source: "passphrase", passphrase: direct, detail: "passphrase from MCPHUB_VAULT_PASSPHRASE (scrypt)" };
  }
  const file = env.MCPHUB_VAULT_PASSPHRASE_FILE;
  if (file === undefined || file === "") return undefined;
  let text: string;
  let mode: number;
  try {
    text = await readFile(file, "utf8");
    mode = (await stat(file)).mode & 0o777;
  } catch (err) {
    throw new VaultLockedError(
      `vault is locked: MCPHUB_VAULT_PASSPHRASE_FILE points to ${file}, which cannot be read (${isErrno(err, "ENOENT") ? "no such file" : (err as Error).message})`,
    );
  }
  // A trailing newline is an editor artefact, not part of the passphrase.
  const passphrase = text.replace(/\r?\n$/, "");
  if (passphrase === "") throw new VaultLockedError(`vault is locked: the passphrase file ${file} is empty`);
  const input: PassphraseInput = {
    source: "passphrase-file",
    passphrase,
    detail: `passphrase from the file ${file} (MCPHUB_VAULT_PASSPHRASE_FILE, scrypt)`,
  };
  if ((mode & 0o077) !== 0) {
    input.warning = `the passphrase file ${file} is readable by other users (mode ${mode.toString(8)}); chmod 600 it`;
  }
  return input;
}

function keychainMode(env: NodeJS.ProcessEnv): "off" | KeychainStore {
  const v = (env.MCPHUB_KEYCHAIN ?? "").trim().toLowerCase();
  if (v === "off" || v === "0" || v === "false" || v === "no") return "off";
  if (v === "keyutils") return "keyutils";
  if (v === "auto") return "auto";
  // Default on Linux: the Secret Service only. The kernel keyring (keyutils) forgets its keys at
  // logout/reboot, which would lock the vault for good, so it is used only when asked for.
  return "secret-service";
}

function keychainDetail(store: KeychainStore, account: string): string {
  return `OS keychain (${store === "auto" ? "default store" : store}), service "mcphub", account "${account}"`;
}

const KEY_FILE_WARNING =
  "the master key is a file next to the data (vault/master.key): anyone who can read the data directory can decrypt the vault; set MCPHUB_VAULT_PASSPHRASE (or use an OS keychain) for real protection at rest";

function keyFileStatus(path: string, env: NodeJS.ProcessEnv): KeyStatus {
  const passphraseSet = Boolean(env.MCPHUB_VAULT_PASSPHRASE || env.MCPHUB_VAULT_PASSPHRASE_FILE);
  return {
    source: "key-file",
    detail: `key file ${path}`,
    warning: passphraseSet
      ? `${KEY_FILE_WARNING} (a passphrase is set now, but this vault was created with a key file and keeps using it)`
      : KEY_FILE_WARNING,
  };
}

async function readKeyFile(path: string): Promise<Buffer | undefined> {
  try {
    const text = (await readFile(path, "utf8")).trim();
    const key = Buffer.from(text, "base64");
    if (key.length !== KEY_BYTES) throw new VaultLockedError(`vault is locked: the key file ${path} is corrupt (expected 32 base64-encoded bytes)`);
    return key;
  } catch (err) {
    if (isErrno(err, "ENOENT")) return undefined;
    throw err;
  }
}

/** Reads and validates the keyring document; undefined when it does not exist yet. `what` names it. */
async function readKeyringDoc(docs: Docs, what: string): Promise<KeyringFile | undefined> {
  const entry = await docs.get("keyring");
  return entry === undefined ? undefined : parseKeyring(entry.bytes, what);
}

function parseKeyring(bytes: Buffer, what: string): KeyringFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new VaultLockedError(`vault is locked: ${what} is not valid JSON; restore it from a backup (deleting it orphans all stored secrets)`);
  }
  const result = KeyringFileSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new VaultLockedError(`vault is locked: ${what} is malformed at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`);
  }
  return result.data;
}

function unwrap(file: KeyringFile, masterKey: Buffer, onFailure: string): Buffer {
  try {
    const key = openSealed(masterKey, Buffer.from(file.wrappedKey, "base64"), wrapAad(file.source));
    if (key.length !== KEY_BYTES) throw new AuthFailure("wrong key length");
    return key;
  } catch (err) {
    if (err instanceof AuthFailure) throw new VaultLockedError(onFailure);
    throw err;
  }
}

/** Unlocks an existing keyring with the source it records. */
async function unlockExisting(paths: ReturnType<typeof vaultPaths>, file: KeyringFile, env: NodeJS.ProcessEnv, what: string): Promise<Keyring> {
  switch (file.source) {
    case "passphrase":
    case "passphrase-file": {
      const input = await passphraseFromEnv(env);
      if (!input) {
        throw new VaultLockedError(
          "vault is locked: it was created with a passphrase; set MCPHUB_VAULT_PASSPHRASE or MCPHUB_VAULT_PASSPHRASE_FILE",
        );
      }
      const kdf = file.kdf;
      if (!kdf) throw new VaultLockedError(`vault is locked: ${what} records a passphrase but no KDF parameters`);
      const master = await scrypt(input.passphrase, Buffer.from(kdf.salt, "base64"), kdf);
      const dataKey = unwrap(file, master, "vault is locked: the passphrase is wrong (check MCPHUB_VAULT_PASSPHRASE / MCPHUB_VAULT_PASSPHRASE_FILE)");
      const status: KeyStatus = { source: input.source, detail: input.detail };
      if (input.warning) status.warning = input.warning;
      return { dataKey, status };
    }
    case "keychain": {
      const mode = keychainMode(env);
      const store: KeychainStore = file.keychainStore ?? "auto";
      const account = file.keychainAccount ?? KEYCHAIN_ACCOUNT;
      if (mode === "off") {
        throw new VaultLockedError("vault is locked: its master key is in the OS keychain, but MCPHUB_KEYCHAIN=off disables the keychain");
      }
      const keychain = await openKeychain(store, account);
      if (!keychain.ok) throw new VaultLockedError(`vault is locked: its master key is in the OS keychain, which is unavailable (${keychain.reason})`);
      let master: Buffer | undefined;
      try {
        master = await keychain.get();
      } catch (err) {
        throw new VaultLockedError(`vault is locked: reading the OS keychain failed (${(err as Error).message})`);
      }
      if (!master) {
        throw new VaultLockedError(`vault is locked: the OS keychain has no "mcphub"/"${account}" entry (was it deleted, or did the kernel keyring expire?)`);
      }
      const dataKey = unwrap(file, master, "vault is locked: the master key in the OS keychain does not match this vault");
      const status: KeyStatus = { source: "keychain", detail: keychainDetail(store, account) };
      if (store === "keyutils") status.warning = "the kernel keyring (keyutils) forgets keys at reboot and after days unused; the vault will then be locked";
      return { dataKey, status };
    }
    case "key-file": {
      const master = await readKeyFile(paths.masterKeyFile);
      if (!master) throw new VaultLockedError(`vault is locked: its key file ${paths.masterKeyFile} is missing`);
      const dataKey = unwrap(file, master, `vault is locked: the key file ${paths.masterKeyFile} does not match this vault`);
      return { dataKey, status: keyFileStatus(paths.masterKeyFile, env) };
    }
  }
}

/**
 * A new keyring with the strongest available source. Runs under the keyring lock. A shared store
 * takes a passphrase only: every replica must be able to derive the same master key.
 */
async function createKeyring(paths: ReturnType<typeof vaultPaths>, env: NodeJS.ProcessEnv, shared: string | undefined): Promise<Buffer> {
  const dataKey = randomBytes(KEY_BYTES);
  const base = { version: 1 as const, created: new Date().toISOString() };
  let file: KeyringFile | undefined;

  const input = await passphraseFromEnv(env);
  if (input) {
    const salt = randomBytes(16);
    const master = await scrypt(input.passphrase, salt, SCRYPT_DEFAULT);
    file = {
      ...base,
      source: input.source,
      kdf: { name: "scrypt", salt: salt.toString("base64"), ...SCRYPT_DEFAULT },
      wrappedKey: seal(master, dataKey, wrapAad(input.source)).toString("base64"),
    };
  }

  if (!file && shared !== undefined) {
    throw new VaultLockedError(
      `vault is locked: the team store ${shared} has no keyring yet, and only a passphrase can create one that every replica opens alike; set MCPHUB_VAULT_PASSPHRASE or MCPHUB_VAULT_PASSPHRASE_FILE (the same on every replica), or import a data directory with \`mcphub store import\``,
    );
  }
  const mode = keychainMode(env);
  if (!file && mode !== "off") {
    const account = keychainAccount(env);
    const keychain = await openKeychain(mode, account);
    if (keychain.ok) {
      try {
        let master = await keychain.get();
        if (!master) {
          await keychain.set(randomBytes(KEY_BYTES));
          // Read back: if another process (another data dir) set it at the same moment, use the
          // value that actually stuck.
          master = await keychain.get();
        }
        if (master) {
          file = { ...base, source: "keychain", keychainStore: mode, keychainAccount: account, wrappedKey: seal(master, dataKey, wrapAad("keychain")).toString("base64") };
        }
      } catch {
        // The keychain answered the probe but failed to store: fall through to the key file.
      }
    }
  }

  if (!file) {
    let master = await readKeyFile(paths.masterKeyFile);
    if (!master) {
      const created = randomBytes(KEY_BYTES);
      await createFileExclusive(paths.masterKeyFile, `${created.toString("base64")}\n`);
      master = await readKeyFile(paths.masterKeyFile);
      if (!master) throw new Error(`could not create the key file ${paths.masterKeyFile}`);
    }
    file = { ...base, source: "key-file", wrappedKey: seal(master, dataKey, wrapAad("key-file")).toString("base64") };
  }

  return Buffer.from(`${JSON.stringify(file, null, 2)}\n`, "utf8");
}

/**
 * Opens (creating on first use) the vault keyring of `dataDir`, or of `store` when given (a
 * shared store: every replica gets the same data key). Safe when several processes start at once:
 * creation happens under the store's keyring lock and lands only if no keyring exists yet (link()
 * on the files, INSERT ... ON CONFLICT DO NOTHING on PostgreSQL), so all of them end up with the
 * same data key. Throws VaultLockedError with the reason when the data key cannot be unwrapped.
 */
export async function openKeyring(dataDir: string, env: NodeJS.ProcessEnv = process.env, store?: Store): Promise<Keyring> {
  const paths = vaultPaths(dataDir);
  const s = storeOf(store ?? dataDir);
  const docs = s.docs("keyring");
  const files = s.kind === "files";
  const what = files ? join(s.where, "vault", "keyring.json") : `the keyring in ${s.where}`;
  if (files) await ensurePrivateDir(join(s.where, "vault"));
  let file = await readKeyringDoc(docs, what);
  if (!file) {
    await docs.update("keyring", async (current) => {
      if (current !== undefined) {
        parseKeyring(current, what);
        return { value: undefined };
      }
      // create(), not a plain write: it fails when another process won, and theirs is read below.
      await docs.create("keyring", await createKeyring(paths, env, files ? undefined : s.where));
      return { value: undefined };
    });
    file = await readKeyringDoc(docs, what);
    if (!file) throw new Error(`the keyring ${what} vanished right after it was created`);
  }
  return unlockExisting(paths, file, env, what);
}

/** The data key a keyring document wraps; `dataDir` holds its key file when it uses one. */
async function unwrapKeyringDoc(bytes: Buffer, dataDir: string, env: NodeJS.ProcessEnv, what: string): Promise<Buffer> {
  return (await unlockExisting(vaultPaths(dataDir), parseKeyring(bytes, what), env, what)).dataKey;
}

/**
 * What a copy between stores does with the keyring (`mcphub store import|export`). Into a shared
 * store the data directory's keyring goes as it is when a passphrase wraps it; a key file or the
 * OS keychain exists on one machine only, so then the same data key is re-wrapped with the
 * passphrase in the environment (every sealed entry stays readable; nothing is re-encrypted). Two
 * keyrings whose bytes differ are the same when they wrap the same data key (a re-run of an import).
 */
export function keyringCopyCodec(opts: { sourceDir: string; targetDir: string; shared: boolean; env: NodeJS.ProcessEnv }): CopyCodec {
  const what = (dir: string) => join(dir, "vault", "keyring.json");
  return {
    prepare: async (space, _key, bytes) => {
      if (space !== "keyring" || !opts.shared) return bytes;
      const file = parseKeyring(bytes, what(opts.sourceDir));
      if (file.source === "passphrase" || file.source === "passphrase-file") return bytes;
      const input = await passphraseFromEnv(opts.env);
      if (!input) {
        const by = file.source === "key-file" ? `its key file (${vaultPaths(opts.sourceDir).masterKeyFile})` : "this machine's OS keychain";
        throw new VaultLockedError(
          `the vault key of ${opts.sourceDir} is wrapped by ${by}, which replicas on other machines cannot read; set MCPHUB_VAULT_PASSPHRASE (or MCPHUB_VAULT_PASSPHRASE_FILE) to the passphrase every replica will use and run the import again: the same data key is then wrapped with it, so every stored result and sign-in stays readable`,
        );
      }
      const dataKey = await unwrapKeyringDoc(bytes, opts.sourceDir, opts.env, what(opts.sourceDir));
      const salt = randomBytes(16);
      const master = await scrypt(input.passphrase, salt, SCRYPT_DEFAULT);
      const rewrapped: KeyringFile = {
        version: 1,
        source: input.source,
        kdf: { name: "scrypt", salt: salt.toString("base64"), ...SCRYPT_DEFAULT },
        wrappedKey: seal(master, dataKey, wrapAad(input.source)).toString("base64"),
        created: file.created,
      };
      return Buffer.from(`${JSON.stringify(rewrapped, null, 2)}\n`, "utf8");
    },
    same: async (space, _key, source, target) => {
      if (space !== "keyring") return false;
      try {
        const a = await unwrapKeyringDoc(source, opts.sourceDir, opts.env, what(opts.sourceDir));
        const b = await unwrapKeyringDoc(target, opts.targetDir, opts.env, what(opts.targetDir));
        return a.equals(b);
      } catch {
        return false; // one of them cannot be opened here: not known to be the same
      }
    },
  };
}
