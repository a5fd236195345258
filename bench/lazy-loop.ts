// The bytes a model reads in the lazy loop, per task, side by side with `expose: all`.
//
//   npx tsx bench/lazy-loop.ts              # both catalogues (the 527-tool one starts 70 fixture servers)
//   npx tsx bench/lazy-loop.ts --example    # the example config only
//
// Lazy: the model reads `tools/list` (the eight management tools and pins) and the `initialize`
// instructions once, then for each task the resolve_tool answer, the describe_tool answer for the
// recommendation and the call_tool answer. `expose: all`: the full `tools/list` (every tool's
// definition) and its instructions, which a host sends with every turn, then the same call. Bytes
// are UTF-8 bytes of what a model reads: each answer's text block (the compact JSON document),
// the tool definitions as JSON, the instructions string.
//
// Catalogues: the README example config (its real servers: everything, memory, files; tasks are
// the 99 everyday requests of bench/data/requests/everyday.jsonl; a recommendation is called when
// its effect is read-only, so the benchmark writes and deletes nothing) and LiveMCPBench's 527
// tools (one test/fixtures/catalog-server.mjs per server, answering calls with a short echo;
// tasks are the 348 natural requests over that catalogue; every recommendation is called).
// search_tools answers with 5 hits are measured on the same tasks.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { parse as parseYaml, stringify } from "yaml";
import { BENCH_DATA, loadCatalog, loadEverydayRequests, loadEverydayRequests2, loadEverydayRequests3, loadEverydayRequests4, loadEverydayRequests5, loadEverydayRequests6, loadEverydayRequests7, loadEverydayRequests8, loadEverydayRequests9, loadEverydayRequests10, loadEverydayRequests11, loadRequests } from "./bench-data.js";
import { BIN, ROOT, isolatedEnv } from "./setup.js";
import { MANAGEMENT_TOOLS } from "../src/gateway/management.js";

interface Task {
  query: string;
}

interface Loop {
  resolve: number;
  describe: number;
  call: number;
  search: number;
  called: boolean;
}

const bytes = (s: string): number => Buffer.byteLength(s, "utf8");
const textOf = (r: CallToolResult): string => (r.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
}

/** Fills a template's "<name>" placeholders: paths with a file of the served folder, other strings with a word. */
function fill(value: unknown, root: string): unknown {
  if (typeof value === "string" && /^<.*>$/.test(value)) {
    const name = value.slice(1, -1).toLowerCase();
    if (/path|file|source|destination/.test(name)) return join(root, "README.md");
    return "example";
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, root));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, root)]));
  return value;
}

interface Gateway {
  client: Client;
  close(): Promise<void>;
}

async function startGateway(configPath: string, home: string): Promise<Gateway> {
  const client = new Client({ name: "lazy-loop-bench", version: "1.0.0" });
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "--config", configPath, "mcp", "serve"], env: isolatedEnv(home), stderr: "ignore" });
  await client.connect(transport);
  return { client, close: () => client.close().catch(() => undefined) };
}

async function call(gw: Gateway, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await gw.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
}

async function waitConnected(gw: Gateway, wanted: number): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const list = JSON.parse(textOf(await call(gw, "mcphub_list_servers", {}))) as { servers: { connected: boolean; catalog: string }[] };
    const ready = list.servers.filter((s) => s.connected || s.catalog !== "none").length;
    if (ready >= wanted) return;
    if (Date.now() > deadline) throw new Error(`only ${ready}/${wanted} servers connected`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** What the model reads once: the tool definitions and the instructions. */
async function listing(gw: Gateway): Promise<{ tools: number; count: number; instructions: number }> {
  const { tools } = await gw.client.listTools();
  return { tools: bytes(JSON.stringify(tools)), count: tools.length, instructions: bytes(gw.client.getInstructions() ?? "") };
}

async function loop(gw: Gateway, task: Task, opts: { root: string; callReadOnly: boolean }): Promise<Loop> {
  const resolved = await call(gw, "mcphub_resolve_tool", { query: task.query });
  const searched = await call(gw, "mcphub_search_tools", { query: task.query, max_hits: 5 });
  const out: Loop = { resolve: bytes(textOf(resolved)), describe: 0, call: 0, search: bytes(textOf(searched)), called: false };
  const doc = resolved.structuredContent as { recommendation: { namespaced: string; argument_template: Record<string, unknown>; effect?: string } | null };
  const rec = doc.recommendation;
  if (!rec) return out;
  out.describe = bytes(textOf(await call(gw, "mcphub_describe_tool", { tool: rec.namespaced })));
  if (opts.callReadOnly && rec.effect !== undefined) return out; // a match without effect only reads
  const args = fill(rec.argument_template, opts.root) as Record<string, unknown>;
  out.call = bytes(textOf(await call(gw, "mcphub_call_tool", { tool: rec.namespaced, arguments: args, timeout_ms: 5000 })));
  out.called = true;
  return out;
}

interface Row {
  catalogue: string;
  tools: number;
  mode: string;
  tasks: number;
  list: number;
  instructions: number;
  loops?: Loop[];
  calls?: number[];
}

/** resolve_tool answers' bytes for request sets beside the tasks' (the example config's other everyday sets). */
const resolveBytes = new Map<string, number[]>();

async function measure(catalogue: string, configFor: (expose: "lazy" | "all") => string, home: string, tasks: Task[], servers: number, opts: { root: string; callReadOnly: boolean; resolveSets?: { name: string; queries: string[] }[] }): Promise<Row[]> {
  const lazy = await startGateway(configFor("lazy"), home);
  let lazyRow: Row;
  try {
    await waitConnected(lazy, servers);
    const l = await listing(lazy);
    const loops: Loop[] = [];
    for (const t of tasks) loops.push(await loop(lazy, t, opts));
    // The tasks' own resolve answers are the loop's; the other sets are resolved alone.
    if (opts.resolveSets) resolveBytes.set("everyday (the tasks)", loops.map((x) => x.resolve));
    for (const set of opts.resolveSets ?? []) {
      const sizes: number[] = [];
      for (const query of set.queries) sizes.push(bytes(textOf(await call(lazy, "mcphub_resolve_tool", { query }))));
      resolveBytes.set(set.name, sizes);
    }
    lazyRow = { catalogue, tools: 0, mode: "lazy", tasks: tasks.length, list: l.tools, instructions: l.instructions, loops };
  } finally {
    await lazy.close();
  }
  const all = await startGateway(configFor("all"), home);
  try {
    await waitConnected(all, servers);
    const l = await listing(all);
    const downstream = l.count - MANAGEMENT_TOOLS.length;
    lazyRow.tools = downstream;
    // The same calls in expose: all mode go to the mounted tool directly: the same downstream answer.
    const calls = (lazyRow.loops ?? []).filter((x) => x.called).map((x) => x.call);
    return [lazyRow, { catalogue, tools: downstream, mode: "expose: all", tasks: tasks.length, list: l.tools, instructions: l.instructions, calls }];
  } finally {
    await all.close();
  }
}

async function exampleRows(): Promise<Row[]> {
  const home = mkdtempSync(join(tmpdir(), "mcphub-lazyloop-example-"));
  const served = join(home, "served");
  try {
    const config = parseYaml(readFileSync(join(ROOT, "mcphub.example.yaml"), "utf8")) as { servers: Record<string, { command?: string; args?: string[]; env?: Record<string, string>; cwd?: string }>; [k: string]: unknown };
    for (const s of Object.values(config.servers)) {
      if (s.command === undefined) continue;
      s.cwd = ROOT;
      s.args = (s.args ?? []).map((a) => (a === "." ? served : a));
      if (s.env?.["MEMORY_FILE_PATH"] !== undefined) s.env["MEMORY_FILE_PATH"] = join(home, "memory.jsonl");
    }
    mkdirSync(served, { recursive: true });
    copyFileSync(join(ROOT, "README.md"), join(served, "README.md"));
    copyFileSync(join(ROOT, "package.json"), join(served, "package.json"));
    const configFor = (expose: "lazy" | "all"): string => {
      const path = join(home, `mcphub-${expose.replace(/\W/g, "")}.yaml`);
      writeFileSync(path, stringify({ ...config, expose }), { mode: 0o600 });
      return path;
    };
    const tasks = loadEverydayRequests().map((r) => ({ query: r.query }));
    // Resolve answers alone over the other ten everyday sets (their requests are not run): the
    // byte target is a median over requests nobody tuned on, not over one set.
    const resolveSets = [loadEverydayRequests2, loadEverydayRequests3, loadEverydayRequests4, loadEverydayRequests5, loadEverydayRequests6, loadEverydayRequests7, loadEverydayRequests8, loadEverydayRequests9, loadEverydayRequests10, loadEverydayRequests11].map((load, i) => ({ name: `everyday-${i + 2}`, queries: load().map((r) => r.query) }));
    return await measure("example config", configFor, home, tasks, 3, { root: served, callReadOnly: true, resolveSets });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function liveRows(): Promise<Row[]> {
  const home = mkdtempSync(join(tmpdir(), "mcphub-lazyloop-live-"));
  try {
    const catalogPath = join(BENCH_DATA, "livemcpbench", "catalog.jsonl");
    const lines = loadCatalog(catalogPath);
    const servers: Record<string, unknown> = {};
    for (const server of new Set(lines.map((l) => l.server))) {
      const description = lines.find((l) => l.server === server && l.serverDescription)?.serverDescription;
      servers[server] = {
        command: process.execPath,
        args: [join(ROOT, "test", "fixtures", "catalog-server.mjs"), "--catalog", catalogPath, "--server", server],
        ...(description ? { description } : {}),
      };
    }
    const configFor = (expose: "lazy" | "all"): string => {
      const path = join(home, `mcphub-${expose}.yaml`);
      writeFileSync(path, stringify({ version: 1, expose, connect_timeout: "120s", servers }), { mode: 0o600 });
      return path;
    };
    const tasks = loadRequests()
      .filter((r) => r.catalog === "live")
      .map((r) => ({ query: r.query }));
    return await measure("LiveMCPBench", configFor, home, tasks, Object.keys(servers).length, { root: home, callReadOnly: false });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const pm = (xs: number[]): string => (xs.length ? `${quantile(xs, 0.5)} / ${Math.max(...xs)}` : "—");

async function main(): Promise<void> {
  const rows = [...(await exampleRows()), ...(process.argv.includes("--example") ? [] : await liveRows())];
  const header = ["catalogue", "tools", "mode", "tasks", "tools/list", "instructions", "resolve p50/max", "search(5) p50/max", "describe p50/max", "call p50/max", "loop per task p50/max", "loop ÷ one expose:all list (p50)"];
  const out: string[][] = [];
  for (const r of rows) {
    const once = r.list + r.instructions;
    if (r.loops) {
      const loops = r.loops;
      const perTask = loops.map((l) => once + l.resolve + l.describe + l.call);
      const allRow = rows.find((x) => x.catalogue === r.catalogue && x.mode === "expose: all");
      const ratio = allRow ? (quantile(perTask, 0.5) / allRow.list).toFixed(3) : "—";
      out.push([r.catalogue, String(r.tools), r.mode, String(r.tasks), String(r.list), String(r.instructions), pm(loops.map((l) => l.resolve)), pm(loops.map((l) => l.search)), pm(loops.filter((l) => l.describe > 0).map((l) => l.describe)), pm(loops.filter((l) => l.called).map((l) => l.call)), pm(perTask), ratio]);
    } else {
      const calls = r.calls ?? [];
      const perTask = calls.map((c) => once + c);
      out.push([r.catalogue, String(r.tools), r.mode, String(r.tasks), String(r.list), String(r.instructions), "—", "—", "—", pm(calls), pm(perTask.length ? perTask : [once]), "1 list"]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...out.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i <= 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");

  console.log(`Bytes (UTF-8) a model reads. Lazy: tools/list + instructions once, then per task resolve, describe and call answers (text blocks). Load average: ${loadavg().map((x) => x.toFixed(1)).join(" ")}.`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of out) console.log(line(r));

  if (resolveBytes.size > 0) {
    console.log("\nresolve_tool answer bytes on the example config, by request set (target: p50 ≤ 1,500):");
    const setHeader = ["request set", "requests", "p50", "p75", "max", "p50 ≤ 1,500"];
    const rowsOut = [...resolveBytes].map(([name, xs]) => [name, String(xs.length), String(quantile(xs, 0.5)), String(quantile(xs, 0.75)), String(Math.max(...xs)), quantile(xs, 0.5) <= 1500 ? "yes" : "no"]);
    const all = [...resolveBytes.values()].flat();
    rowsOut.push(["all eleven", String(all.length), String(quantile(all, 0.5)), String(quantile(all, 0.75)), String(Math.max(...all)), quantile(all, 0.5) <= 1500 ? "yes" : "no"]);
    const w = setHeader.map((h, i) => Math.max(h.length, ...rowsOut.map((r) => (r[i] ?? "").length)));
    const fmt = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(w[i] ?? 0) : c.padStart(w[i] ?? 0))).join("  ");
    console.log(fmt(setHeader));
    console.log(w.map((x) => "-".repeat(x)).join("  "));
    for (const r of rowsOut) console.log(fmt(r));
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
