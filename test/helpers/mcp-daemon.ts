// Starting the real daemon (`mcphub up`) as a process and talking to it as an MCP client: the SDK's
// streamable HTTP client, raw HTTP requests for what a client would not send, /proc readings.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BIN, type TempHome } from "./gateway.js";

export interface Daemon {
  url: string;
  child: ChildProcess;
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startDaemon(home: TempHome, cfg: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Daemon> {
  const child = spawn(process.execPath, [BIN, "--config", cfg, "up", "--listen", "127.0.0.1:0", ...extra], {
    env: { ...home.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(err);
      if (m?.[1]) resolve(m[1]);
    };
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`daemon exited (${code}): ${err}`)));
  });
  return {
    url,
    child,
    stderr: () => err,
    stop: (signal = "SIGTERM") =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once("exit", (code) => resolve(code));
        child.kill(signal);
      }),
  };
}

export interface HttpClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  call(name: string, args?: Record<string, unknown>, opts?: { onprogress?: () => void }): Promise<CallToolResult>;
  close(): Promise<void>;
}

export async function httpClient(url: string, token?: string): Promise<HttpClient> {
  const client = new Client({ name: "mcphub-http-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {});
  await client.connect(transport);
  return {
    client,
    transport,
    call: async (name, args = {}, opts = {}) =>
      (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...(opts.onprogress ? { onprogress: opts.onprogress } : {}) })) as CallToolResult,
    close: () => client.close(),
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request on a fresh connection that is closed afterwards (no keep-alive). */
export function rawRequest(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<RawResponse> {
  const u = new URL(url);
  const agent = new Agent({ keepAlive: false });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method,
        agent,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (d: string) => (text += d));
        res.on("end", () => {
          agent.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
        });
      },
    );
    req.once("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

export const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

/** Opens a session with one initialize POST and walks away (no DELETE): an abandoned session. */
export async function abandonedSession(url: string, headers: Record<string, string> = {}): Promise<string> {
  const r = await rawRequest(url, "POST", headers, INIT);
  const id = r.headers["mcp-session-id"];
  if (r.status !== 200 || typeof id !== "string") throw new Error(`initialize failed: ${r.status} ${r.body}`);
  return id;
}

export async function healthz(url: string): Promise<Record<string, unknown>> {
  const r = await rawRequest(url.replace(/\/mcp$/, "/healthz"), "GET", {});
  return { httpStatus: r.status, ...(JSON.parse(r.body) as Record<string, unknown>) };
}

/** Resident memory (bytes) and open file descriptors of a process, from /proc. */
export function resources(pid: number): { rss: number; fds: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return { rss: kb * 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
}

/** Polls `check` until it holds (bounded by attempts; never asserts on elapsed time). */
export async function until<T>(check: () => Promise<T | undefined> | T | undefined, what: string, attempts = 600, pauseMs = 100): Promise<T> {
  for (let i = 0; i < attempts; i++) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  throw new Error(`gave up waiting for: ${what}`);
}
