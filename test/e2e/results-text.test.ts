// Stored results a model can read and search, end to end through `mcphub mcp serve` with the SDK
// client: text pages of a 5 MB multi-byte text reassemble it exactly, find locates a line and its
// cursor leads to it, images are listed and fetched byte-exactly, v1 pages are sent once and still
// read by local-agent's parser, a pathological pattern is stopped at the time bound, and every
// management tool refuses an oversized argument in a short answer.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, startGateway, tempHome, text, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";
import { fixtureCases, projectFixture, projectPage, projectReceipt } from "../helpers/local-agent.js";
import { reassemble } from "../helpers/page-chain.js";
// @ts-expect-error -- a plain .mjs fixture module without types
import { logText, pictureBytes } from "../fixtures/documents-text.mjs";

const node = process.execPath;
const DOCUMENTS = join(FIXTURES, "documents.mjs");
const logOf = logText as (count: number, needle?: string, needleAt?: number) => string;
const pictureOf = pictureBytes as (n: number) => Buffer;

/** The one JSON document of a text-view answer (sent once, in the text block). */
function answer(r: CallToolResult): Record<string, unknown> {
  expect(r.isError).toBeFalsy();
  expect(r.structuredContent).toBeUndefined();
  expect(r.content).toHaveLength(1);
  return JSON.parse(text(r)) as Record<string, unknown>;
}

function wire(r: CallToolResult): number {
  return Buffer.byteLength(JSON.stringify(r), "utf8");
}

/**
 * A gateway in front of the documents fixture for one describe block, started before its tests and
 * closed after them; `extra` adds config keys.
 */
function documentsGateway(extra: Record<string, unknown> = {}): () => GatewayClient {
  let home: TempHome | undefined;
  let gw: GatewayClient | undefined;
  beforeAll(async () => {
    home = tempHome();
    const cfg = home.writeConfig({ expose: "lazy", ...extra, servers: { docs: { command: node, args: [DOCUMENTS] } } });
    gw = await startGateway(home, cfg);
    await waitReady(gw, ["docs"]);
  });
  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });
  return () => {
    if (!gw) throw new Error("gateway not started");
    return gw;
  };
}

describe("reading stored results as text", () => {
  const gateway = documentsGateway({ find_timeout: "2s" });

  it("a 5 MB multi-byte text reads back exactly from its text pages, and find leads to line 70,000", async () => {
    const lines = 80_000;
    const original = logOf(lines, "NEEDLE", 70_000);
    expect(Buffer.byteLength(original)).toBeGreaterThan(5 * 1024 * 1024);
    const receipt = (await gateway().call("mcphub_call_tool", { tool: "docs__log", arguments: { lines, needle: "NEEDLE", needleAt: 70_000 } })).structuredContent as Record<string, unknown>;
    expect(receipt).toMatchObject({ status: "stored", totalLines: lines, totalChars: [...original].length, kinds: { text: 1 } });
    expect(String(receipt.nextAction)).toContain('format: "text"');
    expect(String(receipt.nextAction)).toContain("find");
    const callId = String(receipt.callId);

    let cursor = 0;
    const parts: string[] = [];
    let pages = 0;
    let wireBytes = 0;
    for (;;) {
      const r = await gateway().call("mcphub_get_result", { callId, format: "text", cursor });
      wireBytes += wire(r);
      expect(wire(r)).toBeLessThanOrEqual(32 * 1024);
      const page = answer(r);
      expect(page).toMatchObject({ status: "ok", callId, format: "text", cursor, totalChars: receipt.totalChars, totalLines: lines });
      expect(Buffer.byteLength(String(page.text))).toBeLessThanOrEqual(8192);
      parts.push(String(page.text));
      pages++;
      if (page.done) break;
      // Pages end at a line end whenever one falls in their second half (here: always).
      expect(String(page.text).endsWith("\n")).toBe(true);
      cursor = Number(page.nextCursor);
    }
    expect(parts.join("")).toBe(original);
    expect(pages).toBeGreaterThan(600);
    // Sent once: besides the text itself (JSON-escaped, as a string in the JSON document that is
    // the text block), each page adds only a small envelope.
    const escaped = Buffer.byteLength(JSON.stringify(JSON.stringify(original)));
    expect(wireBytes / escaped).toBeLessThan(1.1);

    const found = answer(await gateway().call("mcphub_get_result", { callId, find: "NEEDLE", context: 1 }));
    expect(found).toMatchObject({ status: "ok", truncated: false, totalLines: lines });
    const matches = found.matches as { line: number; cursor: number; text: string; before: string[]; after: string[] }[];
    expect(matches).toHaveLength(1);
    expect(matches[0]).toMatchObject({ line: 70_000, text: "line 70000: here is the NEEDLE you want" });
    expect(matches[0]?.before).toEqual([original.split("\n")[69_998]]);
    const there = answer(await gateway().call("mcphub_get_result", { callId, format: "text", cursor: matches[0]?.cursor }));
    expect(String(there.text).startsWith("line 70000: here is the NEEDLE you want\n")).toBe(true);
    expect(there.line).toBe(70_000);

    const range = answer(await gateway().call("mcphub_get_result", { callId, lines: "69999-70001" }));
    expect(range).toMatchObject({ lines: "69999-70001", totalLines: lines });
    expect(range.text).toBe(`${original.split("\n").slice(69_998, 70_001).join("\n")}\n`);

    // Lines end with "here <line % 97>": 79,990-79,992 end with 62-64.
    const regex = answer(await gateway().call("mcphub_get_result", { callId, find: "/^line 7999\\d: .*here (6[2-4])$/", max_matches: 5 }));
    expect((regex.matches as { line: number }[]).map((m) => m.line)).toEqual([79_990, 79_991, 79_992]);
  });

  it("an image block is listed on the first text page and fetched byte-exactly", async () => {
    const size = 50_000;
    const receipt = (await gateway().call("mcphub_call_tool", { tool: "docs__picture", arguments: { bytes: size } })).structuredContent as Record<string, unknown>;
    expect(receipt).toMatchObject({ status: "stored", kinds: { text: 2, image: 1 } });
    expect(String(receipt.nextAction)).toContain("block");
    const callId = String(receipt.callId);
    const first = answer(await gateway().call("mcphub_get_result", { callId, format: "text" }));
    expect(first.text).toBe("A caption before the picture.\nA note after it.");
    expect(first.blocks).toEqual([{ index: 1, type: "image", mimeType: "image/png", bytes: size }]);
    const parts: Buffer[] = [];
    let cursor = 0;
    for (;;) {
      const page = answer(await gateway().call("mcphub_get_result", { callId, block: 1, cursor }));
      expect(page).toMatchObject({ status: "ok", block: 1, mimeType: "image/png", cursor, totalBytes: size });
      parts.push(Buffer.from(String(page.data), "base64"));
      if (page.done) break;
      cursor = Number(page.nextCursor);
    }
    expect(Buffer.concat(parts).equals(pictureOf(size))).toBe(true);
    expect(answer(await gateway().call("mcphub_get_result", { callId, block: 0 }))).toMatchObject({ status: "no_such_block", reason: 'content[0] is text: read it with format: "text"' });
    expect(answer(await gateway().call("mcphub_get_result", { callId, block: 7 }))).toMatchObject({ status: "no_such_block" });
  });

  it("a result with only structuredContent reads as its pretty JSON", async () => {
    const receipt = (await gateway().call("mcphub_call_tool", { tool: "docs__table", arguments: { rows: 2000 } })).structuredContent as Record<string, unknown>;
    const callId = String(receipt.callId);
    const expected = JSON.stringify({ rows: Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: i % 2 ? ["odd"] : [] })) }, null, 2);
    let all = "";
    let cursor = 0;
    for (;;) {
      const page = answer(await gateway().call("mcphub_get_result", { callId, format: "text", cursor }));
      expect(page.source).toBe("structuredContent");
      all += String(page.text);
      if (page.done) break;
      cursor = Number(page.nextCursor);
    }
    expect(all).toBe(expected);
  });

  it("regex errors are clear, and a catastrophic pattern is stopped at find_timeout while the gateway keeps serving", async () => {
    const receipt = (await gateway().call("mcphub_call_tool", { tool: "docs__log", arguments: { lines: 20_000, needle: "a".repeat(40), needleAt: 5 } }))
      .structuredContent as Record<string, unknown>;
    const callId = String(receipt.callId);
    const bad = await gateway().call("mcphub_get_result", { callId, find: "/(unclosed/" });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/^find: invalid regular expression \(.*\); fix it, or send plain text/);
    // Literal text is searched literally: parentheses and dots are not a pattern.
    expect(answer(await gateway().call("mcphub_get_result", { callId, find: "(no such thing." })).matches).toEqual([]);
    // On line 5's forty a's, (a+)+ followed by a failing end tries 2^40 splits: only the bound ends it.
    const slow = answer(await gateway().call("mcphub_get_result", { callId, find: "/(a+)+$/" }));
    expect(slow).toMatchObject({ status: "timeout", truncated: true });
    expect(String(slow.reason)).toContain("2 s");
    expect(String(slow.hint)).toMatch(/nested quantifiers/);
    const after = answer(await gateway().call("mcphub_get_result", { callId, find: "line 19999:" }));
    expect((after.matches as { line: number }[])[0]?.line).toBe(19_999);
  });
});

describe("contract v1 pages", () => {
  const gateway = documentsGateway();

  it("local-agent's contract fixtures project as its index expects", () => {
    const cases = fixtureCases();
    expect(cases.length).toBe(5);
    for (const c of cases) {
      const p = projectFixture(c);
      expect({ id: c.id, domain: p.domain, digest: p.digest }).toEqual({ id: c.id, domain: c.expected.projection.domain, digest: c.expected.projection.digest });
    }
  });

  it("real receipts and pages project like the fixtures, and each page is sent once", async () => {
    const call = await gateway().call("mcphub_call_tool", { tool: "docs__log", arguments: { lines: 3000 } });
    expect(projectReceipt(call, { server: "docs", tool: "log" })).toMatchObject({ domain: "attention", digest: { kind: "mcphub_stored" } });
    const callId = String((call.structuredContent as { callId: string }).callId);
    const { bytes } = await reassemble(async (cursor) => {
      const page = await gateway().call("mcphub_get_result", { callId, cursor });
      const p = projectPage(page, callId, cursor);
      expect(p.domain).toBe("succeeded");
      // The base64 page travels once, in structuredContent; the text block only says what it is.
      expect(text(page)).not.toContain(String((page.structuredContent as { data: string }).data).slice(0, 64));
      expect(Buffer.byteLength(text(page))).toBeLessThan(300);
      return page;
    }, callId);
    expect(JSON.parse(bytes.toString("utf8"))).toEqual({ content: [{ type: "text", text: logOf(3000) }] });
    const mismatch = await gateway().call("mcphub_get_result", { callId, cursor: 0 });
    expect(projectPage(mismatch, "another-id", 0).domain).toBe("failed");
  });
});

describe("oversized arguments", () => {
  const huge = "x".repeat(5 * 1024 * 1024);
  const gateway = documentsGateway();

  const cases: [string, Record<string, unknown>][] = [
    ["mcphub_list_servers", { junk: huge }],
    ["mcphub_search_tools", { query: huge }],
    ["mcphub_search_tools", { queries: ["ok", huge] }],
    ["mcphub_describe_tool", { tool: huge }],
    ["mcphub_describe_tool", { tool: "docs__log", server: huge }],
    ["mcphub_resolve_tool", { query: huge }],
    ["mcphub_call_tool", { tool: huge }],
    ["mcphub_call_tool", { tool: "docs__echo", arguments: { [huge]: 1 } }],
    ["mcphub_get_result", { callId: huge }],
    ["mcphub_get_result", { callId: "abc", find: huge }],
    ["mcphub_get_result", { callId: "abc", lines: huge }],
    ["mcphub_poll_result", { callId: huge }],
    ["mcphub_stats", { since: huge }],
    ["mcphub_stats", { [huge]: 1 }],
  ];
  for (const [tool, args] of cases) {
    const field = Object.keys(args).map((k) => (k.length > 40 ? "<5 MiB name>" : k)).join(",");
    it(`${tool} {${field}} is answered briefly without quoting it`, async () => {
      const r = await gateway().call(tool, args);
      expect(wire(r)).toBeLessThan(2048);
      expect(JSON.stringify(r)).not.toContain("x".repeat(200));
      if (r.isError) expect(text(r).length).toBeGreaterThan(10);
    });
  }

  it("the session still works afterwards", async () => {
    const r = await gateway().call("mcphub_call_tool", { tool: "docs__echo", arguments: { message: "still here" } });
    expect(text(r)).toBe("echo: still here");
  });
});

describe("management answers over the response budget", () => {
  const gateway = documentsGateway({ response_budget: 512 });

  it("are sent once, and still over it become a receipt the same agent can read back as text", async () => {
    // list_servers gives up its descriptions first and stays a document a host can read.
    const servers = await gateway().call("mcphub_list_servers", {});
    expect(wire(servers)).toBeLessThanOrEqual(512);
    expect(servers.structuredContent).toBeUndefined();
    expect(JSON.parse(text(servers))).toMatchObject({ servers: [{ name: "docs", state: "ready" }], total_tools: 5, expose: "lazy" });
    const r = await gateway().call("mcphub_search_tools", { query: "" });
    expect(wire(r)).toBeLessThanOrEqual(512);
    const receipt = r.structuredContent as Record<string, unknown>;
    expect(receipt).toMatchObject({ status: "stored", server: "mcphub", tool: "search_tools" });
    let all = "";
    let cursor = 0;
    for (;;) {
      const page = await gateway().call("mcphub_get_result", { callId: receipt.callId, format: "text", cursor });
      expect(wire(page)).toBeLessThanOrEqual(512);
      const doc = answer(page);
      all += String(doc.text);
      if (doc.done) break;
      cursor = Number(doc.nextCursor);
    }
    // The stored answer is the search result itself: its text block, which holds its JSON.
    expect((JSON.parse(all) as { matches: { namespaced: string }[] }).matches.map((m) => m.namespaced)).toEqual(["docs__echo", "docs__file", "docs__log", "docs__picture", "docs__table"]);
  });
});
