// Test doubles that are real peers: an OTLP/HTTP receiver (what a collector's /v1/traces does:
// accepts the exporter's JSON and answers 200) that keeps every span it is sent, and a streamable
// HTTP MCP server (the SDK's own transport) that keeps the W3C trace headers of each request.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string };
  service: string;
  /** Start and end, nanoseconds since the epoch. */
  startNs: bigint;
  endNs: bigint;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpKeyValue[];
  status?: { code?: number; message?: string };
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}
interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

const valueOf = (v: OtlpValue) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue ?? ""));
const attrs = (kvs: OtlpKeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, valueOf(kv.value)]));

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8").on("data", (d: string) => (text += d));
    req.once("end", () => resolve(text));
    req.once("error", reject);
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return (server.address() as AddressInfo).port;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Raw request bodies, for the canary check. */
  raw: string[];
  contentTypes: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const raw: string[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    void body(req).then((text) => {
      if (req.method !== "POST" || req.url !== "/v1/traces") return res.writeHead(404).end();
      raw.push(text);
      contentTypes.push(String(req.headers["content-type"]));
      const doc = JSON.parse(text) as OtlpRequest;
      for (const rs of doc.resourceSpans ?? []) {
        const service = String(attrs(rs.resource?.attributes)["service.name"] ?? "");
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? "", name: s.name, kind: s.kind, attributes: attrs(s.attributes), status: s.status ?? {}, service, startNs: BigInt(s.startTimeUnixNano), endNs: BigInt(s.endTimeUnixNano) });
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    raw,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface TracedDownstream {
  url: string;
  /** The traceparent of each tools/call request it received (undefined: none was sent). */
  callHeaders: (string | undefined)[];
  close(): Promise<void>;
}

/** A streamable HTTP MCP server (stateless: one McpServer a request) with an `echo` tool and a `slow` one (answers after `ms`). */
export async function startTracedDownstream(): Promise<TracedDownstream> {
  const callHeaders: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    void body(req).then(async (text) => {
      const parsed: unknown = text ? JSON.parse(text) : undefined;
      if ((parsed as { method?: string } | undefined)?.method === "tools/call") callHeaders.push(req.headers.traceparent as string | undefined);
      const mcp = new McpServer({ name: "traced", version: "1.0.0" });
      mcp.registerTool("echo", { description: "Echoes the message back", inputSchema: { message: z.string() } }, ({ message }) => ({ content: [{ type: "text", text: `echo: ${message}` }] }));
      mcp.registerTool("slow", { description: "Answers after ms milliseconds", inputSchema: { ms: z.number() } }, async ({ ms }) => {
        await new Promise((r) => setTimeout(r, ms));
        return { content: [{ type: "text", text: "done" }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.once("close", () => void transport.close());
      await mcp.connect(transport);
      await transport.handleRequest(req, res, parsed);
    });
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    callHeaders,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
