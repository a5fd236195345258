#!/usr/bin/env node
// The daemon benchmark's bare SDK baseline: streamable HTTP served by the SDK's own server
// transport (one per session, as in the SDK's examples), forwarding tools/list and tools/call to
// one downstream stdio server, with no checks, catalogue, validation or telemetry.
// Usage: node forwarder-http.mjs PORT CMD [ARGS...]   (prints "listening on URL" when ready)
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [port, command, ...args] = process.argv.slice(2);
const downstream = new Client({ name: "forwarder", version: "1.0.0" });
await downstream.connect(new StdioClientTransport({ command, args }));
const transports = new Map();

const server = createServer(async (req, res) => {
  const id = req.headers["mcp-session-id"];
  let transport = typeof id === "string" ? transports.get(id) : undefined;
  if (!transport) {
    if (typeof id === "string") return void res.writeHead(404).end();
    const mcp = new Server({ name: "forwarder", version: "1.0.0" }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => downstream.listTools());
    mcp.setRequestHandler(CallToolRequestSchema, async (r) => downstream.callTool({ name: r.params.name, arguments: r.params.arguments }));
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => transports.set(sid, transport),
    });
    transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
    await mcp.connect(transport);
  }
  await transport.handleRequest(req, res);
});
server.listen(Number(port), "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}/mcp`));
const stop = () => void downstream.close().finally(() => process.exit(0));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
