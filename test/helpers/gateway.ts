// Test helpers that run the real gateway CLI as a process and talk to it with the SDK's real
// Client, in an isolated temp HOME / data dir. Everything started here is cleaned up by close().
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import YAML from "yaml";

export const ROOT = resolve(import.meta.dirname, "../..");
export const BIN = join(ROOT, "bin/mcphub.js");
export const FIXTURES = join(ROOT, "test/fixtures");
export const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
export const MEMORY = join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js");

export interface TempHome {
  dir: string;
  env: NodeJS.ProcessEnv;
  writeConfig(config: unknown, name?: string): string;
  cleanup(): void;
}

/** A temp dir used as HOME and MCPHUB_DATA_DIR, with the keychain disabled (tests never touch it). */
export function tempHome(prefix = "mcphub-test-"): TempHome {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir,
    MCPHUB_DATA_DIR: join(dir, "data"),
    MCPHUB_KEYCHAIN: "off",
    MCPHUB_CONFIG: "",
  };
  delete env.MCPHUB_VAULT_PASSPHRASE;
  delete env.MCPHUB_VAULT_PASSPHRASE_FILE;
  return {
    dir,
    env,
    writeConfig(config, name = "mcphub.yaml") {
      const path = join(dir, name);
      writeFileSync(path, typeof config === "string" ? config : YAML.stringify(config));
      return path;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface GatewayClient {
  client: Client;
  transport: StdioClientTransport;
  pid: number;
  stderr: () => string;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** Spawns `mcphub mcp serve` with the given config and connects a real SDK Client over stdio. */
export async function startGateway(
  home: TempHome,
  configPath: string,
  opts: { agent?: string; extraArgs?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<GatewayClient> {
  const args = [BIN, "--config", configPath, "mcp", "serve", ...(opts.agent ? ["--agent", opts.agent] : []), ...(opts.extraArgs ?? [])];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: { ...(home.env as Record<string, string>), ...((opts.env ?? {}) as Record<string, string>) },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const client = new Client({ name: "mcphub-test", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error("gateway did not start");
  return {
    client,
    transport,
    pid,
    stderr: () => err,
    call: async (name, a = {}) => (await client.callTool({ name, arguments: a })) as CallToolResult,
    close: async () => {
      await client.close().catch(() => undefined);
    },
  };
}

/** The structured JSON document of a management tool result. */
export function doc(result: CallToolResult): Record<string, unknown> {
  if (result.structuredContent) return result.structuredContent as Record<string, unknown>;
  const first = result.content?.[0];
  if (first && first.type === "text") return JSON.parse(first.text) as Record<string, unknown>;
  throw new Error("result has no JSON document");
}

export function text(result: CallToolResult): string {
  return (result.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
}

/**
 * Polls list_servers until every named server is usable: ready, or idle with a catalogue (it starts
 * on first use). Bounded by attempts, not a clock assertion.
 */
export async function waitReady(gw: Pick<GatewayClient, "call">, servers: string[], listName = "mcphub_list_servers"): Promise<void> {
  let byName = new Map<string, { name: string; state: string; catalog?: string; error?: string }>();
  const usable = (n: string) => byName.get(n)?.state === "ready" || (byName.get(n)?.state === "idle" && byName.get(n)?.catalog !== "none");
  for (let i = 0; i < 600; i++) {
    const d = doc(await gw.call(listName));
    byName = new Map((d.servers as { name: string; state: string; catalog?: string; error?: string }[]).map((s) => [s.name, s]));
    if (servers.every(usable)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  // Say which servers and why (a missing bubblewrap, say), not only that they are not ready.
  const why = servers.filter((n) => !usable(n)).map((n) => {
    const s = byName.get(n);
    return s ? `${n} (${s.state}${s.error ? `: ${s.error}` : ""})` : `${n} (not listed)`;
  });
  throw new Error(`servers not ready: ${why.join("; ")}`);
}

/** Polls `check` until it holds (bounded by attempts); for events in other processes. */
export async function until(check: () => boolean | Promise<boolean>, what: string, attempts = 600): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

/** All descendant pids of a process, from /proc (Linux). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop() as number;
    const file = `/proc/${p}/task/${p}/children`;
    if (!existsSync(file)) continue;
    const kids = readFileSync(file, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    out.push(...kids);
    stack.push(...kids);
  }
  return out;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie still answers kill(0); treat it as dead.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/\) Z /.test(stat);
  } catch {
    return false;
  }
}

/** Runs the CLI once; returns exit code, stdout and stderr. */
export async function runMcphub(
  home: TempHome,
  args: string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...home.env, ...(opts.env ?? {}) }, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(opts.input ?? "");
  const code = await new Promise<number | null>((resolve) => child.once("close", (c) => resolve(c)));
  return { code, stdout, stderr };
}
