import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { buildReceipt, DROP_ORDER, jsonBytes, nextActionFor, pageDocument, pageSize } from "../../../src/gateway/receipts.js";
import { clipUtf8 } from "../../../src/util/text.js";

const fields = (budget: number) => ({
  callId: "3f9a1c2e7b804d5e9f1a2b3c4d5e6f70",
  server: "cortex",
  tool: "status",
  namespaced: "cortex__status",
  downstream: "cortex_status",
  originalBytes: 40960,
  budgetBytes: budget,
  getResultName: "mcphub_get_result",
});

const textView = { source: "text" as const, chars: 5000, lines: 120, kinds: { text: 1 }, blocks: 0 };

const big = (text: string, isError = false): CallToolResult => ({ content: [{ type: "text", text }], ...(isError ? { isError } : {}) });

describe("receipts", () => {
  for (const budget of [32 * 1024, 900, 512]) {
    it(`fit a ${budget}-byte budget, keep the required fields and isError`, () => {
      const r = buildReceipt(fields(budget), big("é😀".repeat(20_000), true));
      expect(jsonBytes(r)).toBeLessThanOrEqual(budget);
      const doc = r.structuredContent as Record<string, unknown>;
      expect(doc).toMatchObject({ status: "stored", callId: fields(budget).callId, originalBytes: 40960, budgetBytes: budget });
      expect(r.isError).toBe(true);
      if (doc.namespaced !== undefined) expect(doc.namespaced).toBe(`${String(doc.server)}__${String(doc.tool)}`);
      if (typeof doc.preview === "string") {
        expect(doc.preview).toBe(doc.preview.toWellFormed());
        expect(doc.preview.endsWith("…")).toBe(true);
      }
    });
  }

  it("keep every optional field and a preview under a roomy budget", () => {
    const doc = buildReceipt(fields(32 * 1024), big("hello world")).structuredContent as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(["status", "callId", "server", "tool", "namespaced", "downstream", "originalBytes", "budgetBytes", "preview", "nextAction"]);
    expect(doc.preview).toBe("hello world");
  });

  it("drop optional fields in the fixed order when space is short", () => {
    // Whatever the budget, a field is present only if every field dropped after it is present too.
    const seen = new Set<string>();
    for (let budget = 250; budget <= 900; budget += 5) {
      const r = buildReceipt({ ...fields(budget), view: textView }, big("x".repeat(5000)));
      const doc = r.structuredContent as Record<string, unknown>;
      expect(doc.status).toBe("stored");
      const present = DROP_ORDER.map((k) => k in doc);
      for (let i = 0; i < DROP_ORDER.length; i++) if (present[i]) expect(present.slice(i)).not.toContain(false);
      seen.add(present.join(","));
    }
    // The sweep really exercised dropping: several different field sets appeared.
    expect(seen.size).toBeGreaterThan(4);
  });

  it("tell a model how to read, search and fetch blocks, and how many lines there are", () => {
    const doc = buildReceipt({ ...fields(32 * 1024), view: { ...textView, kinds: { text: 1, image: 2 }, blocks: 2 } }, big("hello")).structuredContent as Record<string, unknown>;
    expect(doc).toMatchObject({ totalLines: 120, totalChars: 5000, kinds: { text: 1, image: 2 } });
    expect(doc.nextAction).toBe(
      'Read it with mcphub_get_result {callId, format: "text"} following nextCursor, search it with {callId, find: "text or /regex/"}, or fetch a non-text block with {callId, block: N}.',
    );
    expect(nextActionFor("get_result", { source: "none", chars: 0, lines: 0, kinds: { image: 1 }, blocks: 1 })).toBe(
      'Call get_result {callId, format: "text"} to list its blocks, then fetch a non-text block with {callId, block: N}.',
    );
    expect(nextActionFor("get_result", undefined)).toMatch(/cursor 0, then follow nextCursor/);
  });
});

describe("clipUtf8", () => {
  it("never splits a character and marks a cut", () => {
    for (let max = 0; max < 20; max++) {
      const out = clipUtf8("aé😀b😀", max);
      expect(Buffer.byteLength(out)).toBeLessThanOrEqual(Math.max(max, 0));
      expect(out).toBe(out.toWellFormed());
    }
    expect(clipUtf8("short", 100)).toBe("short");
  });
});

describe("pages", () => {
  it("size pages from the budget, at most 8 KiB", () => {
    expect(pageSize(0)).toBe(8192);
    expect(pageSize(32 * 1024)).toBe(8192);
    expect(pageSize(900)).toBe(150);
    expect(pageSize(512)).toBe(21);
  });

  it("describe a page with consistent cursors", () => {
    const doc = pageDocument({ callId: "c", data: Buffer.from("abc"), cursor: 7, totalBytes: 10, mediaType: "application/json" });
    expect(doc).toEqual({ status: "ok", callId: "c", mediaType: "application/json", data: "YWJj", cursor: 7, nextCursor: 10, done: true, totalBytes: 10 });
  });
});
