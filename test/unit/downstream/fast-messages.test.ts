// The downstream's zod-free parsing of ordinary answers: for every input it must give what the
// SDK's schemas give (same output, same errors), and for the ordinary shapes it must skip them
// (the parsed object itself comes back, where a zod parse returns a copy).
import { deserializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { JSONRPCMessageSchema, isJSONRPCResultResponse, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultFastSchema,
  CallToolResultRequestSchema,
  isPlainCallResult,
  parseMessageLine,
  routeResponsesDirectly,
} from "../../../src/downstream/fast-messages.js";

const outcome = (f: () => unknown) => {
  try {
    return { ok: f() };
  } catch (err) {
    return { error: String(err) };
  }
};

const LINES = [
  '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}',
  '{"jsonrpc":"2.0","id":"a","result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":{"content":[],"extra":{"x":1}}}',
  '{"jsonrpc":"2.0","id":1,"result":{"_meta":{"progressToken":3}}}',
  '{"jsonrpc":"2.0","id":1,"result":{"_meta":"nope"}}',
  '{"jsonrpc":"2.0","id":1.5,"result":{}}',
  '{"jsonrpc":"1.0","id":1,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":[]}',
  '{"jsonrpc":"2.0","id":1,"result":null}',
  '{"jsonrpc":"2.0","id":1,"result":{},"extra":1}',
  '{"jsonrpc":"2.0","id":1,"result":{"__proto__":{"x":1}}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}',
  '{"jsonrpc":"2.0","id":7,"method":"ping"}',
  '{"jsonrpc":"2.0"}',
  "[1,2]",
  "null",
  "not json",
];

const RESULTS: unknown[] = [
  { content: [{ type: "text", text: "hi" }] },
  { content: [{ type: "text", text: "hi" }], isError: true, structuredContent: { a: [1, { b: 2 }] } },
  { content: [] },
  {},
  { structuredContent: { a: 1 } },
  { content: [{ type: "text", text: "hi", annotations: { audience: ["user"] } }] },
  { content: [{ type: "text", text: "hi", junk: 1 }] },
  { content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] },
  { content: [{ type: "text", text: 5 }] },
  { content: [{ type: "nope" }] },
  { content: "text" },
  { content: [], isError: "yes" },
  { content: [], structuredContent: [1] },
  { content: [], structuredContent: JSON.parse('{"__proto__":{"polluted":1}}') },
  { content: [], _meta: { progressToken: 1 } },
  { content: [], other: 1 },
  JSON.parse('{"content":[],"__proto__":{"x":1}}'),
  [],
  null,
  "string",
];

describe("parseMessageLine", () => {
  it("gives what the SDK's deserializeMessage gives, output and errors, for every shape", () => {
    for (const line of LINES) expect(outcome(() => parseMessageLine(line)), line).toEqual(outcome(() => deserializeMessage(line)));
  });

  it("skips the schema for a plain result response (the parsed object comes back as it is)", () => {
    const line = LINES[0] as string;
    const parsed = parseMessageLine(line) as unknown as { result: { content: unknown[] } };
    expect(parsed).toEqual(JSON.parse(line));
    // zod would hand back copies; the fast path's result is the object JSON.parse built.
    parsed.result.content.push("marker");
    expect(parsed.result.content).toHaveLength(2);
  });
});

describe("CallToolResultFastSchema", () => {
  // What the SDK Protocol does with a result schema: safeParse, and a throw rejects the call too.
  const asProtocol = (schema: typeof CallToolResultSchema | typeof CallToolResultFastSchema, r: unknown) => {
    try {
      const parsed = schema.safeParse(r);
      return parsed.success ? { ok: parsed.data } : { error: parsed.error };
    } catch (error) {
      return { error: error as Error };
    }
  };

  it("gives what CallToolResultSchema gives, output and errors (the schema's own ZodError), for every shape", () => {
    for (const r of RESULTS) {
      const fast = asProtocol(CallToolResultFastSchema, r);
      const full = asProtocol(CallToolResultSchema, r);
      expect(fast.ok, JSON.stringify(r)).toEqual(full.ok);
      expect(fast.error?.name, JSON.stringify(r)).toBe(full.error?.name);
      expect(fast.error?.message, JSON.stringify(r)).toBe(full.error?.message);
    }
  });

  it("returns an ordinary result itself, without a schema copy", () => {
    const r = { content: [{ type: "text", text: "hi" }], isError: false };
    expect(isPlainCallResult(r)).toBe(true);
    expect(CallToolResultFastSchema.parse(r)).toBe(r);
    expect(CallToolResultSchema.parse(r)).not.toBe(r);
  });

  it("leaves results the schema would change or refuse to the schema", () => {
    expect(isPlainCallResult({})).toBe(false); // the schema fills in content: []
    expect(isPlainCallResult({ content: [{ type: "text", text: "x", junk: 1 }] })).toBe(false); // it strips junk
    expect(CallToolResultFastSchema.parse({})).toEqual({ content: [] });
  });
});

describe("the request path's result parser and response route", () => {
  const results: unknown[] = [
    { content: [{ type: "text", text: "hi" }] },
    { content: [{ type: "text", text: "hi" }], isError: true, structuredContent: { a: 1 } },
    {},
    { content: [{ type: "image", data: "AA==", mimeType: "image/png" }] },
    { content: [{ type: "text", text: "x", junk: 1 }] },
    { content: "not a list" },
    { content: [{ type: "nope" }] },
    { content: [], _meta: { progressToken: 1 } },
  ];

  it("gives CallToolResultSchema's verdict and output for every result, and the plain ones as they are", () => {
    for (const r of results) {
      const mine = CallToolResultRequestSchema.safeParse(r);
      const theirs = CallToolResultSchema.safeParse(r);
      expect(mine.success).toBe(theirs.success);
      if (mine.success && theirs.success) expect(mine.data).toEqual(theirs.data);
      if (!mine.success && !theirs.success) expect(String(mine.error)).toBe(String(theirs.error));
      if (isPlainCallResult(r)) expect(mine.data).toBe(r);
    }
  });

  it("takes only plain result responses past the Protocol's route, each one the Protocol would take as a response", () => {
    const direct: unknown[] = [];
    const routed: unknown[] = [];
    // Without the Protocol's maps (another SDK) every plain response goes to _onresponse itself.
    const client = { _onresponse: (m: unknown) => direct.push(m) };
    const transport = { onmessage: (m: unknown) => routed.push(m) } as unknown as Transport;
    routeResponsesDirectly(client, transport);
    const messages = [
      ...LINES.flatMap((l) => {
        try {
          return [JSON.parse(l) as unknown];
        } catch {
          return [];
        }
      }),
      { jsonrpc: "2.0", id: 2, result: { content: [] } },
      { jsonrpc: "2.0", id: 3, result: { _meta: { x: 1 } } },
      { jsonrpc: "2.0", id: 4, error: { code: -1, message: "no" } },
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } },
      { jsonrpc: "2.0", id: 5, method: "ping" },
    ];
    for (const m of messages) transport.onmessage?.(m as JSONRPCMessage);
    expect(direct.length + routed.length).toBe(messages.length);
    expect(direct.length).toBeGreaterThan(0);
    for (const m of direct) {
      expect(isJSONRPCResultResponse(m)).toBe(true);
      expect(JSONRPCMessageSchema.safeParse(m).success).toBe(true);
    }
    for (const m of routed) expect(direct).not.toContain(m);
    expect(routed).toContainEqual({ jsonrpc: "2.0", id: 4, error: { code: -1, message: "no" } });
    expect(routed).toContainEqual({ jsonrpc: "2.0", id: 3, result: { _meta: { x: 1 } } });
  });
});

describe("routeResponsesDirectly on a real SDK Client", () => {
  it("answers calls as the Protocol does and leaves no handler, timeout or progress handler behind", async () => {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { Server } = await import("@modelcontextprotocol/sdk/server/index.js");
    const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");
    const { CallToolRequestSchema } = await import("@modelcontextprotocol/sdk/types.js");
    const server = new Server({ name: "s", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(CallToolRequestSchema, async (req) => ({ content: [{ type: "text", text: `echo ${String(req.params.arguments?.m)}` }] }));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(b);
    const client = new Client({ name: "c", version: "1" });
    await client.connect(a);
    routeResponsesDirectly(client, a);
    const internals = client as unknown as { _responseHandlers: Map<number, unknown>; _progressHandlers: Map<number, unknown>; _timeoutInfo: Map<number, unknown> };
    const results = await Promise.all(
      [1, 2, 3].map((m) =>
        client.request({ method: "tools/call", params: { name: "x", arguments: { m } } }, CallToolResultRequestSchema, { onprogress: () => undefined, timeout: 60_000 }),
      ),
    );
    expect(results).toEqual([1, 2, 3].map((m) => ({ content: [{ type: "text", text: `echo ${m}` }] })));
    expect(internals._responseHandlers.size).toBe(0);
    expect(internals._progressHandlers.size).toBe(0);
    expect(internals._timeoutInfo.size).toBe(0);
    await client.close();
  });
});
