// The OAuth store: one record per remote server (its tokens, its client registration, what
// discovery found) in one encrypted document, the store's `oauth` (vault/oauth.enc on the files, a
// row of ciphertext in PostgreSQL). Every gateway process and replica and the `mcphub auth`
// commands share it, so writes are read-modify-write under the store's lock; readers need no lock
// and re-read only when the document changed (the store's mirror: a stat per read on the files,
// memory kept current by LISTEN/NOTIFY on PostgreSQL, so a request path may call get() freely).
// Token values never leave this module except through get(): errors and summaries carry names,
// scopes and times only.
import { join } from "node:path";
import { z } from "zod";
import { storeOf, type Docs, type LockOptions, type Store } from "../store/index.js";
import { deriveKey } from "./crypto.js";
import { VaultTamperedError } from "./errors.js";
import { openKeyring, type Keyring } from "./keys.js";
import { SealedFileError, openSealedBytes, parseSealedJson, sealBytes } from "./sealedfile.js";

const MAGIC = Buffer.from("MCPHOAU1", "ascii");
const BINDING = "oauth";

export const StoredTokensSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string(),
  refresh_token: z.string().optional(),
  id_token: z.string().optional(),
  /** Granted scope (space-separated): the token response's, else what was asked for. */
  scope: z.string().optional(),
  /** Epoch ms; absent when the authorization server did not say. */
  expires_at: z.number().optional(),
  obtained_at: z.number(),
  /** The authorization server that issued them; a refresh token is only ever sent back there. */
  issuer: z.string().optional(),
});
export type StoredTokens = z.infer<typeof StoredTokensSchema>;

export const OAuthRecordSchema = z.object({
  /** The server URL the record was made for: a record for another URL is never used. */
  url: z.string(),
  tokens: StoredTokensSchema.optional(),
  /** A dynamic registration or a client ID metadata document client (with `issuer`). */
  client: z.record(z.string(), z.unknown()).optional(),
  client_kind: z.enum(["dynamic", "metadata_document", "configured"]).optional(),
  /** The authorization server a configured client_id was first accepted by (when config has no issuer). */
  configured_issuer: z.string().optional(),
  /** What discovery found (protected-resource and authorization-server metadata). */
  discovery: z.record(z.string(), z.unknown()).optional(),
  /** The RFC 8707 resource indicator the tokens were issued for. */
  resource: z.string().optional(),
  /** Scope a 403 insufficient_scope asked for; the next sign-in requests it. */
  step_up_scope: z.string().optional(),
  /** Who signed in, for `auth status` (from the ID token or a JWT access token), never a secret. */
  account: z.string().optional(),
  updated_at: z.number(),
  /** Bumped on every write, so watchers can tell a new sign-in from an unrelated write. */
  generation: z.number().int(),
});
export type OAuthRecord = z.infer<typeof OAuthRecordSchema>;

const StoreSchema = z.object({ v: z.literal(1), servers: z.record(z.string(), OAuthRecordSchema) });
type StoreData = z.infer<typeof StoreSchema>;

/** A mutation: return the new record, `undefined` to delete it, or `false` when nothing changes. */
export type RecordUpdate = (current: OAuthRecord | undefined) => Omit<OAuthRecord, "generation" | "updated_at"> | undefined | false;

interface Cached {
  version: string;
  data: StoreData;
}

export interface OAuthStoreOptions {
  dataDir: string;
  /** Where the sign-ins are kept (default: the data directory's files). */
  store?: Store;
  env?: NodeJS.ProcessEnv;
  keyring?: Keyring;
}

const KEY = "oauth";

export class OAuthStore {
  private cache?: Cached;
  private readonly listeners = new Set<(server: string) => void>();
  private readonly docs: Docs;
  /** The file (files store) or where the row is, for messages. */
  readonly path: string;

  private constructor(
    private readonly key: Buffer,
    private readonly store: Store,
  ) {
    this.docs = store.docs("oauth");
    this.path = store.kind === "files" ? join(store.where, "vault", "oauth.enc") : `the OAuth store in ${store.where}`;
  }

  static async open(opts: OAuthStoreOptions): Promise<OAuthStore> {
    const keyring = opts.keyring ?? (await openKeyring(opts.dataDir, opts.env ?? process.env, opts.store));
    return new OAuthStore(deriveKey(keyring.dataKey, "mcphub oauth v1"), storeOf(opts.store ?? opts.dataDir));
  }

  /** The record of one server, or undefined. Cheap when the document has not changed. */
  async get(server: string): Promise<OAuthRecord | undefined> {
    const data = await this.load();
    return Object.hasOwn(data.servers, server) ? data.servers[server] : undefined;
  }

  /**
   * The record as stored right now, never from a cache: what a refresh decides on under the
   * refresh lock (another replica's refresh must be seen before its NOTIFY arrives).
   */
  async getFresh(server: string): Promise<OAuthRecord | undefined> {
    const data = this.decode((await this.docs.get(KEY))?.bytes);
    return Object.hasOwn(data.servers, server) ? data.servers[server] : undefined;
  }

  /**
   * Runs `fn` holding the server's refresh lock, which every process sharing the store honours
   * (a lock file; an advisory lock in PostgreSQL): one refresh of a token at a time, everywhere.
   */
  refreshLock<T>(server: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
    return this.store.withLock({ kind: "oauth-refresh", server }, fn, opts);
  }

  /** Names of the servers that have a record, sorted. */
  async servers(): Promise<string[]> {
    return Object.keys((await this.load()).servers).sort();
  }

  /** Read-modify-write of one record under the lock; returns the record as stored. */
  async update(server: string, mutate: RecordUpdate): Promise<OAuthRecord | undefined> {
    const { result, changed } = await this.docs.update(KEY, (bytes) => {
      const data = this.decode(bytes);
      const current = Object.hasOwn(data.servers, server) ? data.servers[server] : undefined;
      const next = mutate(current);
      if (next === false) return { value: { result: current, changed: false } };
      let stored: OAuthRecord | undefined;
      if (next === undefined) {
        if (current === undefined) return { value: { result: undefined, changed: false } };
        delete data.servers[server];
      } else {
        stored = { ...next, updated_at: Date.now(), generation: (current?.generation ?? 0) + 1 };
        data.servers[server] = stored;
      }
      return { write: sealBytes(this.key, MAGIC, BINDING, Buffer.from(JSON.stringify(data), "utf8")), value: { result: stored, changed: true } };
    });
    if (changed) {
      this.cache = undefined;
      this.emit(server);
    }
    return result;
  }

  /** Deletes a server's record; false when there was none. */
  async remove(server: string): Promise<boolean> {
    let had = false;
    await this.update(server, (cur) => {
      had = cur !== undefined;
      return cur === undefined ? false : undefined;
    });
    return had;
  }

  /** Called with the server's name after this process changed its record. */
  onWrite(listener: (server: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Calls `listener` when the document may have changed in another process or replica: the file
   * polled every `pollMs` on the files store, NOTIFY on PostgreSQL.
   */
  watch(listener: () => void, pollMs: number): () => void {
    return this.docs.mirror().watch(() => listener(), { pollMs });
  }

  private emit(server: string): void {
    for (const l of [...this.listeners]) l(server);
  }

  private async load(): Promise<StoreData> {
    const entry = this.docs.mirror().peek(KEY);
    if (!entry) return { v: 1, servers: Object.create(null) as StoreData["servers"] };
    const c = this.cache;
    if (c && c.version === entry.version) return c.data;
    const data = this.decode(entry.bytes());
    this.cache = { version: entry.version, data };
    return data;
  }

  private decode(bytes: Buffer | undefined): StoreData {
    if (!bytes) return { v: 1, servers: Object.create(null) as StoreData["servers"] };
    let plain: Buffer;
    try {
      plain = openSealedBytes(bytes, this.key, MAGIC, BINDING);
    } catch (err) {
      if (err instanceof SealedFileError) throw new VaultTamperedError(`the OAuth store ${this.path} failed authentication (${err.message}); it was altered or is corrupt`);
      throw err;
    }
    const read = parseSealedJson(plain, StoreSchema, `the OAuth store ${this.path}`);
    // A null-prototype map: a lookup by server name never reaches Object.prototype.
    const servers = Object.assign(Object.create(null) as StoreData["servers"], read.data.servers);
    return { v: 1, servers };
  }
}
