// local-agent's projection of MCPHub stored-result documents (reference §12 and its contract
// fixtures, copied to test/fixtures/local-agent with their MIT licence), reimplemented fail-closed
// for the v1 page and the stored receipt: a test that passes our real answers through it shows
// that local-agent would read them as it reads its own fixtures.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { decodePage } from "./page-chain.js";

export const LOCAL_AGENT_FIXTURES = join(import.meta.dirname, "../fixtures/local-agent");

export interface Projection {
  domain: "succeeded" | "failed" | "attention" | "unknown";
  digest?: Record<string, unknown>;
}

export interface FixtureCase {
  id: string;
  document: string;
  tool: string;
  arguments: Record<string, unknown>;
  delivery: "structured" | "text";
  expected: { projection: { domain: string; digest?: Record<string, unknown> } };
}

export function fixtureCases(): FixtureCase[] {
  return (JSON.parse(readFileSync(join(LOCAL_AGENT_FIXTURES, "index.json"), "utf8")) as { cases: FixtureCase[] }).cases;
}

export function fixtureDocument(c: FixtureCase): Record<string, unknown> {
  return JSON.parse(readFileSync(join(LOCAL_AGENT_FIXTURES, c.document.replace(/^mcphub\//, "")), "utf8")) as Record<string, unknown>;
}

/** The document local-agent parses: structuredContent, else the one text block if it is a JSON object of at most 64 KiB. */
function documentOf(result: CallToolResult): Record<string, unknown> | undefined {
  if (result.structuredContent) return result.structuredContent as Record<string, unknown>;
  const first = result.content?.[0];
  if (result.content?.length !== 1 || first?.type !== "text" || Buffer.byteLength(first.text) > 64 * 1024) return undefined;
  try {
    const doc: unknown = JSON.parse(first.text);
    return doc !== null && typeof doc === "object" && !Array.isArray(doc) ? (doc as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const CALL_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** How local-agent projects a get_result page for {callId, cursor}. */
export function projectPage(result: CallToolResult, callId: string, cursor: number): Projection {
  const doc = documentOf(result);
  if (!doc) return { domain: "unknown" };
  if (doc.status === "unavailable" || doc.status === "cursor_out_of_range") return { domain: "attention" };
  if (doc.status === "ok" && doc.callId !== callId) return { domain: "failed", digest: { kind: "mcphub_error" } };
  try {
    const { page, bytes } = decodePage({ content: [], structuredContent: doc }, callId, cursor);
    return { domain: "succeeded", digest: { kind: "mcphub_page", next_cursor: page.nextCursor, total_bytes: page.totalBytes, page_bytes: bytes.length, done: page.done } };
  } catch {
    return { domain: "unknown" };
  }
}

/** How local-agent projects a call_tool answer that is a stored receipt, for the route server/tool. */
export function projectReceipt(result: CallToolResult, route: { server: string; tool: string }): Projection {
  const doc = documentOf(result);
  if (!doc || doc.status !== "stored") return { domain: "unknown" };
  const { callId, originalBytes, budgetBytes, server, tool, namespaced } = doc as Record<string, unknown>;
  if (typeof callId !== "string" || !CALL_ID.test(callId)) return { domain: "unknown" };
  if (typeof originalBytes !== "number" || typeof budgetBytes !== "number" || !(originalBytes > budgetBytes && budgetBytes > 0)) return { domain: "unknown" };
  if (server !== undefined && server !== route.server) return { domain: "unknown" };
  if (tool !== undefined && tool !== route.tool) return { domain: "unknown" };
  if (server !== undefined && tool !== undefined && namespaced !== undefined && namespaced !== `${String(server)}__${String(tool)}`) return { domain: "unknown" };
  return { domain: "attention", digest: { kind: "mcphub_stored", original_bytes: originalBytes, budget_bytes: budgetBytes } };
}

/** Projects one fixture case the way its runner delivers it. */
export function projectFixture(c: FixtureCase): Projection {
  const doc = fixtureDocument(c);
  const result: CallToolResult = c.delivery === "structured" ? { content: [], structuredContent: doc } : { content: [{ type: "text", text: JSON.stringify(doc) }] };
  if (c.tool.endsWith("get_result")) return projectPage(result, String(c.arguments.callId), Number(c.arguments.cursor ?? 0));
  return projectReceipt(result, { server: String(c.arguments.server), tool: String(c.arguments.tool) });
}
