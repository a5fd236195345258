#!/usr/bin/env node
// The daemon benchmark's ceiling: the least an HTTP server can do to answer the SDK client's
// streamable-HTTP calls. It answers initialize, tools/list and an `echo` tools/call itself, as
// plain JSON, with no downstream and no MCP library, so what remains is the client's own cost.
// Usage: node raw-json-server.mjs PORT   (prints "listening on URL" when ready)
import { createServer } from "node:http";

const SESSION = "raw-session";
const TOOLS = [{ name: "echo", description: "Echoes the message back.", inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] } }];

function answer(msg) {
  switch (msg.method) {
    case "initialize":
      return { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "raw", version: "1.0.0" } };
    case "tools/list":
      return { tools: TOOLS };
    case "tools/call":
      return { content: [{ type: "text", text: `Echo: ${String(msg.params?.arguments?.message ?? "")}` }] };
    case "ping":
      return {};
    default:
      return undefined;
  }
}

const server = createServer((req, res) => {
  if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const msg = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (msg.id === undefined) return void res.writeHead(202, { "mcp-session-id": SESSION }).end();
    const result = answer(msg);
    const body = JSON.stringify(
      result === undefined ? { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } } : { jsonrpc: "2.0", id: msg.id, result },
    );
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": SESSION }).end(body);
  });
});
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}/mcp`));
process.once("SIGTERM", () => process.exit(0));
process.once("SIGINT", () => process.exit(0));
