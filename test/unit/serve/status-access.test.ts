// The status page's access pieces on their own: one-time sign-in links (single use, short-lived,
// stored hashed), browser sessions (cookie, expiry, CSRF), the browser opener, and the page
// itself (no data, no secrets, a CSP that admits exactly its own script and style).
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pickOpener } from "../../../src/util/browser.js";
import { createLoginSecret, LOGIN_LINK_TTL_MS, redeemLoginSecret, writeLaunchFile } from "../../../src/serve/status/login.js";
import { NOTE_CSP, PAGE_CSP, PAGE_HTML } from "../../../src/serve/status/page.js";
import { PageSessions, readCookie, SESSION_IDLE_MS } from "../../../src/serve/status/sessions.js";

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "mcphub-status-"));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe("one-time sign-in links", () => {
  it("work exactly once, and only their hash is on disk (0600 in a 0700 directory)", async () => {
    const { secret } = await createLoginSecret(dataDir);
    expect(secret).toMatch(/^mcphub_login_[A-Za-z0-9_-]{43}$/);
    const dir = join(dataDir, "login");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dir);
    expect(files).toEqual([createHash("sha256").update(secret).digest("hex")]);
    expect(statSync(join(dir, files[0] as string)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, files[0] as string), "utf8")).not.toContain(secret);
    const results = await Promise.all([1, 2, 3, 4].map(() => redeemLoginSecret(dataDir, secret)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await redeemLoginSecret(dataDir, secret)).toBe(false);
  });

  it("expire, and refuse anything malformed or unknown without throwing", async () => {
    const now = Date.now();
    const { secret } = await createLoginSecret(dataDir, { now });
    expect(await redeemLoginSecret(dataDir, secret, now + LOGIN_LINK_TTL_MS + 1)).toBe(false);
    for (const bad of ["", "x", "../../etc/passwd", `mcphub_login_${"a".repeat(42)}`, `mcphub_login_${"a".repeat(43)}`]) {
      expect(await redeemLoginSecret(dataDir, bad)).toBe(false);
    }
  });

  it("sweep expired links and old launch files when a new link is made", async () => {
    const old = await createLoginSecret(dataDir, { now: Date.now() - 10 * LOGIN_LINK_TTL_MS, ttlMs: 1000 });
    const launch = await writeLaunchFile(dataDir, `http://127.0.0.1:1/login?t=${old.secret}`);
    expect(statSync(launch).mode & 0o777).toBe(0o600);
    const past = new Date(Date.now() - 2 * LOGIN_LINK_TTL_MS);
    utimesSync(launch, past, past);
    const fresh = await createLoginSecret(dataDir);
    expect(readdirSync(join(dataDir, "login"))).toEqual([createHash("sha256").update(fresh.secret).digest("hex")]);
  });

  it("launch files send the browser on with the link escaped", async () => {
    const path = await writeLaunchFile(dataDir, 'http://127.0.0.1:1/login?t=a&b="<x>');
    const text = readFileSync(path, "utf8");
    expect(text).toContain('url=http://127.0.0.1:1/login?t=a&amp;b=&quot;&lt;x>');
    expect(text).not.toContain('"<x>');
  });
});

function req(cookie?: string): IncomingMessage {
  return { headers: cookie === undefined ? {} : { cookie } } as IncomingMessage;
}

describe("page sessions", () => {
  it("hand out an HttpOnly SameSite=Strict cookie named by port, found again by its value", () => {
    const pages = new PageSessions(9820);
    const { session, setCookie } = pages.create(true);
    expect(setCookie).toMatch(/^mcphub_session_9820=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=\d+$/);
    const value = setCookie.split(";")[0] as string;
    expect(pages.fromRequest(req(`other=1; ${value}`))).toBe(session);
    expect(pages.fromRequest(req(value.replace(/.$/, (c) => (c === "A" ? "B" : "A"))))).toBeUndefined();
    expect(new PageSessions(9821).fromRequest(req(value))).toBeUndefined();
    expect(pages.destroy(req(value))).toContain("Max-Age=0");
    expect(pages.fromRequest(req(value))).toBeUndefined();
  });

  it("expire when idle", () => {
    let now = 1_000_000;
    const pages = new PageSessions(1, () => now);
    const value = pages.create(false).setCookie.split(";")[0] as string;
    now += SESSION_IDLE_MS - 1;
    expect(pages.fromRequest(req(value))).toBeDefined();
    now += SESSION_IDLE_MS + 1;
    expect(pages.fromRequest(req(value))).toBeUndefined();
  });

  it("check the CSRF token exactly", () => {
    const { session } = new PageSessions(1).create(true);
    expect(PageSessions.csrfMatches(session, session.csrf)).toBe(true);
    expect(PageSessions.csrfMatches(session, undefined)).toBe(false);
    expect(PageSessions.csrfMatches(session, "")).toBe(false);
    expect(PageSessions.csrfMatches(session, `${session.csrf}x`)).toBe(false);
    expect(PageSessions.csrfMatches(session, session.csrf.toUpperCase())).toBe(session.csrf === session.csrf.toUpperCase());
  });

  it("read only well-formed cookie values", () => {
    expect(readCookie("a=b; mcphub_session_1=short", "mcphub_session_1")).toBeUndefined();
    expect(readCookie(undefined, "x")).toBeUndefined();
  });
});

describe("the page", () => {
  it("holds no data and a CSP admitting exactly its own inline script and style", () => {
    const script = /<script>([\s\S]*)<\/script>/.exec(PAGE_HTML)?.[1] ?? "";
    const style = /<style>([\s\S]*?)<\/style>/.exec(PAGE_HTML)?.[1] ?? "";
    const b64 = (t: string) => createHash("sha256").update(t).digest("base64");
    expect(PAGE_CSP).toContain(`script-src 'sha256-${b64(script)}'`);
    expect(PAGE_CSP).toContain(`style-src 'sha256-${b64(style)}'`);
    expect(NOTE_CSP).toContain(`style-src 'sha256-${b64(style)}'`);
    expect(PAGE_CSP).toContain("frame-ancestors 'none'");
    // Nothing loaded from elsewhere (the one absolute URL is the SVG namespace name).
    expect(PAGE_HTML.replaceAll("http://www.w3.org/2000/svg", "")).not.toMatch(/https?:\/\/|@import|url\(/);
    expect(PAGE_HTML).not.toContain("innerHTML");
    expect(Buffer.byteLength(PAGE_HTML)).toBeLessThan(32 * 1024);
  });
});

describe("the browser opener", () => {
  it("prefers $BROWSER, needs a graphical session on Linux", () => {
    expect(pickOpener({ BROWSER: "firefox:chromium" }, "linux")).toMatchObject({ command: "firefox" });
    expect(pickOpener({}, "linux")).toEqual({ why: "no graphical session here" });
    expect(pickOpener({ DISPLAY: ":0" }, "linux")).toMatchObject({ command: "xdg-open" });
    expect(pickOpener({}, "darwin")).toMatchObject({ command: "open" });
  });
});
