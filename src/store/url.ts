// The `store:` URL: `postgres://USER@HOST:PORT/DB` (or postgresql://). The password is in the URL
// (`USER:PASSWORD@`), or a vault reference in its query (`?password=vault://PROJECT/KEY`, resolved
// by the caller from the local vault), or left to libpq's own sources (PGPASSWORD, ~/.pgpass).
// Other query parameters (sslmode, ...) go to the driver as they are. Messages only ever show the
// URL without its password (redactStoreUrl).

export interface StoreUrl {
  /** The URL to connect with, without a password. */
  connection: string;
  user: string;
  host: string;
  port: number;
  database: string;
  /** A literal password from the URL. */
  password?: string;
  /** `vault://PROJECT/KEY` from `?password=`, as PROJECT/KEY. */
  passwordRef?: string;
}

/** Parses a store URL; throws an Error that says what is wrong (never quoting a password). */
export function parseStoreUrl(text: string): StoreUrl {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new Error(`must be a URL such as postgres://mcphub@db.example:5432/mcphub (got ${JSON.stringify(redactStoreUrl(text))})`);
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    throw new Error(`must be a postgres:// URL (got a ${u.protocol.replace(/:$/, "")}: URL); leave store out to keep the data directory's files`);
  }
  const user = decodeURIComponent(u.username);
  if (user === "") throw new Error("the URL names no user; write postgres://USER@HOST:PORT/DB");
  if (u.hostname === "") throw new Error("the URL names no host; write postgres://USER@HOST:PORT/DB");
  const database = decodeURIComponent(u.pathname.replace(/^\//, ""));
  if (database === "" || database.includes("/")) throw new Error("the URL names no database; write postgres://USER@HOST:PORT/DB");
  const port = u.port === "" ? 5432 : Number(u.port);
  const out: StoreUrl = { connection: "", user, host: u.hostname.replace(/^\[|\]$/g, ""), port, database };
  if (u.password !== "") out.password = decodeURIComponent(u.password);
  const queryPassword = u.searchParams.get("password");
  if (queryPassword !== null) {
    if (out.password !== undefined) throw new Error("the URL has a password twice (in USER:PASSWORD@ and in ?password=); keep one");
    if (!queryPassword.startsWith("vault://")) {
      throw new Error("?password= takes a vault reference (vault://PROJECT/KEY); a literal password goes in USER:PASSWORD@, or in PGPASSWORD");
    }
    out.passwordRef = queryPassword.slice("vault://".length);
    u.searchParams.delete("password");
  }
  u.password = "";
  out.connection = u.toString();
  return out;
}

/** The URL with any password replaced by `***` (for messages, logs, status). */
export function redactStoreUrl(text: string): string {
  return text
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@?#]*):[^@/?#]*@/i, "$1:***@")
    .replace(/([?&]password=)[^&#]*/i, (_m, p: string) => `${p}***`);
}
