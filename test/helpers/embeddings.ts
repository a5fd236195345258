// Starts the local OpenAI-compatible embeddings fixture (test/fixtures/embeddings-server.mjs) as a
// child process on a free loopback port, for tests and the retrieval benchmark.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "embeddings-server.mjs");

export interface EmbeddingsFixture {
  /** The API base to configure as search.embeddings.url. */
  url: string;
  port: number;
  stats(): Promise<{ requests: number; inputs: number; unauthorized: number }>;
  control(c: { delay?: number; fail?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export async function startEmbeddingsFixture(opts: { dims?: number; key?: string; delay?: number; port?: number } = {}): Promise<EmbeddingsFixture> {
  const args = [FIXTURE, "--port", String(opts.port ?? 0), "--dims", String(opts.dims ?? 64)];
  if (opts.key !== undefined) args.push("--key", opts.key);
  if (opts.delay !== undefined) args.push("--delay", String(opts.delay));
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("embeddings fixture did not start")), 30_000);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`embeddings fixture exited with ${code}`));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/v1`,
    port,
    stats: async () => (await (await fetch(`${base}/stats`)).json()) as { requests: number; inputs: number; unauthorized: number },
    control: async (c) => {
      await fetch(`${base}/control`, { method: "POST", body: JSON.stringify(c) });
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
