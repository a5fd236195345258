// Issue 28, traces: the daemon exports its spans over OTLP/HTTP to a receiver run here. One
// tools/call makes one tree (the request's span; locate, guard and dispatch under it; the
// downstream call under dispatch; a stored result under finalize, a span only then; limit is one
// only when the call waited in a queue); a client's W3C
// traceparent is the root's parent; an HTTP downstream receives the propagated header; no
// argument or result value reaches an attribute (canary); /metrics and the status page count the
// spans sent, and the spans a refusing collector lost. Tracing off exports nothing.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempHome, type TempHome } from "../helpers/gateway.js";
import { httpClient, rawRequest, startDaemon, until, type Daemon, type HttpClient } from "../helpers/mcp-daemon.js";
import { parseScrape } from "../helpers/prometheus.js";
import { startOtlpReceiver, startTracedDownstream, type OtlpReceiver, type ReceivedSpan, type TracedDownstream } from "../helpers/otlp.js";

const CANARY = "canary-5d1c0a77";
const SERVER_KIND = 2;
const CLIENT_KIND = 3;

let home: TempHome;
let receiver: OtlpReceiver;
let downstream: TracedDownstream;
let daemon: Daemon;
beforeAll(async () => {
  home = tempHome("mcphub-tracing-");
  receiver = await startOtlpReceiver();
  downstream = await startTracedDownstream();
  const cfg = home.writeConfig({
    expose: "all",
    // queued: one call at a time, the next waits in the server's queue.
    servers: { web: { url: downstream.url }, queued: { url: downstream.url, limits: { concurrent_calls: 1, queue: 5 } } },
    telemetry: { otlp: { url: receiver.url, service_name: "mcphub-test" } },
  });
  daemon = await startDaemon(home, cfg);
});
afterAll(async () => {
  await daemon?.stop();
  await downstream?.close();
  await receiver?.close();
  home.cleanup();
});

/** A client whose every request carries this traceparent (as an instrumented harness's would). */
async function tracedClient(traceparent?: string): Promise<HttpClient> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const client = new Client({ name: "traced-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(daemon.url), traceparent ? { requestInit: { headers: { traceparent } } } : {});
  await client.connect(transport);
  return { client, transport, call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as never, close: () => client.close() };
}

function tree(root: ReceivedSpan): Map<string, ReceivedSpan[]> {
  const kids = new Map<string, ReceivedSpan[]>();
  for (const s of receiver.spans) {
    if (s.traceId !== root.traceId) continue;
    const list = kids.get(s.parentSpanId) ?? [];
    list.push(s);
    kids.set(s.parentSpanId, list);
  }
  return kids;
}

describe("OTLP traces", () => {
  it("one tools/call is one tree, child of the client's traceparent, and the HTTP downstream gets the header", async () => {
    const traceId = randomBytes(16).toString("hex");
    const parentId = randomBytes(8).toString("hex");
    const client = await tracedClient(`00-${traceId}-${parentId}-01`);
    try {
      await until(async () => ((await client.client.listTools()).tools.some((t) => t.name === "web__echo") ? true : undefined), "web's tools");
      const r = await client.call("web__echo", { message: CANARY });
      expect(JSON.stringify(r)).toContain(CANARY);
    } finally {
      await client.close();
    }
    const root = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.name === "tools/call web__echo" && s.kind === SERVER_KIND), "the request's span", 300);
    expect(root.parentSpanId).toBe(parentId);
    expect(root.service).toBe("mcphub-test");
    expect(root.attributes["mcp.method.name"]).toBe("tools/call");
    expect(root.attributes["mcphub.outcome"]).toBe("ok");
    expect(root.attributes["mcphub.server"]).toBe("web");
    // The batch may send the children in another request than the root.
    await until(() => ((tree(root).get(root.spanId)?.length ?? 0) >= 3 ? true : undefined), "the stage spans", 300);
    const kids = tree(root);
    // A result that fits is not stored and the call queued nowhere: no finalize or limit span.
    const stages = (kids.get(root.spanId) ?? []).map((s) => s.name).sort();
    expect(stages).toEqual(["mcphub.dispatch", "mcphub.guard", "mcphub.locate"]);
    const dispatch = kids.get(root.spanId)?.find((s) => s.name === "mcphub.dispatch") as ReceivedSpan;
    const call = await until(() => tree(root).get(dispatch.spanId)?.find((s) => s.name === "tools/call echo"), "the downstream call's span", 300);
    expect(call.kind).toBe(CLIENT_KIND);
    expect(call.attributes["mcphub.server"]).toBe("web");
    // The downstream received the trace context of the client span that made the request.
    expect(downstream.callHeaders.at(-1)).toBe(`00-${traceId}-${call.spanId}-01`);
  });

  it("a stored result is a span under finalize; a request without traceparent starts its own trace", async () => {
    const client = await tracedClient();
    try {
      const r = await client.call("mcphub_call_tool", { tool: "web__echo", arguments: { message: `${CANARY}${"x".repeat(200_000)}` } });
      expect(r).toBeDefined();
    } finally {
      await client.close();
    }
    const root = await until(() => receiver.spans.find((s) => s.name === "tools/call mcphub_call_tool" && s.kind === SERVER_KIND), "the call_tool span", 300);
    expect(root.parentSpanId).toBe("");
    const finalize = await until(() => tree(root).get(root.spanId)?.find((s) => s.name === "mcphub.finalize"), "finalize", 300);
    const put = await until(() => tree(root).get(finalize.spanId)?.find((s) => s.name.startsWith("mcphub.store.results.")), "the store's span", 300);
    expect(put.name).toMatch(/^mcphub\.store\.results\.\w+$/);
  });

  it("a call that waited in a server's queue has a limit span; the one that did not wait has none", async () => {
    const client = await tracedClient();
    try {
      await until(async () => ((await client.client.listTools()).tools.some((t) => t.name === "queued__slow") ? true : undefined), "queued's tools");
      const answers = await Promise.all([client.call("queued__slow", { ms: 400 }), client.call("queued__slow", { ms: 400 })]);
      for (const a of answers) expect(JSON.stringify(a)).toContain("done");
    } finally {
      await client.close();
    }
    const roots = await until(() => {
      const found = receiver.spans.filter((s) => s.name === "tools/call queued__slow" && s.kind === SERVER_KIND);
      return found.length === 2 ? found : undefined;
    }, "both calls' spans", 300);
    const limited = await until(() => {
      const spans = roots.map((r) => tree(r).get(r.spanId) ?? []);
      return spans.every((kids) => kids.some((s) => s.name === "mcphub.dispatch")) ? spans.map((kids) => kids.filter((s) => s.name === "mcphub.limit").length) : undefined;
    }, "the stage spans", 300);
    expect(limited.sort()).toEqual([0, 1]);
  });

  it("/metrics counts the spans sent, as many as the collector received, and none failed", async () => {
    const base = daemon.url.replace(/\/mcp$/, "");
    // Sends still under way are counted when they are answered: the two totals meet.
    const sent = await until(async () => {
      const scrape = parseScrape((await rawRequest(`${base}/metrics`, "GET", {})).body);
      const total = scrape.total("mcphub_trace_spans_exported_total", { outcome: "sent" });
      return total > 0 && total === receiver.spans.length ? { total, failed: scrape.total("mcphub_trace_spans_exported_total", { outcome: "failed" }), type: scrape.samples("mcphub_trace_spans_exported_total").length } : undefined;
    }, "the sent spans' count to reach the receiver's", 300);
    expect(sent.failed).toBe(0);
    expect(sent.type).toBe(2); // sent and failed
  });

  it("the status page counts the spans sent, none lost, with the sample and the collector", async () => {
    const base = daemon.url.replace(/\/mcp$/, "");
    const tracing = await until(async () => {
      const t = (JSON.parse((await rawRequest(`${base}/api/status`, "GET", {})).body) as { tracing?: { spans_sent: number } }).tracing;
      return t && t.spans_sent > 0 && t.spans_sent === receiver.spans.length ? t : undefined;
    }, "the status page's sent spans to reach the receiver's count", 300);
    expect(tracing).toEqual({ sample: 1, spans_sent: receiver.spans.length, spans_failed: 0, collector: receiver.url });
  });

  it("no argument or result value is in any exported span", () => {
    expect(receiver.spans.length).toBeGreaterThan(0);
    expect(receiver.raw.join("\n")).not.toContain(CANARY);
    expect(receiver.contentTypes.every((t) => t.startsWith("application/x-protobuf"))).toBe(true);
  });
});

describe("a collector that refuses every send", () => {
  it("loses the spans and says so on the status page, never showing the URL's password or query", async () => {
    const own = tempHome("mcphub-tracing-refused-");
    const refusing = await startOtlpReceiver();
    const port = new URL(refusing.url).port;
    // Off /v1/traces the receiver answers 404, which the exporter does not retry.
    const cfg = own.writeConfig({ expose: "all", servers: { web: { url: downstream.url } }, telemetry: { otlp: { url: `http://ops:${CANARY}@127.0.0.1:${port}/v1/elsewhere?api_key=${CANARY}` } } });
    const d = await startDaemon(own, cfg);
    try {
      const client = await httpClient(d.url);
      try {
        await until(async () => ((await client.client.listTools()).tools.some((t) => t.name === "web__echo") ? true : undefined), "web's tools");
        await client.call("web__echo", { message: "lost" });
      } finally {
        await client.close();
      }
      const base = d.url.replace(/\/mcp$/, "");
      const body = await until(async () => {
        const b = (await rawRequest(`${base}/api/status`, "GET", {})).body;
        return ((JSON.parse(b) as { tracing?: { spans_failed: number } }).tracing?.spans_failed ?? 0) > 0 ? b : undefined;
      }, "the status page to count the lost spans", 300);
      const tracing = (JSON.parse(body) as { tracing: { spans_sent: number; spans_failed: number; collector: string } }).tracing;
      expect(tracing.spans_sent).toBe(0);
      expect(tracing.collector).toBe(`http://127.0.0.1:${port}/v1/elsewhere`);
      expect(body).not.toContain(CANARY);
    } finally {
      await d.stop();
      await refusing.close();
      own.cleanup();
    }
    expect(refusing.spans).toEqual([]);
  });
});

describe("tracing off (the default)", () => {
  it("exports nothing and sends no traceparent downstream", async () => {
    const own = tempHome("mcphub-tracing-off-");
    const quiet = await startOtlpReceiver();
    const d = await startDaemon(own, own.writeConfig({ expose: "all", servers: { web: { url: downstream.url } } }));
    try {
      const client = await httpClient(d.url);
      try {
        await until(async () => ((await client.client.listTools()).tools.some((t) => t.name === "web__echo") ? true : undefined), "web's tools");
        const before = downstream.callHeaders.length;
        await client.call("web__echo", { message: "quiet" });
        expect(downstream.callHeaders.length).toBe(before + 1);
        expect(downstream.callHeaders.at(-1)).toBeUndefined();
        const status = JSON.parse((await rawRequest(d.url.replace(/\/mcp$/, "/api/status"), "GET", {})).body) as Record<string, unknown>;
        expect(status.servers).toBeDefined();
        expect(status).not.toHaveProperty("tracing");
      } finally {
        await client.close();
      }
    } finally {
      await d.stop();
      await quiet.close();
      own.cleanup();
    }
    expect(quiet.spans).toEqual([]);
  });
});
