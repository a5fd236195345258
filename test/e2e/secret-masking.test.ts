// A server that echoes the secret the gateway injected into its environment (from the vault)
// every way it can: isError results, JSON-RPC errors (message and data), results and
// structuredContent (small, and large enough to be stored as a receipt), progress messages, log
// notifications, its instructions, a tool description and stderr. Through a real stdio gateway
// and a real SDK client, by mounted calls, mcphub_call_tool, detached calls and paging, the canary
// never reaches the client, the gateway's stderr, or any file under the data dir.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { LoggingMessageNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doc, FIXTURES, runMcphub, startGateway, tempHome, text, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";

const node = process.execPath;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

/**
 * The bytes of every file under `dir`. A running gateway replaces files by rename (its V8 code
 * cache under ~/.cache/mcphub, written 1.5 s after it starts, goes through a temp file): a file
 * gone between the listing and the read means the walk met a write, so it walks again until one
 * walk reads every file it listed, and the renamed file is read under its new name.
 */
function contentsUnder(dir: string): string[] {
  for (let attempt = 0; ; attempt++) {
    try {
      return filesUnder(dir).map((f) => readFileSync(f).toString("latin1"));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 10) throw err;
    }
  }
}

describe("secrets a server echoes are masked", () => {
  let home: TempHome;
  let gw: GatewayClient;
  const canary = `canary-${createHash("sha256").update(String(Math.random())).digest("hex").slice(0, 24)}`;
  const seen: string[] = [];

  beforeAll(async () => {
    home = tempHome();
    const set = await runMcphub(home, ["vault", "set", "proj/API_KEY"], { input: `${canary}\n` });
    expect(set.code).toBe(0);
    const cfg = home.writeConfig({
      expose: "lazy",
      pin: ["leaky__fail", "leaky__throw", "leaky__show", "leaky__chatty"],
      response_budget: 2048,
      servers: { leaky: { command: node, args: [join(FIXTURES, "leaky-secret.mjs")], vault: "proj" } },
    });
    gw = await startGateway(home, cfg);
    gw.client.fallbackNotificationHandler = async (n) => {
      seen.push(JSON.stringify(n));
    };
    gw.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      seen.push(JSON.stringify(n));
    });
    await gw.client.setLoggingLevel("debug");
    await waitReady(gw, ["leaky"]);
  });
  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  const record = (r: unknown): CallToolResult => {
    seen.push(JSON.stringify(r));
    return r as CallToolResult;
  };
  const callError = async (p: Promise<unknown>): Promise<string> => {
    try {
      const r = await p;
      seen.push(JSON.stringify(r));
      return JSON.stringify(r);
    } catch (err) {
      const s = `${String(err)} ${JSON.stringify((err as { data?: unknown }).data ?? null)}`;
      seen.push(s);
      return s;
    }
  };

  it("in results, errors, receipts, pages, progress, logs, listings, status and stderr", async () => {
    // The server really got the canary (the secret is injected), and really quoted it.
    const failed = record(await gw.call("leaky__fail"));
    expect(failed.isError).toBe(true);
    expect(text(failed)).toBe("upstream API refused key [redacted]: 401 Unauthorized");
    const viaCall = record(await gw.call("mcphub_call_tool", { tool: "leaky__fail", arguments: {} }));
    expect(text(viaCall)).toContain("refused key [redacted]");

    const thrown = await callError(gw.call("leaky__throw"));
    expect(thrown).toContain("invalid credentials [redacted]");
    const thrownVia = await callError(gw.call("mcphub_call_tool", { tool: "leaky__throw", arguments: {} }));
    expect(thrownVia).toContain("[redacted]");

    const shown = record(await gw.call("leaky__show"));
    expect(text(shown)).toBe("config: key=[redacted]");
    expect(shown.structuredContent).toEqual({ key: "[redacted]", "k-[redacted]": true });

    // Large enough to be stored: the receipt and every page read back are masked too.
    const big = record(await gw.call("mcphub_call_tool", { tool: "leaky__show", arguments: { pad: 6000 } }));
    const receipt = doc(big);
    expect(receipt.status).toBe("stored");
    let cursor: number | undefined = 0;
    let all = "";
    while (cursor !== undefined) {
      const page = doc(record(await gw.call("mcphub_get_result", { callId: receipt.callId, format: "text", cursor })));
      all += String(page.text);
      cursor = page.done ? undefined : (page.nextCursor as number);
    }
    expect(all.startsWith("config: key=[redacted]xxx")).toBe(true);
    record(await gw.call("mcphub_get_result", { callId: receipt.callId, find: "key=" }));

    // Detached: the polled result is masked.
    const accepted = doc(record(await gw.call("mcphub_call_tool", { tool: "leaky__fail", arguments: {}, detach: true })));
    let polled: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) {
      const r = record(await gw.call("mcphub_poll_result", { callId: accepted.callId }));
      polled = r.structuredContent ? (r.structuredContent as Record<string, unknown>) : { text: text(r) };
      if (!JSON.stringify(polled).includes("pending")) break;
      await new Promise((res) => setTimeout(res, 25));
    }
    expect(JSON.stringify(polled)).toContain("[redacted]");

    // Progress messages and log notifications.
    const progress: string[] = [];
    record(await gw.client.callTool({ name: "leaky__chatty", arguments: {} }, undefined, { onprogress: (p) => void progress.push(JSON.stringify(p)) }));
    seen.push(...progress);
    expect(progress.join("")).toContain("using [redacted]");

    // Listings: tool descriptions, instructions, and list_servers (state, stderr line).
    const tools = (await gw.client.listTools()).tools;
    seen.push(JSON.stringify(tools));
    expect(tools.find((t) => t.name === "leaky__show")?.description).toContain("uses [redacted]");
    seen.push(gw.client.getInstructions() ?? "");
    record(await gw.call("mcphub_describe_tool", { tool: "leaky__show" }));
    record(await gw.call("mcphub_list_servers"));
    record(await gw.call("mcphub_search_tools", { query: "configuration" }));
    record(await gw.call("mcphub_stats"));
    await new Promise((r) => setTimeout(r, 200));
    expect(seen.some((s) => s.includes("login with [redacted] failed"))).toBe(true);

    seen.push(gw.stderr());
    seen.push(...contentsUnder(home.dir));
    const leaks = seen.filter((s) => s.includes(canary));
    expect(leaks.map((s) => s.slice(Math.max(0, s.indexOf(canary) - 200), s.indexOf(canary) + 50))).toEqual([]);
  });
});
