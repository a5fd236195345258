// The vault's public surface: key management, the result store, the detached-call journal and
// the secret store. See docs/vault.md for the formats and the threat model.
export { openKeyring, vaultPaths, type Keyring, type KeySource, type KeyStatus } from "./keys.js";
export {
  ResultStore,
  ResultNotFoundError,
  newCallId,
  DEFAULT_CHUNK_SIZE,
  type PutMeta,
  type ResultMeta,
  type ResultStoreOptions,
} from "./results.js";
export { DetachedJournal, DETACHED_ORIGINS, FINISHED_GRACE_MS, type DetachedOrigin, type DetachedRecord, type DetachedJournalOptions, type RpcErrorRecord } from "./detached.js";
export { SecretStore, parseSecretRef, secretRefFromUrl, type SecretStoreOptions } from "./secrets.js";
export { CursorOutOfRangeError, VaultLockedError, VaultTamperedError } from "./errors.js";
