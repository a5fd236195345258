// Vault benchmark: store a large JSON-serialised CallToolResult in the encrypted result store, then
// page through all of it the way get_result does (8 KiB pages, nothing kept), and report
// throughput and resident memory. Each size runs in a fresh child process so RSS numbers do not
// leak from one run into the next.
//
//   npx tsx bench/vault.ts            # 50 MB and 200 MB ASCII-heavy JSON, 50 MB emoji-heavy JSON
//   npx tsx bench/vault.ts 20         # custom sizes in MB
//
// Targets: paging 200 MB grows RSS by < 64 MB; peak RSS while storing < 3x the result size.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { openKeyring } from "../src/vault/keys.js";
import { ResultStore } from "../src/vault/results.js";

const MB = 1024 * 1024;
const PAGE = 8192;

interface RunResult {
  label: string;
  bytes: number;
  storeMBs: number;
  pageMBs: number;
  page64MBs: number;
  rssBaselineMB: number;
  rssBeforeMB: number;
  rssPeakStoreMB: number;
  storeGrowthMB: number;
  rssPeakPageMB: number;
  pageGrowthMB: number;
  diskMB: number;
}

function gc(): void {
  setFlagsFromString("--expose-gc");
  const collect = runInNewContext("gc") as () => void;
  collect();
  collect();
}

/** A CallToolResult whose text is `targetBytes` of JSON-ish log lines, serialised. */
function makeResultJson(targetBytes: number, emoji: boolean): string {
  const line = emoji
    ? '{"level":"info","msg":"deploy 🚀 finished ✓ naïve café — 中文","n":'
    : '{"level":"info","msg":"request served","path":"/api/v1/items","status":200,"n":';
  // JSON escaping grows each line (quotes become \"); aim the text so the serialised result is
  // about targetBytes.
  const growth = Buffer.byteLength(JSON.stringify(`${line}0}`)) / Buffer.byteLength(`${line}0}`);
  const textBytes = targetBytes / growth;
  const lines: string[] = [];
  let size = 0;
  for (let n = 0; size < textBytes; n++) {
    const l = `${line}${n}}`;
    lines.push(l);
    size += Buffer.byteLength(l) + 1;
  }
  let text: string | undefined = lines.join("\n");
  lines.length = 0;
  const json = JSON.stringify({ content: [{ type: "text", text }], isError: false });
  text = undefined;
  return json;
}

class RssSampler {
  peak = 0;
  private timer: NodeJS.Timeout | undefined;
  start(): void {
    this.peak = process.memoryUsage().rss;
    this.timer = setInterval(() => this.sample(), 2);
  }
  sample(): void {
    const rss = process.memoryUsage().rss;
    if (rss > this.peak) this.peak = rss;
  }
  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return this.peak;
  }
}

async function runOne(sizeMB: number, emoji: boolean): Promise<RunResult> {
  const dataDir = await mkdtemp(join(tmpdir(), "mcphub-bench-vault-"));
  const env: NodeJS.ProcessEnv = { ...process.env, MCPHUB_KEYCHAIN: "off" };
  delete env.MCPHUB_VAULT_PASSPHRASE;
  delete env.MCPHUB_VAULT_PASSPHRASE_FILE;
  try {
    const store = await ResultStore.open({ dataDir, retentionMs: 3_600_000, env });
    gc();
    const rssBaseline = process.memoryUsage().rss;
    let payload: string | undefined = makeResultJson(sizeMB * MB, emoji);
    const bytes = Buffer.byteLength(payload);
    const expected = createHash("sha256").update(payload).digest("hex");
    gc();
    const rssBefore = process.memoryUsage().rss;

    const storeSampler = new RssSampler();
    storeSampler.start();
    let t = performance.now();
    const meta = await store.put({ server: "bench", tool: "dump", namespaced: "bench__dump", agent: "bench" }, payload);
    const storeMs = performance.now() - t;
    const rssPeakStore = storeSampler.stop();
    payload = undefined;
    gc();

    const rssBeforePaging = process.memoryUsage().rss;
    const pageSampler = new RssSampler();
    pageSampler.start();
    const hash = createHash("sha256");
    t = performance.now();
    for (let cursor = 0; cursor < meta.totalBytes; ) {
      const { data } = await store.read(meta.callId, cursor, PAGE);
      hash.update(data);
      cursor += data.length;
      if ((cursor / PAGE) % 256 === 0) pageSampler.sample();
    }
    const pageMs = performance.now() - t;
    if (hash.digest("hex") !== expected) throw new Error("reassembled bytes differ from the original");
    // The same with 64 KiB pages (one chunk per page): shows the per-call overhead of small pages.
    const hash64 = createHash("sha256");
    t = performance.now();
    for (let cursor = 0; cursor < meta.totalBytes; ) {
      const { data } = await store.read(meta.callId, cursor, 64 * 1024);
      hash64.update(data);
      cursor += data.length;
    }
    const page64Ms = performance.now() - t;
    const rssPeakPage = pageSampler.stop();
    if (hash64.digest("hex") !== expected) throw new Error("reassembled bytes differ from the original (64 KiB pages)");
    const stats = await store.stats();

    return {
      label: `${sizeMB} MB ${emoji ? "emoji-heavy" : "ASCII"} JSON`,
      bytes,
      storeMBs: bytes / MB / (storeMs / 1000),
      pageMBs: bytes / MB / (pageMs / 1000),
      page64MBs: bytes / MB / (page64Ms / 1000),
      rssBaselineMB: rssBaseline / MB,
      rssBeforeMB: rssBefore / MB,
      rssPeakStoreMB: rssPeakStore / MB,
      storeGrowthMB: (rssPeakStore - rssBefore) / MB,
      rssPeakPageMB: rssPeakPage / MB,
      pageGrowthMB: (rssPeakPage - rssBeforePaging) / MB,
      diskMB: stats.diskBytes / MB,
    };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function keyCosts(): Promise<{ keyFileMs: number; passphraseMs: number }> {
  const dataDir = await mkdtemp(join(tmpdir(), "mcphub-bench-keys-"));
  try {
    const base: NodeJS.ProcessEnv = { ...process.env, MCPHUB_KEYCHAIN: "off" };
    delete base.MCPHUB_VAULT_PASSPHRASE;
    delete base.MCPHUB_VAULT_PASSPHRASE_FILE;
    await openKeyring(join(dataDir, "a"), base);
    let t = performance.now();
    await openKeyring(join(dataDir, "a"), base);
    const keyFileMs = performance.now() - t;
    const withPass = { ...base, MCPHUB_VAULT_PASSPHRASE: "bench passphrase" };
    await openKeyring(join(dataDir, "b"), withPass);
    t = performance.now();
    await openKeyring(join(dataDir, "b"), withPass);
    return { keyFileMs, passphraseMs: performance.now() - t };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

const fmt = (n: number, digits = 0) => n.toFixed(digits);

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === "--child") {
    const result = await runOne(Number(args[1]), args[2] === "emoji");
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const runs: [number, boolean][] = args.length > 0 ? args.map((a) => [Number(a), false]) : [[50, false], [200, false], [50, true]];
  const results: RunResult[] = [];
  for (const [size, emoji] of runs) {
    // The child needs room for the payload string plus headroom; V8's default heap limit may be lower.
    const child = spawnSync(
      process.execPath,
      ["--max-old-space-size=4096", "--import", "tsx", import.meta.filename, "--child", String(size), emoji ? "emoji" : "ascii"],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1024 * 1024 },
    );
    if (child.status !== 0) throw new Error(`benchmark child for ${size} MB failed (exit ${child.status})`);
    results.push(JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as RunResult);
  }
  const keys = await keyCosts();

  const header = ["result", "bytes", "store MB/s", "page MB/s (8 KiB)", "page MB/s (64 KiB)", "RSS runtime", "RSS with payload", "peak RSS store", "store growth", "peak RSS paging", "paging growth", "store peak / size", "on disk"];
  const rows = results.map((r) => [
    r.label,
    String(r.bytes),
    fmt(r.storeMBs),
    fmt(r.pageMBs),
    fmt(r.page64MBs),
    `${fmt(r.rssBaselineMB)} MB`,
    `${fmt(r.rssBeforeMB)} MB`,
    `${fmt(r.rssPeakStoreMB)} MB`,
    `${fmt(r.storeGrowthMB, 1)} MB`,
    `${fmt(r.rssPeakPageMB)} MB`,
    `${fmt(r.pageGrowthMB, 1)} MB`,
    `${fmt(r.rssPeakStoreMB / (r.bytes / MB), 2)}x`,
    `${fmt(r.diskMB, 1)} MB`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const row of rows) console.log(line(row));
  console.log("");
  console.log("RSS runtime = node + tsx + an open store, before the payload exists; RSS with payload = the result string in memory, before put.");
  console.log(`openKeyring: key file ${fmt(keys.keyFileMs, 1)} ms, passphrase (scrypt N=2^15, r=8) ${fmt(keys.passphraseMs, 1)} ms`);
  const big = results.find((r) => r.bytes >= 200 * MB);
  if (big) {
    console.log(
      `targets (200 MB): paging growth ${fmt(big.pageGrowthMB, 1)} MB < 64 MB: ${big.pageGrowthMB < 64 ? "PASS" : "FAIL"}; ` +
        `peak store RSS ${fmt(big.rssPeakStoreMB)} MB < 3x size (${fmt((3 * big.bytes) / MB)} MB): ${big.rssPeakStoreMB < (3 * big.bytes) / MB ? "PASS" : "FAIL"}`,
    );
  }
}

await main();
