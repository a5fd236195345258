// Remote servers: configured headers reach every request, and `vault://` header values are
// resolved through the secret resolver at connect (and never show up in errors).
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Supervisor } from "../../../src/downstream/supervisor.js";
import type { SecretResolver } from "../../../src/downstream/types.js";
import { quietLog, textOf } from "./util.js";

describe("remote headers", () => {
  const seen: IncomingHttpHeaders[] = [];
  let http: HttpServer;
  let url: string;

  beforeAll(async () => {
    // A stateless streamable HTTP MCP server: a fresh server and transport per request.
    http = createServer((req, res) => {
      seen.push(req.headers);
      // A careless server: `leak` and `leak_error` quote the credentials it was sent.
      const auth = String(req.headers.authorization ?? "");
      const mcp = new Server({ name: "hdr", version: "1.0.0" }, { capabilities: { tools: {} } });
      const noArgs = { type: "object" as const, properties: {} };
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          { name: "whoami", description: "Echo the auth header", inputSchema: noArgs },
          { name: "leak", description: "Quotes the credentials", inputSchema: noArgs },
          { name: "leak_error", description: "Throws with the credentials", inputSchema: noArgs },
        ],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (call) => {
        if (call.params.name === "leak_error") throw new McpError(ErrorCode.InvalidParams, `bad auth: ${auth}`, { header: auth });
        if (call.params.name === "leak") {
          return {
            isError: true,
            content: [{ type: "text", text: `rejected ${auth} (token ${auth.replace(/^Bearer /, "")}) and key ${String(req.headers["x-api-key"])}` }],
          };
        }
        return { content: [{ type: "text", text: auth === "" ? "anonymous" : "authorised" }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        void transport.close();
        void mcp.close();
      });
      void mcp.connect(transport).then(() => transport.handleRequest(req, res));
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
  });

  it("sends configured and vault-resolved headers on every request", async () => {
    const secret = "vault-resolved-bearer-123";
    const refs: string[] = [];
    const secrets: SecretResolver = {
      envFor: async () => ({}),
      header: async (ref) => {
        refs.push(ref);
        return `Bearer ${secret}`;
      },
      knownSecretValues: () => [secret],
    };
    const sup = new Supervisor({
      servers: { remote: { url, headers: { Authorization: "vault://P/TOKEN", "X-Team": "blue" }, enabled: true } },
      connectTimeoutMs: 20_000,
      clientInfo: { name: "mcphub/tester", version: "test" },
      secrets,
      log: quietLog,
    });
    try {
      sup.start();
      const snap = await sup.waitForServer("remote", { timeoutMs: 20_000 });
      expect(snap.tools.map((t) => t.name)).toEqual(["whoami", "leak", "leak_error"]);
      expect(textOf(await sup.callTool("remote", "whoami", {}))).toBe("authorised");
      expect(refs).toEqual(["vault://P/TOKEN"]);
      const posts = seen.filter((h) => h["content-type"]?.includes("json"));
      expect(posts.length).toBeGreaterThanOrEqual(3); // initialize, initialized, tools/list, tools/call
      for (const h of posts) {
        expect(h.authorization).toBe(`Bearer ${secret}`);
        expect(h["x-team"]).toBe("blue");
      }
    } finally {
      await sup.close();
    }
  });

  it("masks the vault-resolved and literal credential headers in what the server sends back", async () => {
    const secret = "vault-resolved-bearer-456";
    const secrets: SecretResolver = { envFor: async () => ({}), header: async () => `Bearer ${secret}`, knownSecretValues: () => [secret] };
    const sup = new Supervisor({
      servers: { remote: { url, headers: { Authorization: "vault://P/TOKEN", "X-Api-Key": "literal-key-789" }, enabled: true } },
      connectTimeoutMs: 20_000,
      clientInfo: { name: "mcphub/tester", version: "test" },
      secrets,
      log: quietLog,
    });
    try {
      sup.start();
      await sup.waitForServer("remote", { timeoutMs: 20_000 });
      expect(textOf(await sup.callTool("remote", "leak", {}))).toBe("rejected [redacted] (token [redacted]) and key [redacted]");
      const err = (await sup.callTool("remote", "leak_error", {}).catch((e: unknown) => e)) as McpError;
      expect(err).toBeInstanceOf(McpError);
      expect(err.code).toBe(ErrorCode.InvalidParams);
      // The SDK server prefixed its message once and the client once more; masking keeps that shape.
      expect(err.message).toBe("MCP error -32602: MCP error -32602: bad auth: [redacted]");
      expect(err.data).toEqual({ header: "[redacted]" });
    } finally {
      await sup.close();
    }
  });

  it("fails a remote server that refuses connections with a clean, retrying state", async () => {
    const sup = new Supervisor({
      servers: { gone: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer literal-secret-xyz" }, enabled: true } },
      connectTimeoutMs: 5_000,
      clientInfo: { name: "mcphub", version: "test" },
      log: quietLog,
      backoff: { initialMs: 60_000, maxMs: 60_000 },
    });
    try {
      sup.start();
      const err = await sup.waitForServer("gone", { timeoutMs: 10_000 }).catch((e: unknown) => e as Error);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(/is not connected: connect failed/);
      expect(sup.snapshot("gone")?.state).toBe("failed");
      expect(JSON.stringify(sup.snapshot("gone"))).not.toContain("literal-secret-xyz");
    } finally {
      await sup.close();
    }
  });
});
