// The HTTP daemon as a real process (`mcphub up`), the SDK's streamable HTTP client with an
// agent's bearer token, and plain HTTP requests with full control over Host, Origin, Cookie and
// Authorization headers (fetch would not let a test set some of them).
import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BIN, runMcphub, type TempHome } from "./gateway.js";

export interface Caller {
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  listTools(): Promise<string[]>;
}

export interface Daemon {
  /** The MCP endpoint, e.g. http://127.0.0.1:43813/mcp. */
  url: string;
  /** e.g. http://127.0.0.1:43813 (no trailing slash). */
  base: string;
  port: number;
  child: ChildProcess;
  stderr: () => string;
  stop(): Promise<number | null>;
}

/** `mcphub token create AGENT --json` for each agent, through the real CLI: agent → token. */
export async function createTokens(home: TempHome, cfg: string, agents: readonly string[]): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {};
  for (const agent of agents) {
    const r = await runMcphub(home, ["--config", cfg, "token", "create", agent, "--json"]);
    if (r.code !== 0) throw new Error(`token create ${agent} exited ${r.code}: ${r.stderr}`);
    tokens[agent] = String((JSON.parse(r.stdout) as { token: string }).token);
  }
  return tokens;
}

export async function startDaemon(home: TempHome, cfg: string, extra: string[] = []): Promise<Daemon> {
  const child = spawn(process.execPath, [BIN, "--config", cfg, "up", "--listen", "127.0.0.1:0", ...extra], {
    env: home.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  const base = await new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)\/mcp/.exec(err);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`daemon exited (${code}): ${err}`)));
  });
  return {
    url: `${base}/mcp`,
    base,
    port: Number(new URL(base).port),
    child,
    stderr: () => err,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once("exit", (code) => resolve(code));
        child.kill("SIGTERM");
      }),
  };
}

export async function httpClient(url: string, token?: string): Promise<Client & { caller: Caller }> {
  const client = new Client({ name: "mcphub-http-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {}),
  );
  const caller: Caller = {
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
  };
  return Object.assign(client, { caller });
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

export function http(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<HttpAnswer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, method: opts.method ?? "GET", headers: opts.headers ?? {} },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: <T>() => JSON.parse(body) as T }));
      },
    );
    req.once("error", reject);
    // A daemon that never answers fails the test with the request that hung, not a bare timeout.
    req.setTimeout(HTTP_ANSWER_MS, () => req.destroy(new Error(`no answer from ${opts.method ?? "GET"} ${u.pathname} in ${HTTP_ANSWER_MS / 1000} s`)));
    req.end(opts.body);
  });
}

/** Longer than anything a request here waits for (a server start is bounded by its 30 s connect_timeout). */
const HTTP_ANSWER_MS = 90_000;

/** The `name=value` part of a Set-Cookie answer. */
export function cookieOf(a: HttpAnswer): string {
  const set = a.headers["set-cookie"];
  const first = Array.isArray(set) ? set[0] : set;
  if (!first) throw new Error(`no Set-Cookie (status ${a.status}): ${a.body.slice(0, 200)}`);
  return first.split(";")[0] as string;
}
