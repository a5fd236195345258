#!/usr/bin/env node
// The benchmark's baseline: a bare pass-through forwarder written with the SDK alone. It serves
// MCP over stdio and forwards tools/list and tools/call to one downstream stdio server, with no
// catalogue, validation, telemetry or budget. Usage: node forwarder.mjs CMD [ARGS...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const downstream = new Client({ name: "forwarder", version: "1.0.0" });
await downstream.connect(new StdioClientTransport({ command, args }));
const server = new Server({ name: "forwarder", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => downstream.listTools());
server.setRequestHandler(CallToolRequestSchema, async (req) =>
  downstream.callTool({ name: req.params.name, arguments: req.params.arguments }),
);
const transport = new StdioServerTransport();
transport.onclose = () => void downstream.close().finally(() => process.exit(0));
process.stdin.on("end", () => void downstream.close().finally(() => process.exit(0)));
await server.connect(transport);
