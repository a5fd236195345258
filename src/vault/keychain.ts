// The OS keychain as a master-key provider, through the optional native module @napi-rs/keyring.
// It is loaded on demand (require at first use) so a machine without it (or without a keychain daemon)
// simply falls through to the next key source. The master key is stored base64-encoded as the
// password of service "mcphub", account "vault-master-key".
import { createRequire } from "node:module";
import { KEY_BYTES } from "./crypto.js";

/** "auto": the platform default (on Linux: Secret Service, falling back to the kernel keyring). */
export type KeychainStore = "auto" | "secret-service" | "keyutils";

export const KEYCHAIN_SERVICE = "mcphub";
export const KEYCHAIN_ACCOUNT = "vault-master-key";

export type Keychain =
  | { ok: true; get(): Promise<Buffer | undefined>; set(key: Buffer): Promise<void>; remove(): Promise<boolean> }
  | { ok: false; reason: string };

/** The part of @napi-rs/keyring we use; checked at runtime because the module is optional. */
interface AsyncEntryLike {
  getPassword(): Promise<string | null>;
  setPassword(password: string): Promise<void>;
  deletePassword(): Promise<boolean>;
}
type AsyncEntryCtor = new (service: string, account: string, options?: { linux?: { store?: string } }) => AsyncEntryLike;

async function loadAsyncEntry(): Promise<AsyncEntryCtor | string> {
  // A variable specifier keeps TypeScript from requiring the optional module at compile time.
  // require, not import(): the package is CommonJS, and the start-up bundle runs as a script
  // (bin/mcphub.js) where a dynamic import() goes through an experimental loader hook.
  const specifier = "@napi-rs/keyring";
  let mod: unknown;
  try {
    mod = createRequire(import.meta.url)(specifier);
  } catch (err) {
    return `@napi-rs/keyring is not installed (${(err as Error).message.split("\n")[0]})`;
  }
  const ctor = (mod as { AsyncEntry?: unknown }).AsyncEntry;
  if (typeof ctor !== "function") return "@napi-rs/keyring has no AsyncEntry export";
  return ctor as AsyncEntryCtor;
}

function decodeKey(text: string | null): Buffer | undefined {
  if (text === null) return undefined;
  const key = Buffer.from(text, "base64");
  if (key.length !== KEY_BYTES) throw new Error("the keychain entry is not a 32-byte base64 key");
  return key;
}

/** The account name: "vault-master-key" unless MCPHUB_KEYCHAIN_ACCOUNT names another (tests use a
 *  throwaway account so they never read or delete a real user's entry). */
export function keychainAccount(env: NodeJS.ProcessEnv): string {
  const v = env.MCPHUB_KEYCHAIN_ACCOUNT?.trim();
  return v ? v : KEYCHAIN_ACCOUNT;
}

/** Opens and probes the keychain; never throws — an unusable keychain reports why. */
export async function openKeychain(store: KeychainStore, account: string = KEYCHAIN_ACCOUNT): Promise<Keychain> {
  const AsyncEntry = await loadAsyncEntry();
  if (typeof AsyncEntry === "string") return { ok: false, reason: AsyncEntry };
  let entry: AsyncEntryLike;
  try {
    entry = new AsyncEntry(KEYCHAIN_SERVICE, account, store === "auto" ? undefined : { linux: { store } });
    // Probe: a missing entry resolves null; an absent keychain daemon rejects.
    decodeKey(await entry.getPassword());
  } catch (err) {
    return { ok: false, reason: (err as Error).message.split("\n")[0] ?? "unknown error" };
  }
  return {
    ok: true,
    get: async () => decodeKey(await entry.getPassword()),
    set: (key) => entry.setPassword(key.toString("base64")),
    remove: () => entry.deletePassword(),
  };
}
