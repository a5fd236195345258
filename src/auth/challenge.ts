// Before a sign-in: ask the server what it wants. An unauthenticated MCP handshake and tools/list
// runs against it; the first 401/403 answer's WWW-Authenticate header says where its protected-
// resource metadata lives (when it is not at a well-known URI) and which scope it asks for. The
// SDK's auth() takes both from here, as a client that met the challenge on a real request would.
import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { VERSION } from "../version.js";

export interface Challenge {
  status: number;
  /** The scheme is Bearer (an OAuth-protected resource). */
  bearer: boolean;
  resourceMetadataUrl?: URL;
  scope?: string;
}

export async function probeChallenge(opts: {
  url: string;
  transport: "http" | "sse" | undefined;
  headers?: Record<string, string>;
  timeoutMs: number;
  fetch: FetchLike;
}): Promise<Challenge | undefined> {
  const origin = new URL(opts.url).origin;
  let challenge: Challenge | undefined;
  const recording: FetchLike = async (url, init) => {
    const res = await opts.fetch(url, init);
    if (challenge === undefined && (res.status === 401 || res.status === 403) && new URL(String(url)).origin === origin) {
      const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res);
      challenge = {
        status: res.status,
        bearer: /^\s*bearer\b/i.test(res.headers.get("www-authenticate") ?? ""),
        ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
        ...(scope ? { scope } : {}),
      };
    }
    return res;
  };
  const url = new URL(opts.url);
  const requestInit: RequestInit = { headers: opts.headers ?? {} };
  const transport = opts.transport === "sse" ? new SSEClientTransport(url, { requestInit, fetch: recording }) : new StreamableHTTPClientTransport(url, { requestInit, fetch: recording });
  const client = new Client({ name: "mcphub-auth", version: VERSION }, { capabilities: {} });
  client.onerror = () => undefined;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    await client.connect(transport, { signal, timeout: opts.timeoutMs });
    if (challenge === undefined) await client.listTools(undefined, { signal, timeout: opts.timeoutMs });
  } catch {
    // A refusal is what we came for; anything else leaves discovery to the well-known URIs.
  } finally {
    await client.close().catch(() => undefined);
  }
  return challenge;
}
