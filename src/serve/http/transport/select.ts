// Which streamable-HTTP server transport a daemon session runs on: the lean one (the default) or
// the SDK's own, kept selectable with `http_transport: sdk` for one release. Both take a request
// after the listener's Host/Origin/token checks and answer it in full.
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { LeanHttpTransport } from "./lean.js";

export type HttpTransportKind = "lean" | "sdk";

export interface HttpSessionTransport extends Transport {
  /** Answers one HTTP request of the session; `parsedBody` when the listener already read it. */
  handleRequest(req: IncomingMessage, res: ServerResponse, parsedBody?: unknown): Promise<void>;
}

export interface SessionTransportOptions {
  /** Largest request body (the daemon's max_message_size). */
  maxBodyBytes: number;
  sessionIdGenerator: () => string;
  onsessioninitialized: (sessionId: string) => void;
}

export function createSessionTransport(kind: HttpTransportKind, opts: SessionTransportOptions): HttpSessionTransport {
  const { maxBodyBytes, ...rest } = opts;
  return kind === "sdk" ? new StreamableHTTPServerTransport({ ...rest, maxRequestBodySize: maxBodyBytes }) : new LeanHttpTransport({ ...rest, maxBodyBytes });
}
