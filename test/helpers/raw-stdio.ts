// A raw JSON-RPC peer for `mcphub mcp serve`: writes exact bytes to a real gateway's stdin and
// reads its stdout line by line, so tests can send what no SDK client would (garbage, huge lines,
// odd ids) and see exactly what comes back.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { BIN, type TempHome } from "./gateway.js";

export interface RawReply {
  jsonrpc?: string;
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

export class RawGateway {
  readonly child: ChildProcessWithoutNullStreams;
  private buffer = "";
  private readonly queue: RawReply[] = [];
  private waiting?: () => void;
  stderr = "";
  exit?: { code: number | null; signal: NodeJS.Signals | null };

  constructor(home: TempHome, configPath: string, extraArgs: string[] = []) {
    this.child = spawn(process.execPath, [BIN, "--config", configPath, "mcp", "serve", ...extraArgs], {
      env: home.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => {
      this.buffer += d;
      let nl: number;
      while ((nl = this.buffer.indexOf("\n")) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (line.trim() !== "") this.queue.push(JSON.parse(line) as RawReply);
      }
      this.waiting?.();
    });
    this.child.stderr.setEncoding("utf8").on("data", (d: string) => (this.stderr += d));
    this.child.once("exit", (code, signal) => {
      this.exit = { code, signal };
      this.waiting?.();
    });
  }

  write(text: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.child.stdin.write(text, (err) => (err ? reject(err) : resolve())));
  }

  /** The next message from the gateway; fails if the process exits first. */
  async next(timeoutMs = 30_000): Promise<RawReply> {
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length === 0) {
      if (this.exit) throw new Error(`gateway exited (${JSON.stringify(this.exit)}) with no reply; stderr: ${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`no reply within ${timeoutMs}ms; stderr: ${this.stderr}`);
      await new Promise<void>((r) => {
        this.waiting = r;
        setTimeout(r, 200).unref();
      });
    }
    return this.queue.shift() as RawReply;
  }

  /** Sends one request line and returns the reply carrying its id (notifications are skipped). */
  async request(id: number | string, method: string, params?: unknown): Promise<RawReply> {
    await this.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, ...(params !== undefined ? { params } : {}) })}\n`);
    for (;;) {
      const m = await this.next();
      if (m.id === id) return m;
    }
  }

  async initialize(): Promise<void> {
    const r = await this.request(0, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } });
    if (!r.result) throw new Error(`initialize failed: ${JSON.stringify(r)}`);
    await this.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  }

  async close(): Promise<void> {
    if (this.exit) return;
    this.child.stdin.end();
    await new Promise<void>((r) => {
      if (this.exit) r();
      else this.child.once("exit", () => r());
      setTimeout(() => {
        this.child.kill("SIGKILL");
        r();
      }, 10_000).unref();
    });
  }
}
