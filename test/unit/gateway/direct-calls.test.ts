// The direct tools/call path in front of the SDK Server: ordinary calls skip the Server, anything
// else (malformed params, task-augmented calls) still gets the Server's own answer, and the
// handler's signal is aborted on cancellation and on close, as the Protocol does for its own.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { directCallParams, routeCallsDirectly, type CallExtra } from "../../../src/gateway/direct-calls.js";

async function pair(handler: (name: string, extra: CallExtra) => Promise<{ content: { type: "text"; text: string }[] }>) {
  const server = new Server({ name: "s", version: "1" }, { capabilities: { tools: {} } });
  const viaServer: string[] = [];
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    viaServer.push(req.params.name);
    return { content: [{ type: "text", text: "server" }] };
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const running = routeCallsDirectly(server, b, (params, extra) => handler(params.name, extra));
  const client = new Client({ name: "c", version: "1" });
  await client.connect(a);
  return { server, client, viaServer, running };
}

describe("direct tools/call path", () => {
  it("takes ordinary calls and leaves the rest to the Server", () => {
    expect(directCallParams({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: { a: 1 } } })).toEqual({ id: 1, params: { name: "x", arguments: { a: 1 } } });
    expect(directCallParams({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x", _meta: { progressToken: "t" } } })).toEqual({ id: 2, params: { name: "x" }, progressToken: "t" });
    for (const params of [{ name: 3 }, { name: "x", arguments: "no" }, { name: "x", arguments: [1] }, { name: "x", task: { ttl: 5 } }, { name: "x", _meta: { "io.modelcontextprotocol/related-task": { taskId: "t" } } }, { name: "x", _meta: { progressToken: { bad: 1 } } }]) {
      expect(directCallParams({ jsonrpc: "2.0", id: 3, method: "tools/call", params } as never)).toBeUndefined();
    }
    expect(directCallParams({ jsonrpc: "2.0", id: 4, method: "tools/list" })).toBeUndefined();
  });

  it("answers ordinary calls itself, errors shaped as the Protocol shapes them", async () => {
    const { client, viaServer } = await pair(async (name) => {
      if (name === "boom") throw Object.assign(new Error("it broke"), { code: -32602, data: { why: "test" } });
      return { content: [{ type: "text", text: `direct ${name}` }] };
    });
    expect(await client.callTool({ name: "echo", arguments: {} })).toEqual({ content: [{ type: "text", text: "direct echo" }] });
    await expect(client.callTool({ name: "boom" })).rejects.toMatchObject({ code: -32602, data: { why: "test" } });
    expect(viaServer).toEqual([]);
  });

  it("leaves a malformed call to the Server, which answers it", async () => {
    const { client } = await pair(async () => ({ content: [{ type: "text", text: "direct" }] }));
    await expect(client.request({ method: "tools/call", params: { name: "x", arguments: "not an object" } } as never, CallToolResultSchema)).rejects.toThrow(/Invalid/);
  });

  it("aborts the handler on cancellation and on close", async () => {
    const signals: AbortSignal[] = [];
    const { client, running } = await pair((_name, extra) => {
      signals.push(extra.signal);
      return new Promise(() => undefined);
    });
    const ac = new AbortController();
    const first = client.callTool({ name: "slow" }, undefined, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 20));
    expect(running()).toBe(1);
    ac.abort("enough");
    await expect(first).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 20));
    expect(signals[0]?.aborted).toBe(true);
    expect(running()).toBe(0);
    void client.callTool({ name: "slow" }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    await client.close();
    await new Promise((r) => setTimeout(r, 20));
    expect(signals[1]?.aborted).toBe(true);
  });
});
