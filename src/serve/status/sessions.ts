// Browser sessions of the status page: a random id in an HttpOnly, SameSite=Strict cookie, kept in
// memory only by its SHA-256 (a daemon restart signs everyone out), each with its own CSRF token
// that every state-changing request must echo in a header. The cookie name carries the port:
// cookies are not isolated by port, and two daemons on one host must not overwrite each other's.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const SESSION_IDLE_MS = 12 * 3_600_000;
export const SESSION_MAX_MS = 7 * 24 * 3_600_000;
const MAX_SESSIONS = 256;

export interface PageSession {
  /** Signed in through a one-time link (true) or issued to a loopback browser while no token exists. */
  signedIn: boolean;
  csrf: string;
  created: number;
  lastSeen: number;
}

function hash(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("hex");
}

export class PageSessions {
  readonly cookieName: string;
  private readonly byHash = new Map<string, PageSession>();

  constructor(
    port: number,
    private readonly now: () => number = Date.now,
  ) {
    this.cookieName = `mcphub_session_${port}`;
  }

  /** A new session and the Set-Cookie header that hands it to the browser. */
  create(signedIn: boolean): { session: PageSession; setCookie: string } {
    this.sweep();
    if (this.byHash.size >= MAX_SESSIONS) {
      // The least recently used goes first.
      let oldest: [string, PageSession] | undefined;
      for (const e of this.byHash) if (!oldest || e[1].lastSeen < oldest[1].lastSeen) oldest = e;
      if (oldest) this.byHash.delete(oldest[0]);
    }
    const id = randomBytes(32).toString("base64url");
    const t = this.now();
    const session: PageSession = { signedIn, csrf: randomBytes(32).toString("base64url"), created: t, lastSeen: t };
    this.byHash.set(hash(id), session);
    const maxAge = Math.floor(SESSION_MAX_MS / 1000);
    return { session, setCookie: `${this.cookieName}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}` };
  }

  /** The live session named by the request's cookie, touched; undefined when none or expired. */
  fromRequest(req: IncomingMessage): PageSession | undefined {
    const id = readCookie(req.headers.cookie, this.cookieName);
    if (!id) return undefined;
    const key = hash(id);
    const s = this.byHash.get(key);
    if (!s) return undefined;
    const t = this.now();
    if (t - s.lastSeen > SESSION_IDLE_MS || t - s.created > SESSION_MAX_MS) {
      this.byHash.delete(key);
      return undefined;
    }
    s.lastSeen = t;
    return s;
  }

  /** Ends the request's session (sign out); returns the Set-Cookie header that clears it. */
  destroy(req: IncomingMessage): string {
    const id = readCookie(req.headers.cookie, this.cookieName);
    if (id) this.byHash.delete(hash(id));
    return `${this.cookieName}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
  }

  /** Whether `presented` is this session's CSRF token (constant time). */
  static csrfMatches(session: PageSession, presented: string | undefined): boolean {
    if (!presented) return false;
    const a = Buffer.from(session.csrf);
    const b = Buffer.from(presented);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  get size(): number {
    return this.byHash.size;
  }

  private sweep(): void {
    const t = this.now();
    for (const [k, s] of this.byHash) {
      if (t - s.lastSeen > SESSION_IDLE_MS || t - s.created > SESSION_MAX_MS) this.byHash.delete(k);
    }
  }
}

/** One cookie's value from a Cookie header (the first occurrence). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const v = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{43}$/.test(v) ? v : undefined;
    }
  }
  return undefined;
}
