// Pure builders for what the result path returns instead of an oversized result: the stored
// receipt (which must itself fit the budget), result pages, and the UTF-8-safe preview.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../catalog/types.js";
import type { Config } from "../config/schema.js";
import { clipUtf8 } from "../util/text.js";
import type { ViewSummary } from "../vault/textview/types.js";

/**
 * The size over which a result is stored and answered with a receipt, or undefined when results
 * always pass through unchanged (`verbatim: true`, or `response_budget: 0`).
 */
export function receiptBudget(config: Pick<Config, "verbatim" | "response_budget">): number | undefined {
  return config.verbatim || config.response_budget === 0 ? undefined : config.response_budget;
}

export const MAX_PAGE_BYTES = 8192;
/** Room a page envelope needs besides its data (Go's figure; verified against the budget below). */
const PAGE_OVERHEAD = 448;
const MAX_PREVIEW_BYTES = 512;

export interface ReceiptFields {
  callId: string;
  server: string;
  tool: string;
  namespaced: string;
  downstream: string;
  originalBytes: number;
  budgetBytes: number;
  getResultName: string;
  /** What the stored result holds (absent: say only how to page it). */
  view?: ViewSummary;
}

/**
 * The one sentence that tells a model how to get at a stored result: as text and by search when
 * it has text, by block when it holds images or other binary content, by pages otherwise.
 */
export function nextActionFor(getResult: string, view: ViewSummary | undefined): string {
  const blocks = view && view.blocks > 0 ? `fetch a non-text block with {callId, block: N}` : "";
  if (view && view.chars > 0) {
    return `Read it with ${getResult} {callId, format: "text"} following nextCursor, search it with {callId, find: "text or /regex/"}${blocks ? `, or ${blocks}` : ""}.`;
  }
  if (blocks) return `Call ${getResult} {callId, format: "text"} to list its blocks, then ${blocks}.`;
  return `Call ${getResult} with this callId and cursor 0, then follow nextCursor until done is true.`;
}

export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

/**
 * Builds the receipt for a stored result. Optional fields are dropped in a fixed order
 * (DROP_ORDER) until it fits; a preview of the first text block is added only when it fits,
 * clipped on a character boundary.
 */
export function buildReceipt(f: ReceiptFields, original: CallToolResult): CallToolResult {
  const nextAction = nextActionFor(f.getResultName, f.view);
  const full: JsonObject = {
    status: "stored",
    callId: f.callId,
    server: f.server,
    tool: f.tool,
    namespaced: f.namespaced,
    downstream: f.downstream,
    originalBytes: f.originalBytes,
    budgetBytes: f.budgetBytes,
    ...(f.view ? { totalLines: f.view.lines, totalChars: f.view.chars, kinds: f.view.kinds } : {}),
    nextAction,
  };
  const isError = original.isError === true;
  const make = (doc: JsonObject, text: string): CallToolResult => ({
    content: [{ type: "text", text }],
    structuredContent: doc,
    ...(isError ? { isError: true } : {}),
  });
  const lines = f.view && f.view.chars > 0 ? `, ${f.view.lines} lines` : "";
  const longText = `Result stored as callId ${f.callId} (${f.originalBytes} bytes${lines}, over the ${f.budgetBytes}-byte response budget). ${nextAction}`;
  const shortText = `Result stored as callId ${f.callId}; read it with ${f.getResultName}.`;
  const fits = (r: CallToolResult) => jsonBytes(r) <= f.budgetBytes;

  let doc = { ...full };
  let text = longText;
  if (!fits(make(doc, text))) text = shortText;
  for (const key of DROP_ORDER) {
    if (fits(make(doc, text))) break;
    const { [key]: _dropped, ...rest } = doc;
    doc = rest;
  }
  const base = make(doc, text);
  const first = firstText(original);
  if (!first || !fits(base)) return base;
  // The preview never exceeds MAX_PREVIEW_BYTES, and each character is at least one byte, so the
  // first MAX_PREVIEW_BYTES + 1 characters decide it: a 50 MB result is never copied or scanned
  // whole. Made well-formed (a lone surrogate becomes U+FFFD) so the preview is valid UTF-8.
  const source = first.slice(0, MAX_PREVIEW_BYTES + 1).toWellFormed();
  // Largest preview (in bytes) that still fits: binary search over the clip length, because JSON
  // escaping makes the serialized growth non-linear in the preview length.
  let lo = 0;
  let hi = Math.min(MAX_PREVIEW_BYTES, Buffer.byteLength(source, "utf8"));
  let best: CallToolResult | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const preview = clipUtf8(source, mid);
    const candidate = make(insertPreview(doc, preview), text);
    if (preview !== "" && fits(candidate)) {
      best = candidate;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best ?? base;
}

/**
 * Optional receipt fields, dropped in this order until the receipt fits its budget: the counts
 * first, then the names a caller already knows, and the guidance (nextAction) nearly last.
 */
export const DROP_ORDER = ["kinds", "totalChars", "downstream", "namespaced", "totalLines", "nextAction", "tool", "server"];

function insertPreview(doc: JsonObject, preview: string): JsonObject {
  // Keep the documented field order: preview sits just before nextAction.
  const { nextAction, ...rest } = doc;
  return { ...rest, preview, ...(nextAction !== undefined ? { nextAction } : {}) };
}

function firstText(result: CallToolResult): string | undefined {
  for (const block of result.content ?? []) {
    if (block.type === "text" && block.text.trim() !== "") return block.text;
  }
  if (result.structuredContent) return JSON.stringify(result.structuredContent);
  return undefined;
}

/** Decoded bytes per page for a response budget (0 = unlimited → the 8 KiB maximum). */
export function pageSize(budget: number): number {
  if (budget === 0) return MAX_PAGE_BYTES;
  return Math.max(1, Math.min(MAX_PAGE_BYTES, Math.floor((budget - PAGE_OVERHEAD) / 3)));
}

export interface PageFields {
  callId: string;
  data: Buffer;
  cursor: number;
  totalBytes: number;
  mediaType: string;
}

export function pageDocument(p: PageFields): JsonObject {
  const nextCursor = p.cursor + p.data.length;
  return {
    status: "ok",
    callId: p.callId,
    mediaType: p.mediaType,
    data: p.data.toString("base64"),
    cursor: p.cursor,
    nextCursor,
    done: nextCursor >= p.totalBytes,
    totalBytes: p.totalBytes,
  };
}
