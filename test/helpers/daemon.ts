// Test helpers for the HTTP daemon: run `mcphub up` as a real process on a free port and talk to
// it with the SDK's streamable HTTP client, optionally with an agent's bearer token.
import { spawn, type ChildProcess } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BIN, type TempHome } from "./gateway.js";

export interface Caller {
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  listTools(): Promise<string[]>;
}

export interface Daemon {
  url: string;
  child: ChildProcess;
  /** Everything the daemon wrote to stderr so far. */
  stderr(): string;
  stop(): Promise<number | null>;
}

export async function startDaemon(home: TempHome, cfg: string, extra: string[] = []): Promise<Daemon> {
  const child = spawn(process.execPath, [BIN, "--config", cfg, "up", "--listen", "127.0.0.1:0", ...extra], { env: home.env, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(err);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`daemon exited (${code}): ${err}`)));
  });
  return {
    url,
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
