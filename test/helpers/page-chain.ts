// local-agent's page-chain rules (reference §12, decodeMCPHubResultPage and its assembler),
// implemented fail-closed: a test that reassembles a stored result through this helper proves
// that a real client would accept every page.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export interface Page {
  status: "ok";
  callId: string;
  mediaType: string;
  data: string;
  cursor: number;
  nextCursor: number;
  done: boolean;
  totalBytes: number;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Validates one page against the request; returns the decoded bytes or throws with the rule broken. */
export function decodePage(result: CallToolResult, callId: string, expectedCursor: number, expectedTotal?: number): { page: Page; bytes: Buffer } {
  const doc = (result.structuredContent ?? JSON.parse((result.content?.[0] as { text: string }).text)) as Page;
  if (doc.status !== "ok") throw new Error(`page status ${String(doc.status)}`);
  if (doc.callId !== callId) throw new Error("callId mismatch");
  if (doc.mediaType !== "application/json") throw new Error(`mediaType ${doc.mediaType}`);
  if (typeof doc.data !== "string" || !BASE64.test(doc.data)) throw new Error("data is not standard base64");
  const bytes = Buffer.from(doc.data, "base64");
  if (bytes.length > 8192) throw new Error(`page of ${bytes.length} bytes exceeds 8192`);
  if (!(doc.cursor >= 0)) throw new Error("negative cursor");
  if (doc.cursor !== expectedCursor) throw new Error(`cursor ${doc.cursor} is not the requested ${expectedCursor}`);
  if (!(doc.nextCursor >= doc.cursor)) throw new Error("nextCursor < cursor");
  if (!(doc.totalBytes >= doc.nextCursor)) throw new Error("totalBytes < nextCursor");
  if (bytes.length !== doc.nextCursor - doc.cursor) throw new Error("page length != nextCursor - cursor");
  if (doc.done !== (doc.nextCursor === doc.totalBytes)) throw new Error("done inconsistent with nextCursor/totalBytes");
  if (!doc.done && doc.nextCursor === doc.cursor) throw new Error("a page that is not done must advance");
  if (expectedTotal !== undefined && doc.totalBytes !== expectedTotal) throw new Error("totalBytes changed between pages");
  return { page: doc, bytes };
}

/** Follows nextCursor from 0 until done, enforcing the chain rules; returns the reassembled bytes. */
export async function reassemble(
  getPage: (cursor: number) => Promise<CallToolResult>,
  callId: string,
): Promise<{ bytes: Buffer; pages: number }> {
  const parts: Buffer[] = [];
  let cursor = 0;
  let total: number | undefined;
  let pages = 0;
  for (;;) {
    const { page, bytes } = decodePage(await getPage(cursor), callId, cursor, total);
    total = page.totalBytes;
    parts.push(bytes);
    pages++;
    if (page.done) break;
    cursor = page.nextCursor;
  }
  const all = Buffer.concat(parts);
  // The reassembled bytes must be a serialized CallToolResult.
  const parsed = JSON.parse(all.toString("utf8")) as { content?: unknown };
  if (!Array.isArray(parsed.content)) throw new Error("reassembled bytes are not a CallToolResult");
  return { bytes: all, pages };
}
