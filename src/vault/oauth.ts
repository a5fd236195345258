// The OAuth store: one record per remote server (its tokens, its client registration, what
// discovery found) in one encrypted file, vault/oauth.enc. Every gateway process of the user and
// the `mcphub auth` commands share it, so writes are read-modify-write under an exclusive lock
// file and land by atomic rename; readers need no lock and re-read only when the file changed
// (a stat per read, so a request path may call get() freely). Token values never leave this
// module except through get(): errors and summaries carry names, scopes and times only.
import { stat } from "node:fs/promises";
import { z } from "zod";
import { deriveKey } from "./crypto.js";
import { ensurePrivateDir, isErrno, withLockFile } from "./fsutil.js";
import { openKeyring, vaultPaths, type Keyring } from "./keys.js";
import { readSealedJson, writeSealedFile } from "./sealedfile.js";

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
  ino: number;
  size: number;
  mtimeMs: number;
  data: StoreData;
}

export interface OAuthStoreOptions {
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  keyring?: Keyring;
}

export class OAuthStore {
  private cache?: Cached;
  private readonly listeners = new Set<(server: string) => void>();

  private constructor(
    private readonly key: Buffer,
    readonly path: string,
    private readonly lockPath: string,
    private readonly root: string,
  ) {}

  static async open(opts: OAuthStoreOptions): Promise<OAuthStore> {
    const keyring = opts.keyring ?? (await openKeyring(opts.dataDir, opts.env ?? process.env));
    const paths = vaultPaths(opts.dataDir);
    return new OAuthStore(deriveKey(keyring.dataKey, "mcphub oauth v1"), paths.oauth, paths.oauthLock, paths.root);
  }

  /** The record of one server, or undefined. Cheap when the file has not changed. */
  async get(server: string): Promise<OAuthRecord | undefined> {
    const data = await this.load();
    return Object.hasOwn(data.servers, server) ? data.servers[server] : undefined;
  }

  /** Names of the servers that have a record, sorted. */
  async servers(): Promise<string[]> {
    return Object.keys((await this.load()).servers).sort();
  }

  /** Read-modify-write of one record under the lock; returns the record as stored. */
  async update(server: string, mutate: RecordUpdate): Promise<OAuthRecord | undefined> {
    let result: OAuthRecord | undefined;
    let changed = false;
    await ensurePrivateDir(this.root);
    await withLockFile(this.lockPath, async () => {
      const data = await this.load(true);
      const current = Object.hasOwn(data.servers, server) ? data.servers[server] : undefined;
      const next = mutate(current);
      if (next === false) {
        result = current;
        return;
      }
      if (next === undefined) {
        if (current === undefined) return;
        delete data.servers[server];
      } else {
        result = { ...next, updated_at: Date.now(), generation: (current?.generation ?? 0) + 1 };
        data.servers[server] = result;
      }
      await writeSealedFile(this.path, this.key, MAGIC, BINDING, Buffer.from(JSON.stringify(data), "utf8"));
      this.cache = undefined;
      changed = true;
    });
    if (changed) this.emit(server);
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

  private emit(server: string): void {
    for (const l of [...this.listeners]) l(server);
  }

  private async load(fresh = false): Promise<StoreData> {
    let st;
    try {
      st = await stat(this.path);
    } catch (err) {
      if (isErrno(err, "ENOENT")) return { v: 1, servers: Object.create(null) as StoreData["servers"] };
      throw err;
    }
    const c = this.cache;
    if (!fresh && c && c.ino === st.ino && c.size === st.size && c.mtimeMs === st.mtimeMs) return c.data;
    const read = await readSealedJson(this.path, this.key, MAGIC, BINDING, StoreSchema, `the OAuth store ${this.path}`);
    if (!read) return { v: 1, servers: Object.create(null) as StoreData["servers"] };
    // A null-prototype map: a lookup by server name never reaches Object.prototype.
    const servers = Object.assign(Object.create(null) as StoreData["servers"], read.data.servers);
    const data: StoreData = { v: 1, servers };
    this.cache = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, data };
    return data;
  }
}
