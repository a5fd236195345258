// The status page as a person sees it: headless Chromium (the Debian package, driven through
// playwright-core) signs in with a one-time link from `mcphub open` and watches a real daemon with
// real downstreams. Checked: the states render, a failing server shows its stderr reason, a state
// change arrives live (server-sent events, no reload, no polling), the Traces card shows the spans a
// refusing collector lost (the operator's only), the Disable and Enable buttons work and are saved
// to the config, no secret is in the page, and a screenshot is saved for review.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../helpers/daemon.js";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/otlp.js";
import { ROOT, runMcphub, tempHome, type TempHome } from "../helpers/gateway.js";
import { sandboxUnavailable } from "../helpers/sandbox.js";
import { gateFile, NOTES_KEY, statusConfig } from "../helpers/status.js";

const sandboxed = (await sandboxUnavailable()) === undefined;

const CHROMIUM = process.env.MCPHUB_CHROMIUM ?? "/usr/bin/chromium";
const OUT = join(ROOT, "test-output");
// The flags the brief's environment needs: no sandbox (root in a container), no network chatter.
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
// What the page shows comes over its event stream, which on a loaded machine takes its time to
// connect and deliver ("connecting…" first): each look at the page gets the bound every page wait
// here has (setDefaultTimeout below), not expect.poll's default of one second.
const PAGE = { timeout: 30_000 };

if (!existsSync(CHROMIUM)) {
  describe("status page in a real browser", () => {
    it.skip(`skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium; .ci/run installs it)`, () => undefined);
  });
} else {
  describe("status page in a real browser (headless Chromium)", () => {
    let home: TempHome;
    let cfg: string;
    let daemon: Daemon;
    let browser: Browser;
    let page: Page;
    let client: Client;
    let token = "";
    let secret = "";
    let collector: OtlpReceiver;
    const row = (server: string) => page.locator(`tr[data-server="${server}"]`);

    beforeAll(async () => {
      home = tempHome();
      // Tracing to a collector that answers 404 off /v1/traces: every send fails, as with a wrong URL.
      collector = await startOtlpReceiver();
      cfg = home.writeConfig(statusConfig(home, { broken: true, sandboxed, otlp: collector.url.replace("/v1/traces", "/v1/elsewhere") }));
      const r = await runMcphub(home, ["--config", cfg, "token", "create", "claude", "--json"]);
      token = String((JSON.parse(r.stdout) as { token: string }).token);
      daemon = await startDaemon(home, cfg);
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
      page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage();
      page.setDefaultTimeout(30_000);
    }, 90_000);
    afterAll(async () => {
      await client?.close().catch(() => undefined);
      await browser?.close();
      await daemon?.stop();
      await collector?.close();
      home?.cleanup();
    });

    it("signs in with the one-time link from `mcphub open` and lands on the clean URL", async () => {
      const r = await runMcphub(home, ["--config", cfg, "open", "--listen", `127.0.0.1:${daemon.port}`, "--no-browser"]);
      expect(r.code).toBe(0);
      const link = r.stdout.trim();
      secret = new URL(link).searchParams.get("t") ?? "";
      expect(secret).toMatch(/^mcphub_login_/);
      await page.goto(link);
      await page.waitForURL(`${daemon.base}/`);
      await expect.poll(() => page.locator("#live").textContent(), PAGE).toBe("live");
      const cookies = await page.context().cookies();
      expect(cookies).toHaveLength(1);
      expect(cookies[0]).toMatchObject({ name: `mcphub_session_${daemon.port}`, httpOnly: true, sameSite: "Strict", path: "/" });
    });

    it("renders every server's state, and the failing one's reason from stderr", async () => {
      await row("everything").and(page.locator('[data-state="ready"]')).waitFor();
      await row("memory").and(page.locator('[data-state="ready"]')).waitFor();
      expect(await row("everything").locator(".badge").textContent()).toBe("live");
      const reason = row("broken").locator(".stderr");
      await reason.waitFor();
      expect(await reason.textContent()).toBe("error: cannot open /srv/notes.db: permission denied");
      expect(await row("broken").locator(".err").textContent()).toContain("process exited with code 1");
      expect(["failed", "starting"]).toContain(await row("broken").locator(".badge").textContent());
      expect(Number(await row("everything").locator("td.num").textContent())).toBeGreaterThan(5);
      // Each stdio server says how it is confined; the details are on hover.
      expect(await row("everything").locator("[data-sandbox]").textContent()).toBe("not sandboxed");
      if (sandboxed) {
        await row("boxed").and(page.locator('[data-state="ready"]')).waitFor();
        const line = row("boxed").locator("[data-sandbox]");
        expect(await line.textContent()).toBe("sandboxed · network none · writes nothing");
        expect(await line.getAttribute("title")).toMatch(/^bubblewrap \d[^\n]*\nnetwork: none\nwrite: nothing\nread: nothing/);
      }
      // Two tables with column headers, and every button named for what it does to which server.
      await expect.poll(() => page.getByRole("table").count(), PAGE).toBe(2);
      expect(await page.getByRole("button", { name: "Disable memory" }).count()).toBe(1);
    });

    it("draws the last hour's calls as they happen, and shows the agent's session", async () => {
      client = new Client({ name: "status-browser-test", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      for (let i = 0; i < 12; i++) await client.callTool({ name: "everything__echo", arguments: { message: `hi ${i}` } });
      await client.callTool({ name: "mcphub_call_tool", arguments: { tool: "everything__echo", arguments: { wrong: 1 } } });
      await client.callTool({ name: "memory__read_graph", arguments: {} });
      // The periodic push (every 5 s) brings the telemetry in; nothing reloads.
      await expect.poll(() => row("everything").locator("td").nth(3).locator(".muted").textContent(), PAGE).toMatch(/^12 calls · 0% errors · 1 refused before reaching the server · last call/);
      expect(await row("everything").locator("svg.chart rect.b").count()).toBeGreaterThan(0);
      expect(await row("everything").locator("svg.chart polyline.p50, svg.chart circle.p50").count()).toBe(1);
      await expect.poll(() => page.locator('tr[data-agent="claude"] td').nth(2).textContent(), PAGE).toBe("1"); // sessions
      // The calls' spans went to a collector that refuses them: the Traces card says they were lost.
      await expect.poll(() => page.locator("[data-traces]").textContent(), PAGE).toBe("0 spans sent · sends failed: is the collector up? · sample 100%");
      const traces = page.locator(".card").filter({ has: page.locator("[data-traces]") });
      expect(await traces.locator(".v").textContent()).toMatch(/^\d+ spans lost$/);
      expect(await traces.locator(".muted").last().textContent()).toBe(collector.url.replace("/v1/traces", "/v1/elsewhere"));
      // The exporter is the operator's business: an agent's token gets no tracing.
      const agentView = (await (await fetch(`${daemon.base}/api/status`, { headers: { Authorization: `Bearer ${token}` } })).json()) as Record<string, unknown>;
      expect(agentView.viewer).toEqual({ kind: "agent", agent: "claude" });
      expect(agentView).not.toHaveProperty("tracing");
    });

    it("shows a server's state change live, without reloading or polling", async () => {
      await page.evaluate(() => {
        (globalThis as unknown as { marker: number }).marker = 42;
      });
      const polled: string[] = [];
      page.on("request", (req) => {
        if (req.url().includes("/api/status") || req.resourceType() === "document") polled.push(req.url());
      });
      expect(await row("notes").getAttribute("data-state")).not.toBe("ready");
      writeFileSync(gateFile(home), "open\n"); // from its next retry on, notes starts
      await row("notes").and(page.locator('[data-state="ready"]')).waitFor({ timeout: 60_000 });
      expect(await row("notes").locator(".badge").textContent()).toBe("live");
      expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(42);
      expect(polled).toEqual([]);
    });

    it("disables a server with a click: saved to the config, applied live; a screenshot is saved", async () => {
      await page.getByRole("button", { name: "Disable memory" }).click();
      await row("memory").and(page.locator('[data-state="disabled"]')).waitFor();
      await expect.poll(() => page.locator("#toast").textContent(), PAGE).toContain("memory disabled (saved to");
      const text = readFileSync(cfg, "utf8");
      expect(text).toMatch(/memory:\n\s+command: \S+\s+# keep me\n\s+args: \[[^\]]+\]\n\s+enabled: false\n/);
      expect(text).toContain("# the reference server");
      expect(await page.getByRole("button", { name: "Enable memory" }).count()).toBe(1);
      mkdirSync(OUT, { recursive: true });
      const light = join(OUT, "status-page.png");
      await page.screenshot({ path: light, fullPage: true });
      await page.emulateMedia({ colorScheme: "dark" });
      const dark = join(OUT, "status-page-dark.png");
      await page.screenshot({ path: dark, fullPage: true });
      await page.emulateMedia({ colorScheme: "light" });
      console.log(`status page screenshots: ${light} ${dark}`);
    });

    it("holds no secret: not the tokens, the link, the cookie or a server's key", async () => {
      const html = await page.content();
      const cookie = (await page.context().cookies())[0]?.value ?? "";
      expect(cookie.length).toBeGreaterThan(20);
      for (const s of [token, secret, cookie, NOTES_KEY]) expect(html).not.toContain(s);
      expect(page.url()).toBe(`${daemon.base}/`);
    });

    it("enables it again, and signs out", async () => {
      await page.getByRole("button", { name: "Enable memory" }).click();
      await row("memory").and(page.locator('[data-state="ready"]')).waitFor({ timeout: 60_000 });
      expect(readFileSync(cfg, "utf8")).toMatch(/enabled: true/);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("alert").getByText("Sign in needed").waitFor();
      await page.reload();
      expect(await page.getByRole("heading", { name: "Sign in needed" }).count()).toBe(1);
    });
  });
}
