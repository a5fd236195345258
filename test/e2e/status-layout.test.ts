// Issue 24, item 7, in headless Chromium against a real daemon whose servers start on first use:
// at 1,280 and 760 px the page never scrolls sideways (a long vault key path wraps); idle servers
// show the tool counts of their cached catalogue and are told apart from running ones ("0 / 2
// live" on a healthy daemon was wrong); "idle for" counts from the daemon's start; the vault's
// warning is on the page; calls refused before they reach a server (invalid arguments, a policy
// deny) are not that server's errors.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type Daemon } from "../helpers/daemon.js";
import { EVERYTHING, MEMORY, ROOT, runMcphub, tempHome, type TempHome } from "../helpers/gateway.js";

const CHROMIUM = process.env.MCPHUB_CHROMIUM ?? "/usr/bin/chromium";
const OUT = join(ROOT, "test-output");
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

interface ApiServer {
  name: string;
  state: string;
  tools: number;
  catalog: string;
  since: string;
  metrics: { calls: number; errors: number; error_rate: number; refused: number };
}

if (!existsSync(CHROMIUM)) {
  describe("status page layout", () => {
    it.skip(`skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium; .ci/run installs it)`, () => undefined);
  });
} else {
  describe("status page layout and numbers (headless Chromium)", () => {
    let home: TempHome;
    let cfg: string;
    let daemon: Daemon;
    let browser: Browser;
    let page: Page;
    const row = (server: string) => page.locator(`tr[data-server="${server}"]`);
    const api = async () => (await (await fetch(`${daemon.base}/api/status`)).json()) as { mcphub: { started: string }; servers: ApiServer[]; vault: { warning?: string } };

    beforeAll(async () => {
      home = tempHome("mcphub-layout-");
      // A deep data directory: the vault card shows the key file's path, one long unbreakable word.
      const deep = join(home.dir, "a-data-directory-with-a-rather-long-name-for-the-layout-test", "and-another-level-of-folders-below-it", "mcphub-data");
      mkdirSync(deep, { recursive: true });
      home.env.MCPHUB_DATA_DIR = deep;
      cfg = home.writeConfig({
        policy: { deny: ["memory__delete_*"] },
        servers: {
          everything: { command: process.execPath, args: [EVERYTHING, "stdio"] },
          memory: { command: process.execPath, args: [MEMORY] },
        },
      });
      // doctor --probe lists both and fills the catalogue cache: the daemon starts with both idle.
      const probe = await runMcphub(home, ["--config", cfg, "doctor", "--probe"]);
      expect(probe.stdout).toContain("catalogue cached");
      daemon = await startDaemon(home, cfg);
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
      page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      page.setDefaultTimeout(30_000);
      await page.goto(`${daemon.base}/`);
      await row("everything").waitFor();
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await daemon?.stop();
      home?.cleanup();
    });

    it("idle servers show their cached tool counts; idle and running are told apart; idle-for counts from the start", async () => {
      const doc = await api();
      const everything = doc.servers.find((s) => s.name === "everything");
      expect(everything).toMatchObject({ state: "idle", catalog: "cached" });
      expect(everything?.tools).toBeGreaterThan(13);
      // The server has been idle since the daemon started, not since the page first asked.
      expect(Math.abs(Date.parse(everything?.since ?? "") - Date.parse(doc.mcphub.started))).toBeLessThan(2000);
      expect(await row("everything").getAttribute("data-state")).toBe("idle");
      expect(await row("everything").locator("[data-tools]").textContent()).toBe(String(everything?.tools));
      expect(await row("everything").locator('td[data-catalog="cached"] .muted').textContent()).toMatch(/^cached \d+[smh]/);
      expect(await row("everything").locator("[data-state-note]").textContent()).toMatch(/^idle for \d+[smh].*; starts on first use$/);
      const card = page.locator(".card:has([data-servers-summary])");
      expect(await card.locator(".v").textContent()).toBe("2 / 2 available");
      expect(await card.locator("[data-servers-summary]").textContent()).toBe("0 running · 2 idle (start on first use)");
    });

    it("shows the vault's warning from /api/status", async () => {
      const doc = await api();
      expect(doc.vault.warning).toContain("master key is a file");
      const warning = page.locator("[data-vault-warning]");
      await expect.poll(() => warning.isVisible(), { timeout: 30_000 }).toBe(true);
      expect(await warning.textContent()).toBe(`Warning: ${doc.vault.warning}`);
    });

    it("calls refused before they reach the server are not its errors", async () => {
      const client = new Client({ name: "layout-test", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
      try {
        const ok = await client.callTool({ name: "mcphub_call_tool", arguments: { tool: "memory__read_graph", arguments: {} } });
        expect(ok.isError).toBeFalsy();
        const bad = await client.callTool({ name: "mcphub_call_tool", arguments: { tool: "memory__create_entities", arguments: { wrong: 1 } } });
        expect(JSON.stringify(bad)).toContain("invalid_arguments");
        const denied = await client.callTool({ name: "mcphub_call_tool", arguments: { tool: "memory__delete_entities", arguments: { entityNames: ["x"] } } });
        expect(JSON.stringify(denied)).toContain("refused");
      } finally {
        await client.close();
      }
      await expect.poll(async () => (await api()).servers.find((s) => s.name === "memory")?.metrics, { timeout: 30_000 }).toMatchObject({ calls: 1, errors: 0, error_rate: 0, refused: 2 });
      await expect.poll(() => row("memory").locator("[data-calls]").textContent(), { timeout: 30_000 }).toMatch(/^1 call · 0% errors · 2 refused before reaching the server · last call/);
      await row("memory").and(page.locator('[data-state="ready"]')).waitFor();
      expect(await page.locator("[data-servers-summary]").textContent()).toBe("1 running · 1 idle (start on first use)");
    });

    for (const width of [1280, 760]) {
      it(`no horizontal scroll at ${width} px, the long key path wraps; a screenshot is saved`, async () => {
        await page.setViewportSize({ width, height: 900 });
        await page.waitForTimeout(200);
        const size = await page.evaluate(() => {
          const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number }; body: { scrollWidth: number } } }).document;
          return { scroll: doc.documentElement.scrollWidth, client: doc.documentElement.clientWidth, body: doc.body.scrollWidth };
        });
        expect(size.scroll).toBeLessThanOrEqual(size.client);
        expect(size.body).toBeLessThanOrEqual(size.client);
        // Every server row and the vault card fit inside the window. Measured in one look inside
        // the page: it re-renders on every pushed event, and an element found before a push is
        // detached after it (Playwright's boundingBox() then answers null).
        const boxes = await page.evaluate((sels) => {
          const doc = (globalThis as unknown as { document: { querySelector(s: string): { getBoundingClientRect(): { right: number; width: number } } | null } }).document;
          return sels.map((sel) => {
            const r = doc.querySelector(sel)?.getBoundingClientRect();
            return { sel, right: r?.right, width: r?.width };
          });
        }, ['tr[data-server="everything"]', 'tr[data-server="memory"]', "[data-vault-warning]"]);
        for (const box of boxes) {
          expect(box.width, `${box.sel} is shown`).toBeGreaterThan(0);
          expect(box.right, box.sel).toBeLessThanOrEqual(width);
        }
        mkdirSync(OUT, { recursive: true });
        await page.screenshot({ path: join(OUT, `status-page-${width}.png`), fullPage: true });
      });
    }
  });
}
