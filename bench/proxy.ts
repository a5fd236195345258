// Proxy overhead and advertised bytes, side by side in one run.
//   npx tsx bench/proxy.ts [--calls 3000] [--concurrency 16] [--base DIR]
// One echo tool is called sequentially and with N calls in flight: (a) directly, (b) through a
// bare SDK pass-through forwarder, (c) through mcphub in lazy mode (mcphub_call_tool) and in
// expose-all mode (the mounted tool). Then the JSON size of tools/list in lazy mode and in expose
// all over the LiveMCPBench catalogue, twice each, to show byte-identity across runs.
// --base DIR adds (d) rows: the same two gateway paths run by another built checkout (DIR/bin/
// mcphub.js, e.g. main before a refactor), measured in the same run, and a (c)/(d) ratio table.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import YAML from "yaml";
import { BIN, ROOT, isolatedEnv, numberFlag } from "./setup.js";

const ECHO = join(ROOT, "test/fixtures/echo.mjs");
const FORWARDER = join(ROOT, "bench/forwarder.mjs");
const CATALOG_SERVER = join(ROOT, "test/fixtures/catalog-server.mjs");
const LIVEMCPBENCH = resolve(ROOT, "bench/data/livemcpbench/catalog.jsonl");

const argv = process.argv.slice(2);
const CALLS = numberFlag("calls", 3000);
const CONCURRENCY = numberFlag("concurrency", 16);
const baseAt = argv.indexOf("--base");
const BASE_BIN = baseAt >= 0 && argv[baseAt + 1] ? join(resolve(argv[baseAt + 1] as string), "bin/mcphub.js") : undefined;

const home = mkdtempSync(join(tmpdir(), "mcphub-bench-"));
const env = isolatedEnv(home);

function writeConfig(name: string, cfg: unknown): string {
  const p = join(home, name);
  writeFileSync(p, YAML.stringify(cfg));
  return p;
}

async function connect(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, env }));
  return client;
}

interface Target {
  label: string;
  client: Client;
  call: (i: number) => Promise<unknown>;
}

interface Result {
  label: string;
  mode: string;
  p50: number;
  p99: number;
  rate: number;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function measure(t: Target, concurrency: number): Promise<Result> {
  // Warm up: JIT, connection setup and the gateway's server readiness.
  for (let i = 0; i < 100; i++) await t.call(i);
  const lat: number[] = [];
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= CALLS) return;
      const s = performance.now();
      await t.call(i);
      lat.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const total = performance.now() - start;
  lat.sort((a, b) => a - b);
  return {
    label: t.label,
    mode: concurrency === 1 ? "sequential" : `${concurrency} in flight`,
    p50: quantile(lat, 0.5),
    p99: quantile(lat, 0.99),
    rate: (CALLS / total) * 1000,
  };
}

async function waitForEcho(client: Client, tool: string, args: (i: number) => Record<string, unknown>) {
  for (let i = 0; i < 400; i++) {
    const r = (await client.callTool({ name: tool, arguments: args(0) })) as { isError?: boolean; structuredContent?: { error?: string } };
    if (!r.isError && !r.structuredContent?.error) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`${tool} never became callable`);
}

async function proxyOverhead(): Promise<Result[]> {
  const lazyCfg = writeConfig("lazy.yaml", {
    expose: "lazy",
    servers: { bench: { command: process.execPath, args: [ECHO] } },
  });
  const allCfg = writeConfig("all.yaml", {
    expose: "all",
    servers: { bench: { command: process.execPath, args: [ECHO] } },
  });
  const direct = await connect(process.execPath, [ECHO]);
  const forwarder = await connect(process.execPath, [FORWARDER, process.execPath, ECHO]);
  const lazy = await connect(process.execPath, [BIN, "--config", lazyCfg, "mcp", "serve"]);
  const all = await connect(process.execPath, [BIN, "--config", allCfg, "mcp", "serve"]);
  const msg = (i: number) => ({ message: `hello ${i}` });
  await waitForEcho(lazy, "mcphub_call_tool", (i) => ({ tool: "bench__echo", arguments: msg(i) }));
  await waitForEcho(all, "bench__echo", msg);
  const base: Target[] = [];
  if (BASE_BIN) {
    const baseLazy = await connect(process.execPath, [BASE_BIN, "--config", lazyCfg, "mcp", "serve"]);
    const baseAll = await connect(process.execPath, [BASE_BIN, "--config", allCfg, "mcp", "serve"]);
    await waitForEcho(baseLazy, "mcphub_call_tool", (i) => ({ tool: "bench__echo", arguments: msg(i) }));
    await waitForEcho(baseAll, "bench__echo", msg);
    base.push(
      {
        label: "(d) base lazy call_tool",
        client: baseLazy,
        call: (i) => baseLazy.callTool({ name: "mcphub_call_tool", arguments: { tool: "bench__echo", arguments: msg(i) } }),
      },
      { label: "(d) base expose all", client: baseAll, call: (i) => baseAll.callTool({ name: "bench__echo", arguments: msg(i) }) },
    );
  }
  const targets: Target[] = [
    { label: "(a) direct", client: direct, call: (i) => direct.callTool({ name: "echo", arguments: msg(i) }) },
    { label: "(b) bare forwarder", client: forwarder, call: (i) => forwarder.callTool({ name: "echo", arguments: msg(i) }) },
    {
      label: "(c) mcphub lazy call_tool",
      client: lazy,
      call: (i) => lazy.callTool({ name: "mcphub_call_tool", arguments: { tool: "bench__echo", arguments: msg(i) } }),
    },
    { label: "(c) mcphub expose all", client: all, call: (i) => all.callTool({ name: "bench__echo", arguments: msg(i) }) },
  ];
  const results: Result[] = [];
  for (const concurrency of [1, CONCURRENCY]) {
    // The two builds alternate row by row, so drifting load hits both alike.
    const order = base.length ? [targets[0], targets[1], targets[2], base[0], targets[3], base[1]] : targets;
    for (const t of order) if (t) results.push(await measure(t, concurrency));
  }
  await Promise.all([...targets, ...base].map((t) => t.client.close()));
  return results;
}

async function advertisedBytes(): Promise<{ label: string; runs: number[] }[]> {
  const lazyCfg = writeConfig("ad-lazy.yaml", {
    expose: "lazy",
    servers: { live: { command: process.execPath, args: [CATALOG_SERVER, "--catalog", LIVEMCPBENCH] } },
  });
  const allCfg = writeConfig("ad-all.yaml", {
    expose: "all",
    servers: { live: { command: process.execPath, args: [CATALOG_SERVER, "--catalog", LIVEMCPBENCH] } },
  });
  const out: { label: string; runs: number[] }[] = [];
  for (const [label, cfg, settle] of [
    ["lazy (no pins)", lazyCfg, false],
    ["expose all, LiveMCPBench 527 tools", allCfg, true],
  ] as const) {
    const runs: number[] = [];
    const texts: string[] = [];
    for (let run = 0; run < 2; run++) {
      const client = await connect(process.execPath, [BIN, "--config", cfg, "mcp", "serve"]);
      // Wait for the catalogue so the listing is complete, then measure tools/list.
      for (let i = 0; i < 400; i++) {
        const r = (await client.callTool({ name: "mcphub_list_servers", arguments: {} })) as { structuredContent?: { total_tools?: number } };
        if ((r.structuredContent?.total_tools ?? 0) > 0) break;
        await new Promise((res) => setTimeout(res, 25));
      }
      const listed = await client.listTools();
      const text = JSON.stringify(listed);
      texts.push(text);
      runs.push(Buffer.byteLength(text));
      await client.close();
      if (!settle && listed.tools.length !== 8) throw new Error(`lazy mode listed ${listed.tools.length} tools`);
    }
    out.push({ label: `${label}${texts[0] === texts[1] ? " (identical)" : " (DIFFERENT)"}`, runs });
  }
  return out;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

async function main() {
  console.log(`proxy overhead: ${CALLS} echo calls per row, node ${process.version}, ${new Date().toISOString()}`);
  const results = await proxyOverhead();
  console.log(`\n${pad("path", 28)}${pad("mode", 14)}${pad("p50 ms", 10)}${pad("p99 ms", 10)}calls/s`);
  for (const r of results) {
    console.log(`${pad(r.label, 28)}${pad(r.mode, 14)}${pad(r.p50.toFixed(3), 10)}${pad(r.p99.toFixed(3), 10)}${r.rate.toFixed(0)}`);
  }
  console.log(`\n${pad("ratio vs (b) bare forwarder", 42)}${pad("mode", 14)}${pad("p50 c/b", 10)}throughput c/b`);
  for (const mode of [...new Set(results.map((r) => r.mode))]) {
    const b = results.find((r) => r.mode === mode && r.label.startsWith("(b)"));
    if (!b) continue;
    for (const c of results.filter((r) => r.mode === mode && r.label.startsWith("(c)"))) {
      console.log(`${pad(c.label, 42)}${pad(mode, 14)}${pad((c.p50 / b.p50).toFixed(2), 10)}${(c.rate / b.rate).toFixed(2)}`);
    }
  }
  if (BASE_BIN) {
    console.log(`\n${pad("this build (c) vs base (d)", 42)}${pad("mode", 14)}${pad("p50 c/d", 10)}${pad("p99 c/d", 10)}throughput c/d`);
    for (const mode of [...new Set(results.map((r) => r.mode))]) {
      for (const kind of ["lazy call_tool", "expose all"]) {
        const c = results.find((r) => r.mode === mode && r.label === `(c) mcphub ${kind}`);
        const d = results.find((r) => r.mode === mode && r.label === `(d) base ${kind}`);
        if (!c || !d) continue;
        console.log(`${pad(kind, 42)}${pad(mode, 14)}${pad((c.p50 / d.p50).toFixed(2), 10)}${pad((c.p99 / d.p99).toFixed(2), 10)}${(c.rate / d.rate).toFixed(2)}`);
      }
    }
  }
  const ads = await advertisedBytes();
  console.log(`\n${pad("tools/list JSON bytes", 52)}${pad("run 1", 10)}run 2`);
  for (const a of ads) console.log(`${pad(a.label, 52)}${pad(String(a.runs[0]), 10)}${a.runs[1]}`);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(home, { recursive: true, force: true }));
