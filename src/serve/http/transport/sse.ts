// One server-sent-events response: the headers, `message` events with ids, the priming event
// (an id and empty data, with the reconnection delay, so a client can resume from the start),
// and a comment every 15 s so idle intermediaries keep the connection.
import type { ServerResponse } from "node:http";

/** The SDK's keep-alive interval for SSE streams. */
export const SSE_KEEPALIVE_MS = 15_000;
/** Sent as `retry:` with the priming event: how long a client waits before resuming. */
export const SSE_RETRY_MS = 1_000;
/** Priming events carry empty data, which clients before this protocol version cannot parse. */
export const PRIMING_SINCE_VERSION = "2025-11-25";

export class SseStream {
  private keepalive: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly res: ServerResponse,
    sessionId: string | undefined,
  ) {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      ...(sessionId !== undefined ? { "mcp-session-id": sessionId } : {}),
    });
    // Headers go out now: the client learns the request was taken even before the first event.
    res.flushHeaders();
    this.keepalive = setInterval(() => this.write(": keepalive\n\n"), SSE_KEEPALIVE_MS);
    this.keepalive.unref();
    res.once("close", () => this.stop());
  }

  /** Whether the client can still receive on this stream. */
  get open(): boolean {
    return !this.ended && !this.res.destroyed && !this.res.writableEnded;
  }

  prime(id: string): void {
    this.write(`id: ${id}\nretry: ${SSE_RETRY_MS}\ndata: \n\n`);
  }

  /** Writes one message event; false when the stream is gone. */
  send(data: string, id: string | undefined): boolean {
    return this.write(id !== undefined ? `event: message\nid: ${id}\ndata: ${data}\n\n` : `event: message\ndata: ${data}\n\n`);
  }

  end(): void {
    if (this.ended) return;
    this.stop();
    if (!this.res.writableEnded) this.res.end();
  }

  private write(text: string): boolean {
    if (!this.open) return false;
    this.res.write(text);
    return true;
  }

  private stop(): void {
    this.ended = true;
    if (this.keepalive) clearInterval(this.keepalive);
    this.keepalive = undefined;
  }
}
