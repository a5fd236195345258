// Backpressure on stdio: a client that writes requests and never reads the replies must not make
// the gateway buffer them without end. The gateway reads stdin only as fast as it can write
// replies, so the client's own writes stall, the gateway's memory stays flat (RSS growth at most
// 64 MiB while 4 MB of requests whose replies are ~80× larger are offered), and once the client
// reads again every request gets its reply: nothing is lost.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, tempHome, type TempHome } from "../helpers/gateway.js";

let home: TempHome;
beforeAll(() => {
  home = tempHome("mcphub-backpressure-");
});
afterAll(() => home.cleanup());

const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
const MiB = 1024 * 1024;

describe("stdio backpressure", () => {
  it("a client that writes and never reads: memory stays bounded, and every reply arrives once it reads", async () => {
    const cfg = home.writeConfig({ expose: "lazy", servers: {} });
    const child = spawn(process.execPath, [BIN, "--config", cfg, "mcp", "serve"], { env: home.env, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const pid = child.pid as number;
    const lines: string[] = [];
    let partial = "";
    const reader = (d: Buffer) => {
      const parts = (partial + d.toString()).split("\n");
      partial = parts.pop() ?? "";
      lines.push(...parts);
    };
    try {
      // Initialize and warm up while reading, then stop reading stdout altogether.
      let buf = "";
      const first = new Promise<void>((resolve) => {
        const on = (d: Buffer) => {
          buf += d.toString();
          if (buf.includes('"id":"warm-9"')) {
            child.stdout.off("data", on);
            child.stdout.pause();
            resolve();
          }
        };
        child.stdout.on("data", on);
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })}\n`);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      for (let i = 0; i < 10; i++) child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: `warm-${i}`, method: "tools/list" })}\n`);
      await first;
      await new Promise((r) => setTimeout(r, 300));
      const before = rss(pid);

      // Offer 4 MB of requests (tools/list: ~4 KB replies), plus malformed lines (error replies),
      // honouring our own stdin's backpressure; stop when the gateway stops taking them for 3 s.
      const chunk = (n: number) => {
        let s = "";
        for (let i = 0; i < 100; i++) s += i % 10 === 9 ? "this is not json\n" : `{"jsonrpc":"2.0","id":${n * 100 + i},"method":"tools/list"}\n`;
        return s;
      };
      let offered = 0;
      let sent = 0;
      let stalled = false;
      let peak = before;
      while (offered < 4_000_000) {
        const text = chunk(sent);
        offered += text.length;
        sent++;
        if (!child.stdin.write(text)) {
          const drained = await new Promise<boolean>((resolve) => {
            const t = setTimeout(() => resolve(false), 3000);
            child.stdin.once("drain", () => {
              clearTimeout(t);
              resolve(true);
            });
          });
          peak = Math.max(peak, rss(pid));
          if (!drained) {
            stalled = true;
            break;
          }
        }
      }
      peak = Math.max(peak, rss(pid));
      expect(stalled, "the gateway kept reading although nobody read its replies").toBe(true);
      expect((peak - before) / MiB).toBeLessThanOrEqual(64);

      // Now read: every request gets exactly one reply (90 results and 10 parse errors per chunk).
      // What was read before the pause but after the warm-up's last reply belongs to the test.
      reader(Buffer.from(buf.slice(buf.indexOf("\n", buf.indexOf('"id":"warm-9"')) + 1)));
      child.stdout.on("data", reader);
      child.stdout.resume();
      const expected = sent * 100;
      const want = (l: string) => l.startsWith("{") && !l.includes('"warm-');
      for (let i = 0; i < 1200 && lines.filter(want).length < expected; i++) await new Promise((r) => setTimeout(r, 100));
      const replies = lines.filter(want).map((l) => JSON.parse(l) as { id: unknown; result?: unknown; error?: { code: number } });
      expect(replies).toHaveLength(expected);
      expect(replies.filter((r) => r.error?.code === -32700)).toHaveLength(sent * 10);
      expect(new Set(replies.filter((r) => r.result).map((r) => r.id)).size).toBe(sent * 90);
      expect(child.exitCode).toBeNull();
    } finally {
      child.stdin.end();
      child.kill();
    }
    expect(stderr).not.toMatch(/heap out of memory|FATAL/);
  }, 180_000);
});
