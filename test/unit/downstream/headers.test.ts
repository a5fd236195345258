// Remote servers: configured headers reach every request, and `vault://` header values are
// resolved through the secret resolver at connect (and never show up in errors).
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Supervisor } from "../../../src/downstream/supervisor.js";
import type { SecretResolver } from "../../../src/downstream/types.js";
import { quietLog, textOf } from "./util.js";

describe("remote headers", () => {
  const seen: IncomingHttpHeaders[] = [];
  let http: Server;
  let url: string;

  beforeAll(async () => {
    // A stateless streamable HTTP MCP server: a fresh server and transport per request.
    http = createServer((req, res) => {
      seen.push(req.headers);
      const mcp = new McpServer({ name: "hdr", version: "1.0.0" });
      mcp.registerTool("whoami", { description: "Echo the auth header" }, async () => ({
        content: [{ type: "text", text: String(req.headers.authorization ?? "") === "" ? "anonymous" : "authorised" }],
      }));
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
      expect(snap.tools.map((t) => t.name)).toEqual(["whoami"]);
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
