// Starts the real server-everything over SSE or streamable HTTP on a free port, as a child process
// in its own process group, and waits until it accepts connections.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { connect, createServer } from "node:net";
import { dirname, join } from "node:path";

export interface RunningServer {
  url: string;
  pid: number;
  close(): Promise<void>;
}

const require = createRequire(import.meta.url);

export function serverEverythingEntry(): string {
  const pkg = require.resolve("@modelcontextprotocol/server-everything/package.json");
  return join(dirname(pkg), "dist", "index.js");
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: "127.0.0.1" });
    sock.once("connect", () => {
      sock.destroy();
      resolve(true);
    });
    sock.once("error", () => resolve(false));
  });
}

/** `mode` is server-everything's own transport argument. */
export async function startServerEverything(mode: "sse" | "streamableHttp"): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [serverEverythingEntry(), mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4096);
  });
  let exited = false;
  const exitedP = new Promise<void>((r) => child.once("exit", () => ((exited = true), r())));
  const pid = child.pid ?? 0;
  const close = async () => {
    if (!exited) {
      try {
        process.kill(-pid, "SIGTERM");
      } catch {
        // already gone
      }
      const t = setTimeout(() => {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // already gone
        }
      }, 2000);
      await exitedP;
      clearTimeout(t);
    }
  };
  const deadline = Date.now() + 30_000;
  while (!(await canConnect(port))) {
    if (exited || Date.now() > deadline) {
      await close();
      throw new Error(`server-everything ${mode} did not start on port ${port}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const path = mode === "sse" ? "/sse" : "/mcp";
  return { url: `http://127.0.0.1:${port}${path}`, pid, close };
}
