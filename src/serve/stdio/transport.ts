// The upstream stdio transport of `mcphub mcp serve`: newline-delimited JSON-RPC on stdin/stdout.
// The SDK's StdioServerTransport closes the whole session when one line exceeds its buffer (the
// gateway then exits 0 without a word) and silently drops lines it cannot parse. Here:
//  - a line over `maxMessageBytes` is skipped as it streams in (memory stays bounded), its
//    top-level id is read on the way, and it is answered with an error naming the limit;
//  - unparsable JSON gets -32700 (id null), malformed JSON-RPC -32600 and bad params -32602
//    (see rpc-guard.ts); the session keeps serving;
//  - outgoing error texts carry no doubled "MCP error" prefix.
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { TopLevelIdScanner } from "../../util/json-id-scan.js";
import { formatBytes } from "../../util/units.js";
import { cleanOutgoing, errorReply, inspectIncoming, type RpcErrorReply } from "../rpc-guard.js";

export interface LineTransportOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Largest line accepted; longer ones are answered with an error and skipped. */
  maxMessageBytes: number;
  /** One line per skipped message or dropped notification (the gateway's logger). */
  warn?: (msg: string) => void;
}

const NEWLINE = 0x0a;

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
  private readonly onData = (chunk: Buffer | string) => this.read(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  private readonly onEnd = () => void this.close();
  private readonly onError = (err: Error) => this.onerror?.(err);

  constructor(private readonly opts: LineTransportOptions) {}

  async start(): Promise<void> {
    if (this.started) throw new Error("stdio transport already started");
    this.started = true;
    this.opts.input.on("data", this.onData);
    this.opts.input.on("end", this.onEnd);
    this.opts.input.on("error", this.onError);
    this.opts.output.on("error", this.onError);
  }

  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    return this.write(cleanOutgoing(message));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.opts.input.off("data", this.onData);
    this.opts.input.off("end", this.onEnd);
    this.opts.input.off("error", this.onError);
    this.chunks = [];
    this.skipping = undefined;
    this.onclose?.();
  }

  private write(message: JSONRPCMessage | RpcErrorReply): Promise<void> {
    if (this.closed) return Promise.resolve();
    const out = this.opts.output;
    return new Promise((resolve) => {
      if (out.write(`${JSON.stringify(message)}\n`)) resolve();
      else out.once("drain", resolve);
    });
  }

  private read(chunk: Buffer): void {
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
    }
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
    if ("message" in verdict) this.onmessage?.(verdict.message);
    else if ("reply" in verdict) void this.write(verdict.reply);
    else this.opts.warn?.(`ignored ${verdict.drop}`);
  }
}
