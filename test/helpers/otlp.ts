// Test doubles that are real peers: an OTLP/HTTP receiver (what a collector's /v1/traces does:
// accepts an export as protobuf or JSON and answers 200) that keeps every span it is sent, and a streamable
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

// OTLP/protobuf, read field by field (opentelemetry/proto/trace/v1/trace.proto): a reader of
// its own, so the test does not read mcphub's bytes with mcphub's code.
type Field = { field: number; varint?: bigint; fixed64?: Buffer; bytes?: Buffer };

function readFields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[pos++];
      if (byte === undefined) throw new Error("OTLP protobuf: a varint runs past the end");
      v |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return v;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ field, varint: varint() });
    else if (wire === 1) {
      out.push({ field, fixed64: buf.subarray(pos, pos + 8) });
      pos += 8;
    } else if (wire === 2) {
      const n = Number(varint());
      out.push({ field, bytes: buf.subarray(pos, pos + n) });
      pos += n;
    } else if (wire === 5) pos += 4;
    else throw new Error(`OTLP protobuf: wire type ${wire} of field ${field}`);
  }
  return out;
}

const each = (fields: Field[], n: number): Buffer[] => fields.filter((f) => f.field === n && f.bytes).map((f) => f.bytes as Buffer);
const one = (fields: Field[], n: number): Buffer | undefined => each(fields, n)[0];

function protoValue(any: Buffer): string | number | boolean {
  for (const f of readFields(any)) {
    if (f.field === 1 && f.bytes) return f.bytes.toString("utf8");
    if (f.field === 2 && f.varint !== undefined) return f.varint !== 0n;
    if (f.field === 3 && f.varint !== undefined) return Number(BigInt.asIntN(64, f.varint));
    if (f.field === 4 && f.fixed64) return f.fixed64.readDoubleLE(0);
  }
  return "";
}

function protoAttributes(kvs: Buffer[]): Record<string, string | number | boolean> {
  return Object.fromEntries(
    kvs.map((kv) => {
      const f = readFields(kv);
      return [one(f, 1)?.toString("utf8") ?? "", protoValue(one(f, 2) ?? Buffer.alloc(0))];
    }),
  );
}

function protoSpans(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of each(readFields(body), 1)) {
    const rsFields = readFields(rs);
    const service = String(protoAttributes(each(readFields(one(rsFields, 1) ?? Buffer.alloc(0)), 1))["service.name"] ?? "");
    for (const ss of each(rsFields, 2))
      for (const raw of each(readFields(ss), 2)) {
        const f = readFields(raw);
        const status = readFields(one(f, 15) ?? Buffer.alloc(0));
        const message = one(status, 2)?.toString("utf8");
        const code = status.find((x) => x.field === 3)?.varint;
        const time = (n: number) => f.find((x) => x.field === n)?.fixed64?.readBigUInt64LE(0) ?? 0n;
        spans.push({
          traceId: one(f, 1)?.toString("hex") ?? "",
          spanId: one(f, 2)?.toString("hex") ?? "",
          parentSpanId: one(f, 4)?.toString("hex") ?? "",
          name: one(f, 5)?.toString("utf8") ?? "",
          kind: Number(f.find((x) => x.field === 6)?.varint ?? 0n),
          attributes: protoAttributes(each(f, 9)),
          status: { ...(code !== undefined ? { code: Number(code) } : {}), ...(message !== undefined ? { message } : {}) },
          service,
          startNs: time(7),
          endNs: time(8),
        });
      }
  }
  return spans;
}

// OTLP/JSON, as the SDK's OTLPTraceExporter sends it.
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

function jsonSpans(text: string): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  const doc = JSON.parse(text) as OtlpRequest;
  for (const rs of doc.resourceSpans ?? []) {
    const service = String(attrs(rs.resource?.attributes)["service.name"] ?? "");
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        spans.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? "", name: s.name, kind: s.kind, attributes: attrs(s.attributes), status: s.status ?? {}, service, startNs: BigInt(s.startTimeUnixNano), endNs: BigInt(s.endTimeUnixNano) });
  }
  return spans;
}

function body(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.once("end", () => resolve(Buffer.concat(chunks)));
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
    void body(req).then((data) => {
      if (req.method !== "POST" || req.url !== "/v1/traces") return res.writeHead(404).end();
      const type = String(req.headers["content-type"]);
      raw.push(data.toString("utf8"));
      contentTypes.push(type);
      spans.push(...(type.startsWith("application/x-protobuf") ? protoSpans(data) : jsonSpans(data.toString("utf8"))));
      res.writeHead(200, { "content-type": type.startsWith("application/x-protobuf") ? "application/x-protobuf" : "application/json" }).end(type.startsWith("application/x-protobuf") ? "" : "{}");
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
    void body(req).then(async (data) => {
      const text = data.toString("utf8");
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
