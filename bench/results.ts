// Stored results through the real gateway: store and fully page a 50 MB and a 200 MB result.
//   npx tsx bench/results.ts [--sizes 50,200]
// Reports MB/s for storing (the downstream call that ends in a receipt) and for reassembling
// (following nextCursor with mcphub_get_result), and the gateway process's RSS, sampled from
// /proc while each phase runs. Targets: paging grows RSS by < 64 MB; peak RSS while storing
// stays < 3x the result size.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import YAML from "yaml";

const ROOT = resolve(import.meta.dirname, "..");
const argv = process.argv.slice(2);
const sizesArg = argv[argv.indexOf("--sizes") + 1];
const SIZES = (argv.includes("--sizes") && sizesArg ? sizesArg : "50,200").split(",").map(Number);
const MB = 1024 * 1024;

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Samples a process's RSS every 10 ms while `work` runs; returns the work's result and the peak. */
async function sampled<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; peak: number; ms: number }> {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, 10);
  const start = performance.now();
  try {
    const value = await work();
    return { value, peak: Math.max(peak, rssOf(pid)), ms: performance.now() - start };
  } finally {
    clearInterval(timer);
  }
}

async function startGateway(home: string, cfg: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, "bin/mcphub.js"), "--config", cfg, "mcp", "serve"],
    env: { ...(process.env as Record<string, string>), HOME: home, MCPHUB_DATA_DIR: join(home, "data"), MCPHUB_KEYCHAIN: "off" },
  });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args }, undefined, { timeout: 30 * 60_000 })) as CallToolResult;
  for (let i = 0; i < 400; i++) {
    const r = await call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 10 } });
    if (!r.isError && !(r.structuredContent as { error?: string } | undefined)?.error) break;
    await new Promise((res) => setTimeout(res, 25));
  }
  return { client, pid: transport.pid as number, call };
}

async function main() {
  const home = mkdtempSync(join(tmpdir(), "mcphub-bench-results-"));
  const cfg = join(home, "mcphub.yaml");
  writeFileSync(cfg, YAML.stringify({ expose: "lazy", call_timeout: "30m", servers: { rec: { command: process.execPath, args: [join(ROOT, "test/fixtures/recorder.mjs")] } } }));
  const rows: string[][] = [];
  try {
    for (const size of SIZES) {
      // A fresh gateway per size, so one size's heap does not colour the next.
      const { client, pid, call } = await startGateway(home, cfg);
      try {
        const bytes = size * MB;
        const before = rssOf(pid);
        const store = await sampled(pid, () => call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes } }));
        const receipt = store.value.structuredContent as { status: string; callId: string; originalBytes: number };
        if (receipt.status !== "stored") throw new Error(`expected a receipt, got ${JSON.stringify(store.value).slice(0, 200)}`);
        const beforePaging = rssOf(pid);
        const paging = await sampled(pid, async () => {
          let cursor = 0;
          let total = 0;
          for (;;) {
            const page = (await call("mcphub_get_result", { callId: receipt.callId, cursor })).structuredContent as {
              data: string;
              nextCursor: number;
              done: boolean;
            };
            total += Buffer.from(page.data, "base64").length;
            if (page.done) return total;
            cursor = page.nextCursor;
          }
        });
        if (paging.value !== receipt.originalBytes) throw new Error("reassembled size differs");
        const orig = receipt.originalBytes;
        rows.push([
          `${size} MB`,
          String(orig),
          (orig / MB / (store.ms / 1000)).toFixed(1),
          (orig / MB / (paging.ms / 1000)).toFixed(1),
          (before / MB).toFixed(0),
          (store.peak / MB).toFixed(0),
          (store.peak / orig).toFixed(2),
          (beforePaging / MB).toFixed(0),
          (paging.peak / MB).toFixed(0),
          ((paging.peak - beforePaging) / MB).toFixed(1),
        ]);
      } finally {
        await client.close();
      }
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  const head = ["result", "bytes", "store MB/s", "page MB/s", "RSS idle MB", "RSS peak store MB", "peak/size", "RSS before paging MB", "RSS peak paging MB", "paging growth MB"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)) + 2);
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("");
  console.log(`stored results through the gateway (node ${process.version}, pages of 8 KiB)\n`);
  console.log(line(head));
  for (const r of rows) console.log(line(r));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
