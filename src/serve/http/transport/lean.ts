// The lean server side of MCP's streamable HTTP transport for one session, on node:http directly.
// It implements the SDK's Transport, so the session's Server runs on it unchanged, and answers
// like the SDK's StreamableHTTPServerTransport (status codes, JSON-RPC error bodies, headers),
// but skips what made that one expensive per call: the conversion of every request and response
// to Web-standard Request/Response/ReadableStream objects, a zod parse of every message, and an
// SSE stream for every POST. A request is answered with plain JSON unless it needs a stream
// (exchange.ts); a GET opens the session's standalone stream; a GET with Last-Event-ID resumes a
// broken stream from the session's event log (events.ts); DELETE ends the session.
//
// Host/Origin checks, tokens and the session map stay with the listener (../listener.ts), in front of
// both transports.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
  type RequestInfo,
} from "@modelcontextprotocol/sdk/types.js";
import { bodyTooLarge, MAX_BODY_BYTES, readBody } from "./body.js";
import { EventLog, parseEventId } from "./events.js";
import { Exchange, type ExchangeHost } from "./exchange.js";
import { MAX_BATCH_SIZE } from "@modelcontextprotocol/sdk/server/requestBody.js";
import { isResponse, messageKind, progressTokenOf, type MessageKind } from "../../../util/json/jsonrpc.js";
import { accepts, isJsonContentType, methodNotAllowed, prefersStream, protocolVersionProblem, refuse, refuseWith } from "./replies.js";
import { PRIMING_SINCE_VERSION, SseStream } from "./sse.js";

export interface LeanTransportOptions {
  sessionIdGenerator: () => string;
  /** Called once the initialize request has been given its session id, before it is answered. */
  onsessioninitialized?: (sessionId: string) => void | Promise<void>;
  maxBodyBytes?: number;
}

/** The standalone (GET) stream's key in the event log; POST streams are p1, p2, ... */
const STANDALONE = "g";

/** Request metadata for handlers; the URL is built only if a handler asks for it. */
class LazyRequestInfo implements RequestInfo {
  constructor(
    readonly headers: IncomingMessage["headers"],
    private readonly path: string,
  ) {}

  get url(): URL {
    return new URL(this.path, `http://${this.headers.host ?? "localhost"}`);
  }
}

export class LeanHttpTransport implements Transport, ExchangeHost {
  sessionId: string | undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  readonly events = new EventLog();
  jsonHeaders: Record<string, string> = { "content-type": "application/json" };

  private started = false;
  private initialized = false;
  private closed = false;
  /** The protocol version the client asked for in initialize (decides priming events). */
  private clientVersion: string | undefined;
  /** Unanswered requests by id, each to the POST it came on. */
  private readonly exchanges = new Map<RequestId, Exchange>();
  /** Streaming exchanges by event-log key, for resumes. */
  private readonly streams = new Map<string, Exchange>();
  private streamCount = 0;
  private standalone: SseStream | undefined;
  /** Standalone events are logged only once a client has opened that stream (else none can resume). */
  private standaloneUsed = false;
  private readonly maxBody: number;

  constructor(private readonly opts: LeanTransportOptions) {
    this.maxBody = opts.maxBodyBytes ?? MAX_BODY_BYTES;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("Transport already started");
    this.started = true;
  }

  async handleRequest(req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): Promise<void> {
    if (this.closed) return refuseWith(res, "sessionNotFound");
    switch (req.method) {
      case "POST":
        return this.post(req, res, parsedBody);
      case "GET":
        return this.get(req, res);
      case "DELETE":
        return this.delete(req, res);
      default:
        return methodNotAllowed(res);
    }
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.closed) return;
    const answer = isResponse(message);
    const target = answer ? message.id : options?.relatedRequestId;
    if (target === undefined) {
      if (answer) throw new Error("Cannot send a response on a standalone SSE stream unless resuming a previous client request");
      this.sendStandalone(message);
      return;
    }
    const exchange = this.exchanges.get(target);
    if (!exchange) throw new Error(`No connection established for request ID: ${String(target)}`);
    exchange.send(message, answer ? target : undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const exchange of new Set(this.exchanges.values())) exchange.abort();
    for (const exchange of this.streams.values()) exchange.abort();
    this.exchanges.clear();
    this.streams.clear();
    this.standalone?.end();
    this.standalone = undefined;
    this.onclose?.();
  }

  openStream(exchange: Exchange): string {
    const key = `p${++this.streamCount}`;
    this.streams.set(key, exchange);
    return key;
  }

  settled(exchange: Exchange, stream: string | undefined): void {
    for (const id of exchange.ids) if (this.exchanges.get(id) === exchange) this.exchanges.delete(id);
    if (stream !== undefined) this.streams.delete(stream);
  }

  private async post(req: IncomingMessage, res: ServerResponse, parsedBody: unknown): Promise<void> {
    const h = req.headers;
    if (!accepts(h.accept, "application/json") || !accepts(h.accept, "text/event-stream")) return refuseWith(res, "notAcceptablePost");
    if (!isJsonContentType(h["content-type"])) return refuseWith(res, "unsupportedMedia");
    let raw = parsedBody;
    if (raw === undefined) {
      let body;
      try {
        body = await readBody(req, this.maxBody);
      } catch {
        return refuseWith(res, "parseError");
      }
      if (body.tooLarge) return refuse(res, 413, -32000, bodyTooLarge(this.maxBody));
      try {
        raw = JSON.parse(body.text);
      } catch {
        return refuseWith(res, "parseError");
      }
    }
    const messages = (Array.isArray(raw) ? raw : [raw]) as JSONRPCMessage[];
    if (messages.length > MAX_BATCH_SIZE) return refuse(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`);
    const kinds: MessageKind[] = [];
    let init: JSONRPCMessage | undefined;
    for (const m of messages) {
      const kind = messageKind(m);
      if (kind === undefined) return refuseWith(res, "invalidMessage");
      kinds.push(kind);
      if (kind === "request" && (m as { method: string }).method === "initialize") init = m;
    }
    if (this.closed) return refuseWith(res, "sessionNotFound");

    if (init) {
      if (this.initialized && this.sessionId !== undefined) return refuseWith(res, "alreadyInitialized");
      if (messages.length > 1) return refuseWith(res, "oneInitialize");
      this.sessionId = this.opts.sessionIdGenerator();
      this.jsonHeaders = { "content-type": "application/json", "mcp-session-id": this.sessionId };
      this.initialized = true;
      const asked = (init as { params?: { protocolVersion?: unknown } }).params?.protocolVersion;
      if (typeof asked === "string") this.clientVersion = asked;
      await this.opts.onsessioninitialized?.(this.sessionId);
    } else if (!this.sessionOk(req, res)) {
      return;
    }
    if (this.closed) return refuseWith(res, "sessionNotFound");

    const extra = this.extraFor(req);
    const requestIds: RequestId[] = [];
    for (let i = 0; i < messages.length; i++) if (kinds[i] === "request") requestIds.push((messages[i] as { id: RequestId }).id);
    if (requestIds.length === 0) {
      res.writeHead(202).end();
      this.deliver(messages, kinds, extra);
      return;
    }
    for (const id of requestIds) {
      if (this.exchanges.has(id)) return refuse(res, 400, -32600, `Invalid Request: request id ${JSON.stringify(id)} is already in flight in this session`);
    }
    const streamNow = prefersStream(h.accept as string) || messages.some((m, i) => kinds[i] === "request" && progressTokenOf(m) !== undefined);
    const exchange = new Exchange(this, res, requestIds, this.primes(req), streamNow);
    for (const id of requestIds) this.exchanges.set(id, exchange);
    this.deliver(messages, kinds, extra);
  }

  private deliver(messages: JSONRPCMessage[], kinds: MessageKind[], extra: MessageExtraInfo): void {
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i] as JSONRPCMessage;
      this.onmessage?.(m, extra);
      // A cancelled request gets no answer (the Server drops it): its POST must end anyway.
      if (kinds[i] === "notification" && (m as { method: string }).method === "notifications/cancelled") {
        const id = (m as { params?: { requestId?: unknown } }).params?.requestId;
        if (typeof id === "string" || typeof id === "number") this.exchanges.get(id)?.cancel(id);
      }
    }
  }

  private async get(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!accepts(req.headers.accept, "text/event-stream")) return refuseWith(res, "notAcceptableGet");
    if (!this.sessionOk(req, res)) return;
    const last = req.headers["last-event-id"];
    if (typeof last === "string" && last !== "") return this.resume(last, res);
    if (this.standalone?.open) return refuseWith(res, "getConflict");
    const stream = this.openStandalone(res);
    if (this.primes(req)) stream.prime(this.events.nextId(STANDALONE));
  }

  private resume(lastEventId: string, res: ServerResponse): void {
    const at = parseEventId(lastEventId);
    if (!at) return refuseWith(res, "invalidEventId");
    if (at.stream === STANDALONE) {
      // The client lost its standalone stream (perhaps without our noticing): this one replaces it.
      this.standalone?.end();
      const stream = this.openStandalone(res);
      for (const e of this.events.after(STANDALONE, at.seq)) stream.send(e.data, e.id);
      return;
    }
    const live = this.streams.get(at.stream);
    if (live) return live.resume(res, at.seq);
    if (this.events.isComplete(at.stream)) {
      const stream = new SseStream(res, this.sessionId);
      for (const e of this.events.after(at.stream, at.seq)) stream.send(e.data, e.id);
      stream.end();
      this.events.forget(at.stream);
      return;
    }
    refuse(res, 400, -32000, `Last-Event-ID ${JSON.stringify(lastEventId)} names no stream of this session that can be resumed (it ended, or its events were dropped)`);
  }

  private async delete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.sessionOk(req, res)) return;
    await this.close();
    res.writeHead(200).end();
  }

  private openStandalone(res: ServerResponse): SseStream {
    const stream = new SseStream(res, this.sessionId);
    this.standalone = stream;
    this.standaloneUsed = true;
    res.once("close", () => {
      if (this.standalone === stream) this.standalone = undefined;
    });
    return stream;
  }

  private sendStandalone(message: JSONRPCMessage): void {
    if (!this.standaloneUsed) return;
    const data = JSON.stringify(message);
    const id = this.events.nextId(STANDALONE);
    this.events.append(STANDALONE, id, data);
    this.standalone?.send(data, id);
  }

  /** Session id and protocol version checks of every request but initialize; false when refused. */
  private sessionOk(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.initialized) {
      refuseWith(res, "notInitialized");
      return false;
    }
    const id = req.headers["mcp-session-id"];
    if (id === undefined) {
      refuseWith(res, "sessionIdRequired");
      return false;
    }
    if (id !== this.sessionId) {
      refuseWith(res, "sessionNotFound");
      return false;
    }
    const problem = protocolVersionProblem(req.headers["mcp-protocol-version"]);
    if (problem) {
      refuse(res, 400, -32000, problem);
      return false;
    }
    return true;
  }

  /**
   * Whether a stream opened for `req` starts with a priming event. Its empty data breaks clients
   * older than 2025-11-25, so it goes to a client that initialized with that version or later
   * (its library parses it, whatever an individual request's header says) or whose request
   * announces it.
   */
  private primes(req: IncomingMessage): boolean {
    const header = req.headers["mcp-protocol-version"];
    const version = typeof header === "string" ? header : DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
    return version >= PRIMING_SINCE_VERSION || (this.clientVersion ?? "") >= PRIMING_SINCE_VERSION;
  }

  private extraFor(req: IncomingMessage): MessageExtraInfo {
    const requestInfo = new LazyRequestInfo(req.headers, req.url ?? "/");
    // Set by an authenticating middleware, as the SDK's transport reads it.
    const authInfo = (req as IncomingMessage & { auth?: AuthInfo }).auth;
    return authInfo ? { requestInfo, authInfo } : { requestInfo };
  }
}
