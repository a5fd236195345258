// Per-agent bearer tokens for the HTTP daemon. A token is `mcphub_` + 32 random bytes (base64url);
// only its SHA-256 is stored, in the store's `tokens` document (`<dataDir>/tokens.json`, 0600, in
// the files store; a row in PostgreSQL), so the store does not hold usable secrets. The CLI writes
// (create, revoke) while daemons read (verify on every request): writers read-modify-write under
// the store's lock, and readers re-parse only when the document's version changed (one stat per
// request on the files, nothing at all on PostgreSQL, whose copy in memory LISTEN/NOTIFY keeps
// current), so a revoke takes effect on every daemon's next request without a restart.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import { z } from "zod";
import { storeOf, type Docs, type Store } from "../store/index.js";

export interface TokenInfo {
  id: string;
  agent: string;
  /** ISO time of creation. */
  created: string;
  /** The token's last four characters, to tell tokens apart (24 of its 256 bits). */
  last4: string;
  /** ISO time of revocation; a revoked token never verifies. */
  revoked?: string;
}

const TOKEN_PREFIX = "mcphub_";
const TOKEN_RE = /^mcphub_[A-Za-z0-9_-]{43}$/;
const AGENT_RE = /^[^\u0000-\u001f\u007f]{1,128}$/;

const storedSchema = z.object({
  id: z.string().regex(/^tok_[0-9a-f]{12}$/),
  agent: z.string().min(1),
  created: z.string(),
  last4: z.string(),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  revoked: z.string().optional(),
});
const fileSchema = z.object({ version: z.literal(1), tokens: z.array(storedSchema) });

type StoredToken = z.infer<typeof storedSchema>;
type TokenFile = z.infer<typeof fileSchema>;

const KEY = "tokens";

/** The token of an `Authorization: Bearer <token>` header, if that is what it holds. */
export function bearerFrom(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1];
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

function info(t: StoredToken): TokenInfo {
  return { id: t.id, agent: t.agent, created: t.created, last4: t.last4, ...(t.revoked ? { revoked: t.revoked } : {}) };
}

export class TokenStore {
  private readonly docs: Docs;
  /** What the file is called, for messages. */
  private readonly file: string;
  /** Cached parse of the document and the version it was read at. */
  private cache: { key: string; tokens: StoredToken[]; hashes: Buffer[] } | undefined;

  private constructor(store: Store) {
    this.docs = store.docs("tokens");
    this.file = store.kind === "files" ? join(store.where, "tokens.json") : `the tokens of ${store.where}`;
  }

  /** The tokens of a data directory (the files store) or of a store. */
  static open(where: string | Store): TokenStore {
    return new TokenStore(storeOf(where));
  }

  /** Creates a token for `agent`. The plaintext is returned once and never stored. */
  async create(agent: string): Promise<{ token: string; info: TokenInfo }> {
    if (!AGENT_RE.test(agent)) throw new Error("agent name must be 1-128 characters without control characters");
    const token = TOKEN_PREFIX + randomBytes(32).toString("base64url");
    const stored: StoredToken = {
      id: `tok_${randomBytes(6).toString("hex")}`,
      agent,
      created: new Date().toISOString(),
      last4: token.slice(-4),
      hash: sha256(token).toString("hex"),
    };
    await this.update((f) => {
      f.tokens.push(stored);
    });
    return { token, info: info(stored) };
  }

  /** Every token (revoked ones included, marked), optionally for one agent. Never secrets. */
  async list(agent?: string): Promise<TokenInfo[]> {
    const { tokens } = await this.current();
    return tokens.filter((t) => agent === undefined || t.agent === agent).map(info);
  }

  /** Revokes the token with this id, or every live token of this agent. Returns how many. */
  async revoke(agentOrId: string): Promise<number> {
    let n = 0;
    const now = new Date().toISOString();
    await this.update((f) => {
      for (const t of f.tokens) {
        if (t.revoked === undefined && (t.id === agentOrId || t.agent === agentOrId)) {
          t.revoked = now;
          n++;
        }
      }
    });
    return n;
  }

  /**
   * The agent a bearer token belongs to, or undefined (unknown, malformed or revoked). The hash is
   * compared against every live token in constant time, without stopping at a match.
   */
  async verify(bearer: string): Promise<{ agent: string; id: string } | undefined> {
    return this.match(await this.current(), bearer);
  }

  /**
   * One look at the tokens per request: whether tokens are required at all and, when a bearer
   * was presented, whose it is. Tokens are required once any token has ever been created, revoked
   * ones included: revoking the last token must never reopen the daemon to anonymous callers.
   */
  async authenticate(bearer: string | undefined): Promise<{ required: boolean; who?: { agent: string; id: string } }> {
    const state = await this.current();
    const required = state.tokens.length > 0;
    if (!required || bearer === undefined) return { required };
    const who = this.match(state, bearer);
    return who ? { required, who } : { required };
  }

  private match({ tokens, hashes }: { tokens: StoredToken[]; hashes: Buffer[] }, bearer: string): { agent: string; id: string } | undefined {
    const presented = sha256(bearer);
    let found: StoredToken | undefined;
    tokens.forEach((t, i) => {
      const h = hashes[i] as Buffer;
      if (timingSafeEqual(presented, h) && t.revoked === undefined) found = t;
    });
    return found && TOKEN_RE.test(bearer) ? { agent: found.agent, id: found.id } : undefined;
  }

  /** Whether any live (unrevoked) token exists: the daemon then requires one on every request. */
  async hasAny(): Promise<boolean> {
    const { tokens } = await this.current();
    return tokens.some((t) => t.revoked === undefined);
  }

  /** The tokens, re-parsed only when the document changed since the last read. */
  private async current(): Promise<{ tokens: StoredToken[]; hashes: Buffer[] }> {
    // The mirror: a synchronous stat of tokens.json on the files (the asynchronous one, plus an
    // exception per request while no token file exists, was the largest single item in the
    // daemon's CPU profile), the copy in memory on PostgreSQL.
    const entry = this.docs.mirror().peek(KEY);
    const key = entry ? entry.version : "absent";
    if (this.cache?.key === key) return this.cache;
    const f = entry ? this.parse(entry.bytes()) : { version: 1 as const, tokens: [] };
    this.cache = { key, tokens: f.tokens, hashes: f.tokens.map((t) => Buffer.from(t.hash, "hex")) };
    return this.cache;
  }

  private parse(bytes: Buffer | undefined): TokenFile {
    if (bytes === undefined) return { version: 1, tokens: [] };
    let raw: unknown;
    try {
      raw = JSON.parse(bytes.toString("utf8"));
    } catch {
      throw new Error(`${this.file} is not valid JSON; restore it from a backup or remove it and create new tokens`);
    }
    const parsed = fileSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${this.file}: ${issue ? `${issue.path.join(".") || "file"}: ${issue.message}` : "unexpected content"}; remove it and create new tokens`);
    }
    return parsed.data;
  }

  /** Read-modify-write under the store's lock, replacing the document atomically. */
  private async update(change: (f: TokenFile) => void): Promise<void> {
    await this.docs.update(KEY, (current) => {
      const f = this.parse(current);
      change(f);
      return { write: Buffer.from(`${JSON.stringify(f, null, 2)}\n`, "utf8"), value: undefined };
    });
    this.cache = undefined;
  }
}
