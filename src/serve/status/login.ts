// One-time sign-in links for the status page. `mcphub open` (run by whoever can read the data
// directory, the same person who can create tokens) writes a link; the daemon redeems it once and
// answers with a session cookie. Only the link's SHA-256 is stored, as the name of an empty-ish
// file in `<dataDir>/login/` (0700): redeeming is one unlink, which exactly one request can win,
// so a link works once even with several daemons on the same data directory.
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** How long a link may wait to be opened. */
export const LOGIN_LINK_TTL_MS = 2 * 60_000;

const PREFIX = "mcphub_login_";
const LINK_RE = /^mcphub_login_[A-Za-z0-9_-]{43}$/;

function dirOf(dataDir: string): string {
  return join(dataDir, "login");
}

function fileOf(dataDir: string, secret: string): string {
  return join(dirOf(dataDir), createHash("sha256").update(secret, "utf8").digest("hex"));
}

/** Creates a link secret valid for `ttlMs`; expired ones are swept on the way. */
export async function createLoginSecret(dataDir: string, opts: { ttlMs?: number; now?: number } = {}): Promise<{ secret: string; expires: number }> {
  const now = opts.now ?? Date.now();
  const expires = now + (opts.ttlMs ?? LOGIN_LINK_TTL_MS);
  await mkdir(dirOf(dataDir), { recursive: true, mode: 0o700 });
  await sweepExpired(dataDir, now);
  const secret = PREFIX + randomBytes(32).toString("base64url");
  await writeFile(fileOf(dataDir, secret), JSON.stringify({ expires }), { mode: 0o600, flag: "wx" });
  return { secret, expires };
}

/**
 * Redeems a link secret: true exactly once for a live link, false for anything else (unknown,
 * malformed, already used, expired). Never throws for bad input.
 */
export async function redeemLoginSecret(dataDir: string, secret: string, now: number = Date.now()): Promise<boolean> {
  if (!LINK_RE.test(secret)) return false;
  const file = fileOf(dataDir, secret);
  let expires: number;
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as { expires?: unknown };
    expires = typeof parsed.expires === "number" ? parsed.expires : 0;
  } catch {
    return false;
  }
  try {
    await unlink(file); // the one request that removes it is the one that signs in
  } catch {
    return false;
  }
  return now <= expires;
}

/**
 * A small 0600 HTML file that sends the browser on to `url`: a browser is started with the file's
 * path, not the link, because a process's arguments are readable by every local user while it runs.
 */
export async function writeLaunchFile(dataDir: string, url: string): Promise<string> {
  await mkdir(dirOf(dataDir), { recursive: true, mode: 0o700 });
  const path = join(dirOf(dataDir), `open-${randomBytes(8).toString("hex")}.html`);
  const safe = url.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  const body = `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${safe}"><title>mcphub</title><a href="${safe}">Open the mcphub status page</a>\n`;
  await writeFile(path, body, { mode: 0o600, flag: "wx" });
  return path;
}

async function sweepExpired(dataDir: string, now: number): Promise<void> {
  const dir = dirOf(dataDir);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (/^open-[0-9a-f]{16}\.html$/.test(name)) {
      // A launch file is only needed until the browser has read it.
      await stat(path)
        .then((s) => (now - s.mtimeMs > LOGIN_LINK_TTL_MS ? unlink(path) : undefined))
        .catch(() => undefined);
      continue;
    }
    if (!/^[0-9a-f]{64}$/.test(name)) continue;
    try {
      const s = await stat(path);
      // Files carry their expiry, but a file older than any TTL we hand out is expired anyway.
      if (now - s.mtimeMs > 24 * 3_600_000) await unlink(path);
      else {
        const { expires } = JSON.parse(await readFile(path, "utf8")) as { expires?: number };
        if (typeof expires !== "number" || expires < now) await unlink(path);
      }
    } catch {
      // raced with a redeem or another sweep
    }
  }
}
