// messageKind() must accept and refuse exactly what the SDK's JSONRPCMessageSchema does: it
// replaces that zod parse on the daemon's hot path.
import { JSONRPCMessageSchema, JSONRPCNotificationSchema, JSONRPCRequestSchema, JSONRPCResultResponseSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { messageKind } from "../../../src/util/json/jsonrpc.js";

const samples: unknown[] = [
  { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: { a: 1 } } },
  { jsonrpc: "2.0", id: "abc", method: "ping" },
  { jsonrpc: "2.0", id: 1.5, method: "ping" },
  { jsonrpc: "2.0", id: null, method: "ping" },
  { jsonrpc: "2.0", id: 2 ** 60, method: "ping" },
  { id: 1, method: "ping" },
  { jsonrpc: "1.0", id: 1, method: "ping" },
  { jsonrpc: "2.0", id: 1, method: "ping", extra: 1 },
  { jsonrpc: "2.0", id: 1, method: "ping", params: [1, 2] },
  { jsonrpc: "2.0", id: 1, method: "ping", params: null },
  { jsonrpc: "2.0", id: 1, method: 7 },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { progressToken: "t" } } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { progressToken: 4 } } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { progressToken: { no: 1 } } } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { progressToken: 1.25 } } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: "meta" } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { "io.modelcontextprotocol/related-task": { taskId: "t1" } } } },
  { jsonrpc: "2.0", id: 1, method: "x", params: { _meta: { "io.modelcontextprotocol/related-task": { taskId: 3 } } } },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 2 } },
  { jsonrpc: "2.0", method: "notifications/x", params: [] },
  { jsonrpc: "2.0", method: "notifications/x", other: true },
  { jsonrpc: "2.0", id: 3, result: {} },
  { jsonrpc: "2.0", id: 3, result: { content: [], _meta: { any: 1 } } },
  { jsonrpc: "2.0", id: 3, result: [] },
  { jsonrpc: "2.0", id: 3, result: null },
  { jsonrpc: "2.0", result: {} },
  { jsonrpc: "2.0", id: 3, result: {}, error: { code: 1, message: "m" } },
  { jsonrpc: "2.0", id: 3, error: { code: -32600, message: "bad" } },
  { jsonrpc: "2.0", error: { code: -32700, message: "parse" } },
  { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse" } },
  { jsonrpc: "2.0", id: 3, error: { code: 1.5, message: "m" } },
  { jsonrpc: "2.0", id: 3, error: { code: 1 } },
  { jsonrpc: "2.0", id: 3, error: { code: 1, message: "m", data: { x: 1 } } },
  { jsonrpc: "2.0", id: 3, error: "oops" },
  { jsonrpc: "2.0", id: 3 },
  {},
  [],
  null,
  "text",
  42,
];

describe("messageKind", () => {
  it("accepts and refuses exactly what the SDK's JSONRPCMessageSchema does", () => {
    for (const m of samples) expect({ m, ok: messageKind(m) !== undefined }).toEqual({ m, ok: JSONRPCMessageSchema.safeParse(m).success });
  });

  it("names the kind the SDK would", () => {
    for (const m of samples) {
      const kind = messageKind(m);
      if (kind === "request") expect(JSONRPCRequestSchema.safeParse(m).success).toBe(true);
      if (kind === "notification") expect(JSONRPCNotificationSchema.safeParse(m).success).toBe(true);
      if (kind === "response") expect(JSONRPCResultResponseSchema.safeParse(m).success).toBe(true);
    }
  });
});
