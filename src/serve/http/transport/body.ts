// Reading a POST body with a size limit, without the Web-stream conversion the SDK's transport
// goes through. The limit and the 413 message are the SDK's (server/requestBody.js).
import type { IncomingMessage } from "node:http";
import { DEFAULT_MAX_REQUEST_BODY_SIZE } from "@modelcontextprotocol/sdk/server/requestBody.js";

export { requestBodyTooLargeMessage as bodyTooLargeMessage } from "@modelcontextprotocol/sdk/server/requestBody.js";

/** The SDK's default upper bound on a request body (4 MiB). */
export const MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE;

export type Body = { tooLarge: true } | { tooLarge: false; text: string };

export function readBody(req: IncomingMessage, max = MAX_BODY_BYTES): Promise<Body> {
  if (Number(req.headers["content-length"]) > max) {
    // Discard the rest so the connection can be reused, without holding it in memory.
    req.resume();
    return Promise.resolve({ tooLarge: true });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > max) {
        over = true;
        chunks.length = 0;
        resolve({ tooLarge: true });
        return;
      }
      chunks.push(chunk);
    });
    req.once("end", () => {
      if (over) return;
      const text = chunks.length === 1 ? (chunks[0] as Buffer).toString("utf8") : Buffer.concat(chunks).toString("utf8");
      resolve({ tooLarge: false, text });
    });
    req.once("error", reject);
  });
}
