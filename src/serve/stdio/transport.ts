// The upstream stdio transport of `mcphub mcp serve`: newline-delimited JSON-RPC on stdin/stdout.
// The SDK's StdioServerTransport closes the whole session when one line exceeds its buffer (the
// gateway then exits 0 without a word) and silently drops lines it cannot parse. Here:
//  - a line over `maxMessageBytes` is skipped as it streams in (memory stays bounded), its
//    top-level id is read on the way, and it is answered with an error naming the limit;
//  - unparsable JSON gets -32700 (id null), malformed JSON-RPC -32600 and bad params -32602
//    (see rpc-guard.ts); the session keeps serving;
//  - the MCP lifecycle is kept as the daemon keeps it over HTTP: a request before initialize
//    (ping aside) is refused and never runs, a second initialize is refused;
//  - stdin is read only as fast as replies can be written (backpressure): while more than
//    `maxQueuedBytes` of output wait for the client to read them, or `maxPending` requests are
//    unanswered, no more input is read, so a client that writes and never reads fills its own
//    pipe instead of the gateway's memory;
//  - outgoing error texts carry no doubled "MCP error" prefix.
import type { Writable } from "node:stream";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { TopLevelIdScanner } from "../../util/json/id-scan.js";
import { jsonTextOf } from "../../util/json/stream.js";
import { TickBatcher } from "../../util/tick-batch.js";
import { formatBytes } from "../../util/units.js";
import { cleanOutgoing, errorReply, inspectIncoming, type RpcErrorReply } from "../rpc-guard.js";

export interface LineTransportOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Largest line accepted; longer ones are answered with an error and skipped. */
  maxMessageBytes: number;
  /** One line per skipped message or dropped notification (the gateway's logger). */
  warn?: (msg: string) => void;
  /** Output bytes waiting for the client beyond which no more input is read (default 1 MiB). */
  maxQueuedBytes?: number;
  /** Unanswered requests beyond which no more input is read (default 256). */
  maxPending?: number;
}

/**
 * The message as one line. A tool call's result was serialised once already, when the call
 * measured it against the response budget (util/json/stream.ts keeps that text): a reply shaped
 * {jsonrpc, id, result}, as the direct call path sends it, is written around that text instead of
 * serialising the result a second time. The line is the same JSON.stringify(message) would give.
 */
export function lineOf(message: JSONRPCMessage | RpcErrorReply): string {
  const m = message as { jsonrpc?: unknown; id?: unknown; result?: unknown };
  const result = m.result;
  if (result !== null && typeof result === "object" && m.jsonrpc === "2.0" && (typeof m.id === "string" || typeof m.id === "number")) {
    const text = jsonTextOf(result);
    if (text !== undefined) {
      const keys = Object.keys(m);
      if (keys.length === 3 && keys[0] === "jsonrpc" && keys[1] === "id" && keys[2] === "result") return `{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":${text}}\n`;
    }
  }
  return `${JSON.stringify(message)}\n`;
}

/** Replies waiting in the pipe and the process before the gateway stops reading requests. */
export const MAX_QUEUED_BYTES = 1024 * 1024;
/** Requests being worked on before the gateway stops reading more. */
export const MAX_PENDING_REQUESTS = 256;

const NEWLINE = 0x0a;
const NOT_INITIALIZED = "Bad Request: Server not initialized; the first request must be initialize";
const ALREADY_INITIALIZED = "Invalid Request: Server already initialized";

export class LineStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** Set while the rest of an oversized line is being skipped. */
  private skipping?: { scanner: TopLevelIdScanner; bytes: number };
  private started = false;
  private closed = false;
  /** Client requests read and not answered yet (their ids). */
  private readonly pending = new Set<RequestId>();
  /** Requests this side sent the client (sampling, elicitation, roots) still waiting for its answer. */
  private readonly asked = new Set<RequestId>();
  /** Input read while reading was paused, processed when it resumes. */
  private held: Buffer | undefined;
  private paused = false;
  /** "new" until initialize arrives; then the session serves everything. */
  private phase: "new" | "initializing" | "ready" = "new";
  private initializeId: RequestId | undefined;
  private readonly maxQueued: number;
  private readonly maxPending: number;
  private readonly onData = (chunk: Buffer | string) => this.read(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  private readonly onEnd = () => void this.close();
  private readonly onError = (err: Error) => this.onerror?.(err);
  private readonly onDrain = () => this.maybeResume();
  /** Lines queued in this tick, written together when it ends. */
  private readonly out = new TickBatcher((text, done) => {
    if (this.opts.output.write(text)) done();
    else this.opts.output.once("drain", () => done());
  });

  constructor(private readonly opts: LineTransportOptions) {
    this.maxQueued = opts.maxQueuedBytes ?? MAX_QUEUED_BYTES;
    this.maxPending = opts.maxPending ?? MAX_PENDING_REQUESTS;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("stdio transport already started");
    this.started = true;
    this.opts.input.on("data", this.onData);
    this.opts.input.on("end", this.onEnd);
    this.opts.input.on("error", this.onError);
    this.opts.output.on("error", this.onError);
    this.opts.output.on("drain", this.onDrain);
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    const m = message as { id?: RequestId; method?: unknown; result?: unknown; params?: { requestId?: RequestId } };
    if (m.id !== undefined) {
      if (m.method !== undefined) this.asked.add(m.id);
      else this.answered(m.id, m.result !== undefined);
    } else if (m.method === "notifications/cancelled" && m.params?.requestId !== undefined) {
      // We gave up on a request of ours (its timeout): no answer is expected any more.
      this.asked.delete(m.params.requestId);
    }
    return this.write(cleanOutgoing(message));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.opts.input.off("data", this.onData);
    this.opts.input.off("end", this.onEnd);
    this.opts.input.off("error", this.onError);
    this.opts.output.off("drain", this.onDrain);
    this.chunks = [];
    this.held = undefined;
    this.skipping = undefined;
    this.pending.clear();
    this.onclose?.();
  }

  /** One line to the client; the lines of a tick go out in one write (util/tick-batch.ts). */
  private write(message: JSONRPCMessage | RpcErrorReply): Promise<void> {
    if (this.closed) return Promise.resolve();
    return this.out.push(lineOf(message));
  }

  /** A reply to one of the client's requests went out. */
  private answered(id: RequestId, ok: boolean): void {
    if (this.phase === "initializing" && id === this.initializeId) {
      // A failed initialize (bad params) may be sent again; a successful one is final.
      this.phase = ok ? "ready" : "new";
      this.initializeId = undefined;
    }
    if (this.pending.delete(id)) this.maybeResume();
  }

  /** Whether no more input should be read now. */
  private mustWait(): boolean {
    // Lines queued in this tick count too (replies to bad lines are queued as they are read).
    const queued = ((this.opts.output as Partial<Writable>).writableLength ?? 0) + this.out.queuedChars;
    if (queued > this.maxQueued) return true;
    // Requests the client must answer (an elicitation the pending calls wait for) arrive on the
    // same input: while one is outstanding, a full set of pending requests does not stop reading.
    return this.pending.size >= this.maxPending && this.asked.size === 0;
  }

  private pause(rest: Buffer | undefined): void {
    if (rest && rest.length > 0) this.held = this.held ? Buffer.concat([this.held, rest]) : Buffer.from(rest);
    if (this.paused) return;
    this.paused = true;
    this.opts.input.pause();
  }

  private maybeResume(): void {
    if (!this.paused || this.closed || this.mustWait()) return;
    this.paused = false;
    const held = this.held;
    this.held = undefined;
    if (held) this.read(held);
    if (!this.paused && !this.closed) this.opts.input.resume();
  }

  private read(chunk: Buffer): void {
    if (this.paused) {
      // Data already on its way when reading was paused: kept, in order, for later.
      this.pause(chunk);
      return;
    }
    let start = 0;
    while (start < chunk.length && !this.closed) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (this.skipping) {
        this.skipping.scanner.feed(piece);
        this.skipping.bytes += piece.length;
      } else if (this.size + piece.length > this.opts.maxMessageBytes) {
        const scanner = new TopLevelIdScanner();
        for (const c of this.chunks) scanner.feed(c);
        scanner.feed(piece);
        this.skipping = { scanner, bytes: this.size + piece.length };
        this.chunks = [];
        this.size = 0;
      } else if (piece.length > 0) {
        // Copied: the stream may reuse its buffer, and a subarray would pin the whole chunk.
        this.chunks.push(nl === -1 ? Buffer.from(piece) : piece);
        this.size += piece.length;
      }
      if (nl === -1) break;
      this.endLine();
      start = nl + 1;
      if (start < chunk.length && this.mustWait()) {
        this.pause(chunk.subarray(start));
        return;
      }
    }
    if (this.mustWait()) this.pause(undefined);
  }

  private endLine(): void {
    if (this.skipping) {
      const { scanner, bytes } = this.skipping;
      this.skipping = undefined;
      const head = scanner.result();
      const limit = formatBytes(this.opts.maxMessageBytes);
      this.opts.warn?.(`skipped a ${formatBytes(bytes)} message from the client: larger than max_message_size (${limit})`);
      // A notification gets no reply; a request (or anything whose id we could not read) does.
      if (!(head.hasMethod && head.id === null)) {
        void this.write(
          errorReply(head.id, ErrorCode.InvalidRequest, `message too large: ${formatBytes(bytes)} exceeds the gateway's max_message_size of ${limit}; it was not processed`),
        );
      }
      return;
    }
    const line = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.size = 0;
    const text = line.toString("utf8").replace(/\r$/, "");
    if (text.trim() === "") return;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      void this.write(errorReply(null, ErrorCode.ParseError, `parse error: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    const verdict = inspectIncoming(raw);
    if ("reply" in verdict) void this.write(verdict.reply);
    else if ("drop" in verdict) this.opts.warn?.(`ignored ${verdict.drop}`);
    else this.deliver(verdict.message);
  }

  /** Lifecycle first (as over HTTP), then the session; requests are counted until answered. */
  private deliver(message: JSONRPCMessage): void {
    const m = message as { id?: RequestId; method?: string };
    if (m.method === undefined) {
      // An answer to a request of ours.
      if (m.id !== undefined) this.asked.delete(m.id);
      this.onmessage?.(message);
      return;
    }
    if (m.id === undefined) {
      // A notification before initialize has nothing to act on (and gets no reply).
      if (this.phase === "new") return;
      this.onmessage?.(message);
      // A cancelled request is never answered: it no longer counts as pending.
      const cancelled = m.method === "notifications/cancelled" ? (message as { params?: { requestId?: RequestId } }).params?.requestId : undefined;
      if (cancelled !== undefined && this.pending.delete(cancelled)) this.maybeResume();
      return;
    }
    if (m.method === "initialize") {
      if (this.phase !== "new") {
        void this.write(errorReply(m.id, ErrorCode.InvalidRequest, ALREADY_INITIALIZED));
        return;
      }
      this.phase = "initializing";
      this.initializeId = m.id;
    } else if (this.phase === "new" && m.method !== "ping") {
      void this.write(errorReply(m.id, -32000, NOT_INITIALIZED));
      return;
    }
    this.pending.add(m.id);
    this.onmessage?.(message);
  }
}
