// Reading a POST body with a size limit, without the Web-stream conversion the SDK's transport
// goes through. The 413 message is the SDK's (server/requestBody.js) plus the setting to change;
// the daemon passes max_message_size as the limit.
import type { IncomingMessage } from "node:http";
import { DEFAULT_MAX_REQUEST_BODY_SIZE } from "@modelcontextprotocol/sdk/server/requestBody.js";

import { requestBodyTooLargeMessage } from "@modelcontextprotocol/sdk/server/requestBody.js";
import { formatBytes } from "../../../util/units.js";

/** The SDK's 413 message, plus the setting that decides the limit (the daemon's is max_message_size). */
export function bodyTooLarge(max: number): string {
  return `${requestBodyTooLargeMessage(max)} (max_message_size, ${formatBytes(max)})`;
}

/** The SDK's default upper bound on a request body (4 MiB), for a transport given no limit. */
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
