// mcphub_get_result and mcphub_poll_result. A stored result has two views (product decision 13):
//  - contract v1 (the default): base64 pages of the stored JSON bytes, for programs such as
//    local-agent, whose parser takes the page from structuredContent; the text block is a
//    one-line summary, so the page is not sent twice;
//  - for models: readable text pages (format "text"), line ranges (lines), search (find) and
//    non-text blocks (block), each answered once, as JSON in the one text block.
// Scope (and ownership) is checked from the stored metadata before any byte is returned, and every
// answer is shrunk until it fits the response budget.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { JsonObject } from "../../catalog/types.js";
import { CursorOutOfRangeError, VaultTamperedError } from "../../vault/errors.js";
import { ResultNotFoundError, type ResultMeta, type ResultStore } from "../../vault/results.js";
import { FindBusyError, FindTamperedError } from "../../vault/textview/find-runner.js";
import { readBlock, readLines, readTextPage } from "../../vault/textview/reader.js";
import type { ViewIndex } from "../../vault/textview/types.js";
import { allowedFor, DetachedError } from "../call/index.js";
import { errorText } from "../../util/errors.js";
import { releaseMemory } from "../../util/memory.js";
import { clipUtf8 } from "../../util/text.js";
import { advertisedName } from "../management.js";
import { jsonBytes, MAX_PAGE_BYTES, pageDocument, pageSize } from "../receipts.js";
import { BadRequest, badRequest, jsonResult, parseArgs, type ToolContext } from "./context.js";

/** Longest accepted `find` (a longer pattern is refused, never echoed). */
export const MAX_FIND_CHARS = 1024;
/** Bytes of `find` quoted back in an answer. */
const FIND_ECHO_BYTES = 120;
/** Non-text blocks listed on a first text page. */
const LISTED_BLOCKS = 20;
const DEFAULT_CONTEXT = 2;
const MAX_CONTEXT = 10;
const DEFAULT_MATCHES = 20;
const MAX_MATCHES = 100;

const getArgs = z.strictObject({
  callId: z.string().trim().min(1, "callId is required").max(128, "callId is at most 128 characters (copy it from the receipt)"),
  cursor: z.number().int().min(0, "cursor must be zero or positive").optional(),
  format: z.enum(["text", "v1"], { message: 'format is "text" (readable text) or "v1" (base64 pages, the default)' }).optional(),
  find: z.string().min(1, "find needs some text").max(MAX_FIND_CHARS, `find is at most ${MAX_FIND_CHARS} characters`).optional(),
  context: z.number().int().min(0).max(MAX_CONTEXT, `context is 0-${MAX_CONTEXT} lines`).optional(),
  max_matches: z.number().int().min(1).max(MAX_MATCHES, `max_matches is 1-${MAX_MATCHES}`).optional(),
  lines: z.string().max(40, 'lines is a range such as "120-180"').optional(),
  block: z.number().int().min(0, "block is a 0-based index into content").optional(),
});
type GetArgs = z.output<typeof getArgs>;

const USAGE = '{callId, format: "text"} to read, {callId, find: "text or /regex/"} to search, {callId, lines: "10-40"}, {callId, block: N}, or {callId, cursor} for base64 pages';

type Mode = "v1" | "text" | "lines" | "find" | "block";

function modeOf(a: GetArgs): Mode {
  const chosen = [a.find !== undefined && "find", a.lines !== undefined && "lines", a.block !== undefined && "block"].filter((m): m is Mode => m !== false);
  if (chosen.length > 1) throw new BadRequest(`use one of find, lines and block at a time (got ${chosen.join(" and ")})`);
  const mode: Mode = chosen[0] ?? (a.format === "text" ? "text" : "v1");
  if (mode !== "find" && (a.context !== undefined || a.max_matches !== undefined)) throw new BadRequest("context and max_matches go with find");
  if ((mode === "find" || mode === "lines") && a.cursor !== undefined) {
    throw new BadRequest(`${mode} does not take a cursor; to read on from a match, call with format: "text" and the cursor it gave`);
  }
  if (mode === "block" && a.format === "text") throw new BadRequest("block returns the block's bytes; drop format");
  return mode;
}

/** An answer for a model: the document once, as JSON in the one text block. */
function once(doc: JsonObject): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(doc) }] };
}

export async function getResult(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = parseArgs(getArgs, raw, USAGE);
  const mode = modeOf(args);
  const opened = await openStored(ctx, args.callId);
  if ("reply" in opened) return opened.reply;
  const { store, meta } = opened;
  const failed = (err: unknown): CallToolResult => {
    if (err instanceof VaultTamperedError || err instanceof FindTamperedError) return integrityFailure(args.callId);
    // Expired (and pruned) since meta(): the same answer as an unknown id.
    if (err instanceof ResultNotFoundError) return unavailable(args.callId);
    if (err instanceof FindBusyError) return badRequest(err.message);
    return badRequest(`read stored result: ${errorText(err)}`);
  };
  try {
    if (mode === "v1") return await v1Page(ctx, store, meta, args.cursor ?? 0);
    const view = await store.view(args.callId);
    if (mode === "text") return await textPage(ctx, store, meta, view, args.cursor ?? 0);
    if (mode === "lines") return await lineRange(ctx, store, meta, view, args.lines ?? "");
    if (mode === "block") return await blockPage(ctx, store, meta, view, args.block ?? 0, args.cursor ?? 0);
    return await find(ctx, store, meta, view, args);
  } catch (err) {
    if (err instanceof BadRequest) throw err;
    return failed(err);
  }
}

function unavailable(callId: string): CallToolResult {
  return jsonResult({ status: "unavailable", reason: "The callId is unknown or its stored result has expired.", callId });
}

function integrityFailure(callId: string): CallToolResult {
  return badRequest(`stored result ${callId} failed its integrity check and was not returned`);
}

/** The store and the result's metadata, once the caller may read it; or the answer to give instead. */
async function openStored(ctx: ToolContext, callId: string): Promise<{ store: ResultStore; meta: ResultMeta } | { reply: CallToolResult }> {
  const { hub, view } = ctx;
  const store = await hub.resultStore();
  if (!store) return { reply: badRequest(`stored results are unavailable: ${(await hub.vaultProblem()) ?? "the vault is not open"}`) };
  let meta;
  try {
    meta = await store.meta(callId);
  } catch (err) {
    if (err instanceof VaultTamperedError) return { reply: integrityFailure(callId) };
    return { reply: badRequest(`read stored result: ${errorText(err)}`) };
  }
  if (!meta) return { reply: unavailable(callId) };
  // The gateway's own oversized replies belong to the agent they were made for.
  const allowed = meta.kind === "reply" ? meta.agent === view.owner : allowedFor(view, meta.server, meta.tool, meta.namespaced, meta.agent);
  if (!allowed) return { reply: badRequest(`stored result for ${meta.namespaced} is out of scope for this agent`) };
  return { store, meta };
}

function budgetOf(ctx: ToolContext): number {
  return ctx.hub.config.response_budget;
}

function fits(ctx: ToolContext, result: CallToolResult): boolean {
  const budget = budgetOf(ctx);
  return budget === 0 || jsonBytes(result) <= budget;
}

// --- contract v1 -------------------------------------------------------------------------

async function v1Page(ctx: ToolContext, store: ResultStore, meta: ResultMeta, cursor: number): Promise<CallToolResult> {
  const callId = meta.callId;
  if (cursor > meta.totalBytes) return jsonResult(outOfRange(callId, cursor, { totalBytes: meta.totalBytes }));
  const getResultName = advertisedName("get_result", ctx.view.naming);
  let size = pageSize(budgetOf(ctx));
  for (;;) {
    let page;
    try {
      page = await store.read(callId, cursor, size);
    } catch (err) {
      if (err instanceof CursorOutOfRangeError) return jsonResult(outOfRange(callId, cursor, { totalBytes: meta.totalBytes }));
      throw err;
    }
    settleAfterPages();
    const doc = pageDocument({ callId, data: page.data, cursor, totalBytes: meta.totalBytes, mediaType: meta.mediaType });
    const result = v1Result(doc, getResultName);
    // The page envelope itself must fit the budget; shrink the page rather than flood.
    if (size <= 1 || fits(ctx, result)) return result;
    size = Math.max(1, Math.floor(size * 0.8));
  }
}

/**
 * A v1 page: the page document in structuredContent, where local-agent's parser takes it, and a
 * one-line summary as text (what a model or a transcript sees) instead of a second copy. The
 * summary's next step is in the document too (`hint`), for hosts that show only structuredContent.
 */
function v1Result(doc: JsonObject, getResultName: string): CallToolResult {
  const { cursor, nextCursor, totalBytes, done, callId } = doc as { cursor: number; nextCursor: number; totalBytes: number; done: boolean; callId: string };
  const next = done ? "last page" : `next cursor ${nextCursor}`;
  const hint = `To read it as text, call ${getResultName} with format: "text".`;
  const text = `Bytes ${cursor}-${nextCursor} of ${totalBytes} of stored result ${callId} as base64 JSON in structuredContent (${next}). ${hint}`;
  return { content: [{ type: "text", text }], structuredContent: { ...doc, hint } };
}

function outOfRange(callId: string, cursor: number, total: JsonObject): JsonObject {
  return { status: "cursor_out_of_range", reason: "cursor is beyond the end of the stored result", callId, cursor, ...total };
}

/**
 * Paging a 200 MB result is 25,600 requests whose short-lived garbage V8 would otherwise let
 * grow the old generation by tens of MB before collecting it; a full collection every few
 * thousand pages (milliseconds, against seconds of round trips) keeps the gateway's memory flat.
 */
const PAGES_PER_COLLECTION = 2048;
let pagesServed = 0;

function settleAfterPages(): void {
  pagesServed++;
  if (pagesServed % PAGES_PER_COLLECTION === 0) releaseMemory();
}

// --- text views ----------------------------------------------------------------------------

/** UTF-8 bytes of text per page before the envelope is measured (the same 8 KiB as v1 pages). */
function textPageBytes(budget: number): number {
  return budget === 0 ? MAX_PAGE_BYTES : Math.max(4, Math.min(MAX_PAGE_BYTES, budget - 256));
}

function blockEntry(b: ViewIndex["blocks"][number]): JsonObject {
  return { index: b.index, type: b.type, ...(b.mimeType ? { mimeType: b.mimeType } : {}), bytes: b.bytes, ...(b.uri ? { uri: clipUtf8(b.uri, 200) } : {}) };
}

/**
 * Builds an answer from a page size and a number of listed blocks, shrinking the page first and
 * the list last until it fits the budget.
 */
async function shrinkToFit(ctx: ToolContext, start: number, listed: number, build: (size: number, listed: number) => Promise<CallToolResult>): Promise<CallToolResult> {
  let size = start;
  let list = listed;
  for (;;) {
    const result = await build(size, list);
    if (fits(ctx, result)) return result;
    if (size > 256 || (list === 0 && size > 4)) size = Math.max(4, Math.floor(size * 0.8));
    else if (list > 0) list--;
    else return result;
  }
}

function textHeader(meta: ResultMeta, view: ViewIndex): JsonObject {
  return { status: "ok", callId: meta.callId, format: "text", ...(meta.isError ? { isError: true } : {}), ...(view.source === "structured" ? { source: "structuredContent" } : {}) };
}

async function textPage(ctx: ToolContext, store: ResultStore, meta: ResultMeta, view: ViewIndex, cursor: number): Promise<CallToolResult> {
  if (cursor > view.chars) return once(outOfRange(meta.callId, cursor, { totalChars: view.chars }));
  const src = store.bytesOf(meta.callId);
  const blocks = cursor === 0 ? view.blocks : [];
  return shrinkToFit(ctx, textPageBytes(budgetOf(ctx)), Math.min(LISTED_BLOCKS, blocks.length), async (size, listed) => {
    const page = await readTextPage(view, src, cursor, size);
    return once({
      ...textHeader(meta, view),
      text: page.text,
      cursor,
      nextCursor: page.nextCursor,
      done: page.done,
      line: page.line,
      totalChars: view.chars,
      totalLines: view.lines,
      ...(blocks.length > 0 ? { blocks: blocks.slice(0, listed).map(blockEntry), ...(listed < blocks.length ? { blockCount: blocks.length } : {}) } : {}),
    });
  });
}

/** "120-180", "120" or "120-" (to the end). */
function parseLines(spec: string): { from: number; to: number } {
  const m = /^\s*(\d{1,12})\s*(?:(-)\s*(\d{1,12})?\s*)?$/.exec(spec);
  const from = m ? Number(m[1]) : NaN;
  const to = m ? (m[3] !== undefined ? Number(m[3]) : m[2] ? Number.MAX_SAFE_INTEGER : from) : NaN;
  if (!m || from < 1 || to < from) throw new BadRequest('lines is a range of 1-based line numbers such as "120-180", "120" or "120-"');
  return { from, to };
}

async function lineRange(ctx: ToolContext, store: ResultStore, meta: ResultMeta, view: ViewIndex, spec: string): Promise<CallToolResult> {
  const { from, to } = parseLines(spec);
  if (from > view.lines) return once({ status: "line_out_of_range", reason: `the result has ${view.lines} lines`, callId: meta.callId, totalLines: view.lines });
  const src = store.bytesOf(meta.callId);
  return shrinkToFit(ctx, textPageBytes(budgetOf(ctx)), 0, async (size) => {
    const r = await readLines(view, src, from, to, size);
    if (!r) return once({ status: "line_out_of_range", callId: meta.callId, totalLines: view.lines });
    return once({
      ...textHeader(meta, view),
      lines: `${r.fromLine}-${Math.max(r.fromLine, r.toLine)}`,
      text: r.text,
      cursor: r.cursor,
      nextCursor: r.nextCursor,
      done: r.done,
      totalLines: view.lines,
      ...(r.truncated ? { truncated: true } : {}),
    });
  });
}

async function blockPage(ctx: ToolContext, store: ResultStore, meta: ResultMeta, view: ViewIndex, index: number, cursor: number): Promise<CallToolResult> {
  const block = view.blocks.find((b) => b.index === index);
  if (!block) {
    const listed = view.blocks.slice(0, LISTED_BLOCKS).map(blockEntry);
    const reason = index < Object.values(view.kinds).reduce((a, b) => a + b, 0) ? `content[${index}] is text: read it with format: "text"` : `the result has no content[${index}]`;
    return once({ status: "no_such_block", reason, callId: meta.callId, block: index, blocks: listed });
  }
  if (cursor > block.bytes) return once({ ...outOfRange(meta.callId, cursor, { totalBytes: block.bytes }), block: index });
  const src = store.bytesOf(meta.callId);
  return shrinkToFit(ctx, pageSize(budgetOf(ctx)), 0, async (size) => {
    const n = Math.max(3, size - (size % 3)); // whole base64 groups while not at the end
    const data = await readBlock(block, src, cursor, n);
    const nextCursor = cursor + data.length;
    return once({
      status: "ok",
      callId: meta.callId,
      block: index,
      type: block.type,
      mimeType: block.mimeType ?? "application/octet-stream",
      data: data.toString("base64"),
      cursor,
      nextCursor,
      done: nextCursor >= block.bytes,
      totalBytes: block.bytes,
    });
  });
}

/** `/source/flags` is a regular expression; anything else is searched for literally. */
export function parsePattern(find: string): { source: string; flags: string; literal?: string } {
  const m = /^\/(.+)\/([a-z]*)$/s.exec(find);
  if (!m) return { source: find.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&"), flags: "", literal: find };
  const source = m[1] as string;
  const flags = m[2] as string;
  const bad = [...flags].filter((f) => !"imsuv".includes(f));
  if (bad.length > 0 || new Set(flags).size !== flags.length) {
    throw new BadRequest(`find: regular expression flags may be i, m, s, u and v (got "${clipUtf8(flags, 20)}")`);
  }
  try {
    new RegExp(source, flags);
  } catch (err) {
    throw new BadRequest(`find: invalid regular expression (${clipUtf8(errorText(err).replace(/^Invalid regular expression: /, ""), 160)}); fix it, or send plain text without slashes to search for it literally`);
  }
  return { source, flags };
}

async function find(ctx: ToolContext, store: ResultStore, meta: ResultMeta, view: ViewIndex, args: GetArgs): Promise<CallToolResult> {
  const findText = args.find ?? "";
  const pattern = parsePattern(findText);
  const timeoutMs = ctx.hub.config.find_timeout;
  const outcome = await store.find(
    meta.callId,
    { ...pattern, context: args.context ?? DEFAULT_CONTEXT, maxMatches: args.max_matches ?? DEFAULT_MATCHES },
    timeoutMs,
    ctx.signal,
  );
  // The worker read the file by itself: answer only if it read the result whose scope was checked.
  const owner = outcome.owner;
  if (outcome.status === "gone" || (owner && (owner.agent !== meta.agent || owner.server !== meta.server || owner.tool !== meta.tool))) {
    return unavailable(meta.callId);
  }
  // Matches count only from a file the worker confirmed (a search stopped before that has none).
  const matches = owner ? outcome.matches : [];
  if (!owner && outcome.status === "ok") return unavailable(meta.callId);
  const base: JsonObject = {
    ...textHeader(meta, view),
    find: clipUtf8(findText, FIND_ECHO_BYTES),
    totalLines: view.lines,
    ...(outcome.status === "timeout"
      ? {
          status: "timeout",
          reason: `the search did not finish within ${Math.round(timeoutMs / 100) / 10} s; matches found before that are listed`,
          hint: "Search for plain text, or simplify the pattern: nested quantifiers such as (a+)+ can backtrack without end.",
        }
      : {}),
  };
  let count = matches.length;
  for (;;) {
    const shown = matches.slice(0, count);
    const result = once({ ...base, matches: shown as unknown as JsonObject[], truncated: outcome.truncated || count < matches.length });
    if (count === 0 || fits(ctx, result)) return result;
    count--;
  }
}

// --- poll ------------------------------------------------------------------------------------

const pollArgs = z.strictObject({ callId: z.string().trim().min(1, "callId is required").max(128, "callId is at most 128 characters (copy it from the receipt)") });

export async function pollResult(ctx: ToolContext, raw: unknown): Promise<CallToolResult> {
  const args = parseArgs(pollArgs, raw, '{callId: "<from the accepted receipt>"}');
  try {
    const answer = await ctx.hub.detached.poll(ctx.view, args.callId);
    if (answer.result) return answer.result;
    return jsonResult(answer.doc as JsonObject);
  } catch (err) {
    if (err instanceof DetachedError) return badRequest(err.message);
    return badRequest(`poll ${args.callId}: ${errorText(err)}`);
  }
}
