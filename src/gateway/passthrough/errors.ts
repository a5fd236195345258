// Errors that cross a JSON-RPC boundary unchanged. The SDK puts an error's `code` and `message`
// on the wire as they are, and the receiving SDK wraps them in an McpError whose message reads
// "MCP error <code>: <message>". An McpError thrown here would already carry that prefix, so the
// other side would see it twice; these errors carry the bare message instead.
import { McpError } from "@modelcontextprotocol/sdk/types.js";

export class WireError extends Error {
  override name = "WireError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** An error received from one peer, to be passed on to another with its code, message and data. */
export function relayed(err: McpError): WireError {
  return new WireError(err.code, bareMessage(err), err.data);
}

/** The message of an McpError without the "MCP error <code>: " prefix the SDK adds. */
export function bareMessage(err: McpError): string {
  const prefix = `MCP error ${err.code}: `;
  let m = err.message;
  while (m.startsWith(prefix)) m = m.slice(prefix.length);
  return m;
}

export function isWireError(err: unknown): err is WireError | McpError {
  return err instanceof WireError || err instanceof McpError;
}

/** Either kind, ready to throw across the boundary. */
export function toWire(err: WireError | McpError): WireError {
  return err instanceof WireError ? err : relayed(err);
}
