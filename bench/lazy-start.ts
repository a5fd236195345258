// Start-up and idle cost with 30 stdio servers, side by side in one run.
//   npx tsx bench/lazy-start.ts [--servers 30] [--delay-ms 1000] [--runs 5] [--gateways 5]
// Every server is test/fixtures/catalog-server.mjs with a 1 s start delay (like a server booted by
// npx) and a few tools of its own. Two modes: (a) `start: eager` — every server is spawned when
// the gateway starts (the behaviour before start-on-first-use); (b) `start: auto` with a warm
// catalogue cache (filled by one earlier gateway run); (c) is (b) run from the unbundled modules
// (MCPHUB_NO_BUNDLE=1), to show what the start-up bundle buys; (d) is (b) without V8's code cache
// (MCPHUB_NO_CODE_CACHE=1), to show what that buys. For each mode it reports the time from
// spawning `mcphub mcp serve` to the first correct resolve_tool answer (the memory server
// recommended, no servers_pending), how many downstream processes exist right after that answer,
// and the total resident memory (gateway + children) of GATEWAYS stdio gateways sitting idle.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import YAML from "yaml";
import { descendants, rssTree } from "./proc.js";
import { BIN, ROOT, isolatedEnv, numberFlag } from "./setup.js";

const CATALOG_SERVER = join(ROOT, "test/fixtures/catalog-server.mjs");

const argv = process.argv.slice(2);
const SERVERS = numberFlag("servers", 30);
const DELAY_MS = numberFlag("delay-ms", 1000);
const RUNS = numberFlag("runs", 5);
const GATEWAYS = numberFlag("gateways", 5);
const QUERY = "remember a fact about a person";
const SETTLE_MS = 3000;

// 30 themed servers; `memory` holds the tool the query asks for, the rest are plausible neighbours.
const THEMES: [string, string, [string, string][]][] = [
  ["memory", "Knowledge graph memory across sessions", [["create_entities", "Create people, projects or things in the knowledge graph"], ["add_observations", "Remember new facts (observations) about a person or entity"], ["search_nodes", "Search remembered entities"], ["read_graph", "Read the whole knowledge graph"]]],
  ["github", "GitHub repositories and issues", [["create_issue", "Open an issue in a repository"], ["list_pulls", "List pull requests"], ["get_file", "Read a file from a repository"]]],
  ["slack", "Slack messaging", [["post_message", "Post a message to a channel"], ["list_channels", "List channels"], ["search_messages", "Search message history"]]],
  ["calendar", "Calendar events", [["create_event", "Schedule a meeting or event"], ["list_events", "List upcoming events"], ["free_busy", "Find free time slots"]]],
  ["weather", "Weather forecasts", [["forecast", "Weather forecast for a city"], ["alerts", "Severe weather alerts for a region"]]],
  ["files", "Local filesystem", [["read_file", "Read a text file"], ["write_file", "Write a text file"], ["list_dir", "List a directory"]]],
  ["postgres", "PostgreSQL database", [["query", "Run a read-only SQL query"], ["list_tables", "List tables and columns"]]],
  ["browser", "Headless web browser", [["navigate", "Open a web page"], ["screenshot", "Take a screenshot of the page"], ["click", "Click an element"]]],
  ["jira", "Jira tickets", [["create_ticket", "Create a Jira ticket"], ["transition", "Move a ticket to another status"]]],
  ["notion", "Notion pages", [["create_page", "Create a Notion page"], ["search_pages", "Search Notion pages"]]],
  ["email", "Email inbox", [["send_email", "Send an email"], ["search_inbox", "Search received mail"]]],
  ["maps", "Maps and places", [["geocode", "Coordinates of an address"], ["directions", "Route between two places"]]],
  ["stocks", "Market data", [["quote", "Latest stock quote"], ["history", "Historical prices of a ticker"]]],
  ["translate", "Machine translation", [["translate_text", "Translate text to another language"], ["detect_language", "Detect the language of a text"]]],
  ["pdf", "PDF documents", [["extract_text", "Extract text from a PDF"], ["merge_pdfs", "Merge PDF files"]]],
  ["images", "Image generation and editing", [["generate_image", "Generate an image from a prompt"], ["resize_image", "Resize an image"]]],
  ["spotify", "Music playback", [["play_track", "Play a song"], ["search_music", "Search songs, albums and artists"]]],
  ["docker", "Docker containers", [["list_containers", "List running containers"], ["container_logs", "Read a container's logs"]]],
  ["kubernetes", "Kubernetes clusters", [["get_pods", "List pods in a namespace"], ["scale_deployment", "Scale a deployment"]]],
  ["aws", "AWS resources", [["list_buckets", "List S3 buckets"], ["describe_instances", "Describe EC2 instances"]]],
  ["sentry", "Error tracking", [["list_issues", "List recent errors"], ["resolve_issue", "Mark an error resolved"]]],
  ["linear", "Linear project tracking", [["create_linear_issue", "Create a Linear issue"], ["list_cycles", "List project cycles"]]],
  ["figma", "Design files", [["get_frames", "List frames of a design file"], ["export_asset", "Export an asset as PNG or SVG"]]],
  ["youtube", "Video platform", [["search_videos", "Search videos"], ["get_transcript", "Transcript of a video"]]],
  ["wikipedia", "Encyclopedia", [["search_articles", "Search encyclopedia articles"], ["get_article", "Read an article"]]],
  ["arxiv", "Research papers", [["search_papers", "Search scientific papers"], ["get_abstract", "Abstract of a paper"]]],
  ["news", "News headlines", [["top_headlines", "Today's top headlines"], ["search_news", "Search news articles"]]],
  ["todo", "Task list", [["add_task", "Add a task to the to-do list"], ["complete_task", "Mark a task done"]]],
  ["clock", "Time and time zones", [["current_time", "Current time in a time zone"], ["convert_time", "Convert a time between zones"]]],
  ["shell", "Shell commands", [["run_command", "Run a shell command"], ["which", "Locate a program on PATH"]]],
];

const home = mkdtempSync(join(tmpdir(), "mcphub-bench-lazy-"));
const started = new Set<number>();
process.on("exit", () => {
  for (const pid of started) {
    for (const p of [...descendants(pid), pid]) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  rmSync(home, { recursive: true, force: true });
});
for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => process.exit(130));

function setup(mode: "eager" | "auto"): { cfg: string; env: Record<string, string>; dataDir: string } {
  const dir = join(home, mode);
  mkdirSync(dir, { recursive: true });
  const dataDir = join(dir, "data");
  const catalog = join(dir, "catalog.jsonl");
  const themes = THEMES.slice(0, SERVERS);
  const lines: string[] = [];
  const servers: Record<string, unknown> = {};
  for (const [server, description, tools] of themes) {
    for (const [tool, text] of tools) {
      lines.push(JSON.stringify({ server, tool, description: text, inputSchema: { type: "object", properties: { input: { type: "string" } } } }));
    }
    servers[server] = { command: process.execPath, args: [CATALOG_SERVER, "--catalog", catalog, "--server", server, "--start-delay-ms", String(DELAY_MS)], description };
  }
  writeFileSync(catalog, `${lines.join("\n")}\n`);
  const cfg = join(dir, "mcphub.yaml");
  writeFileSync(cfg, YAML.stringify({ expose: "lazy", start: mode, connect_timeout: "120s", servers }));
  const env = isolatedEnv(dir, dataDir);
  return { cfg, env, dataDir };
}

interface Gateway {
  client: Client;
  pid: number;
  /** The last few KiB the gateway wrote to stderr, to explain a failure. */
  stderr(): string;
  close(): Promise<void>;
}

async function spawnGateway(cfg: string, env: Record<string, string>): Promise<Gateway> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "--config", cfg, "mcp", "serve"], env, stderr: "pipe" });
  let tail = "";
  transport.stderr?.on("data", (d: Buffer) => {
    tail = (tail + d.toString()).slice(-4096);
  });
  const client = new Client({ name: "lazy-start-bench", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error("the gateway did not start");
  started.add(pid);
  return {
    client,
    pid,
    stderr: () => tail,
    close: async () => {
      await client.close().catch(() => undefined);
      for (let i = 0; i < 400 && existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 25));
      started.delete(pid);
    },
  };
}

type ResolveDoc = { recommendation?: { server?: string } | null; servers_pending?: string[] };

/** Resolves until the answer is complete and recommends a memory tool; returns the attempts. */
async function firstCorrect(gw: Gateway): Promise<number> {
  for (let attempt = 1; attempt <= 2000; attempt++) {
    let r: { structuredContent?: ResolveDoc };
    try {
      r = (await gw.client.callTool({ name: "mcphub_resolve_tool", arguments: { query: QUERY } })) as { structuredContent?: ResolveDoc };
    } catch (err) {
      throw new Error(`resolve_tool failed (${err instanceof Error ? err.message : String(err)}); gateway stderr:\n${gw.stderr()}`);
    }
    const d = r.structuredContent;
    if (d?.recommendation?.server === "memory" && d.servers_pending === undefined) return attempt;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error("resolve_tool never answered correctly");
}

async function warmCache(cfg: string, env: Record<string, string>, dataDir: string): Promise<number> {
  const t0 = performance.now();
  const gw = await spawnGateway(cfg, env);
  const dir = join(dataDir, "catalog");
  for (let i = 0; i < 6000; i++) {
    if (existsSync(dir) && readdirSync(dir).filter((f) => f.endsWith(".json")).length >= SERVERS) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await gw.close();
  return performance.now() - t0;
}

/** CPU time (user + system) the process has used so far, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Row {
  label: string;
  firstMs: number[];
  /** Gateway CPU used up to the first correct answer: what the machine's load does not inflate much. */
  cpuMs: number[];
  attempts: number[];
  children: number[];
  rssBytes: number;
  rssProcesses: number;
  warmMs?: number;
}

async function measure(label: string, mode: "eager" | "auto", extraEnv: Record<string, string> = {}): Promise<Row> {
  const made = setup(mode);
  const { cfg, dataDir } = made;
  const env = { ...made.env, ...extraEnv };
  const row: Row = { label, firstMs: [], cpuMs: [], attempts: [], children: [], rssBytes: 0, rssProcesses: 0 };
  if (mode === "auto") row.warmMs = await warmCache(cfg, env, dataDir);
  for (let run = 0; run < RUNS; run++) {
    const t0 = performance.now();
    const gw = await spawnGateway(cfg, env);
    row.attempts.push(await firstCorrect(gw));
    row.firstMs.push(performance.now() - t0);
    row.cpuMs.push(cpuMs(gw.pid));
    row.children.push(descendants(gw.pid).length);
    await gw.close();
  }
  // GATEWAYS concurrent gateways, as GATEWAYS harness windows would start them, then idle.
  const gws = await Promise.all(Array.from({ length: GATEWAYS }, () => spawnGateway(cfg, env)));
  await Promise.all(gws.map((g) => firstCorrect(g)));
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const rss = rssTree(gws.map((g) => g.pid));
  row.rssBytes = rss.bytes;
  row.rssProcesses = rss.processes;
  await Promise.all(gws.map((g) => g.close()));
  return row;
}

/**
 * The floor for (b): the smallest MCP server there is (test/fixtures/echo.mjs: the SDK's Server,
 * one tool, over stdio) from spawn to its first tool answer, timed the same way in the same run.
 */
async function measureFloor(): Promise<{ firstMs: number[]; cpuMs: number[] }> {
  const out = { firstMs: [] as number[], cpuMs: [] as number[] };
  for (let run = 0; run < RUNS + 1; run++) {
    const t0 = performance.now();
    const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, "test/fixtures/echo.mjs")], stderr: "pipe" });
    const client = new Client({ name: "lazy-start-bench", version: "1.0.0" });
    await client.connect(transport);
    await client.callTool({ name: "echo", arguments: { message: "hi" } });
    const ms = performance.now() - t0;
    const cpu = transport.pid === null ? 0 : cpuMs(transport.pid);
    await client.close();
    if (run === 0) continue; // the first run warms the file cache
    out.firstMs.push(ms);
    out.cpuMs.push(cpu);
  }
  return out;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const mb = (b: number) => (b / 1024 / 1024).toFixed(0);
const pad = (s: string, n: number) => s.padEnd(n);

// (a) last: its 150 processes leave the machine loaded for a while after they exit.
const loadAtStart = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const floor = await measureFloor();
const auto = await measure("(b) auto, warm cache", "auto");
// The same as (b) from the ~100 modules tsc writes instead of dist/bundle/mcphub.cjs.
const modules = await measure("(c) = (b), no bundle", "auto", { MCPHUB_NO_BUNDLE: "1" });
// The same as (b), the bundle compiled afresh every start (no V8 code cache).
const uncached = await measure("(d) = (b), no code cache", "auto", { MCPHUB_NO_CODE_CACHE: "1" });
const eager = await measure("(a) eager", "eager");

const load = `${loadAtStart} at the start, ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} at the end`;
console.log(`load average ${load} on ${(await import("node:os")).availableParallelism()} cores; ${SERVERS} stdio servers, each starting in ${DELAY_MS} ms; ${RUNS} runs per mode; ${GATEWAYS} idle gateways for RSS; query "${QUERY}"\n`);
console.log(
  [pad("mode", 26), pad("first correct resolve ms", 26), pad("min-max", 14), pad("gateway CPU ms", 16), pad("resolve calls", 14), pad("children after", 15), pad(`RSS ${GATEWAYS} idle gateways`, 22), "processes"].join(""),
);
for (const r of [eager, auto, modules, uncached]) {
  console.log(
    [
      pad(r.label, 26),
      pad(`${median(r.firstMs).toFixed(0)} (median)`, 26),
      pad(`${Math.min(...r.firstMs).toFixed(0)}-${Math.max(...r.firstMs).toFixed(0)}`, 14),
      pad(String(median(r.cpuMs)), 16),
      pad(String(median(r.attempts)), 14),
      pad(String(median(r.children)), 15),
      pad(`${mb(r.rssBytes)} MB`, 22),
      String(r.rssProcesses),
    ].join(""),
  );
}
console.log(
  [
    pad("floor: bare SDK server", 26),
    pad(`${median(floor.firstMs).toFixed(0)} (median)`, 26),
    pad(`${Math.min(...floor.firstMs).toFixed(0)}-${Math.max(...floor.firstMs).toFixed(0)}`, 14),
    pad(String(median(floor.cpuMs)), 16),
    "(test/fixtures/echo.mjs: spawn to its first tools/call answer)",
  ].join(""),
);
console.log(
  `\nratio b/floor: first answer ${(median(auto.firstMs) / median(floor.firstMs)).toFixed(3)}, CPU ${(median(auto.cpuMs) / median(floor.cpuMs)).toFixed(3)}` +
    `\nratio b/a: first answer ${(median(auto.firstMs) / median(eager.firstMs)).toFixed(3)}, RSS ${(auto.rssBytes / eager.rssBytes).toFixed(3)}` +
    `\nratio b/c (bundle vs modules): first answer ${(median(auto.firstMs) / median(modules.firstMs)).toFixed(3)}, gateway CPU ${(median(auto.cpuMs) / median(modules.cpuMs)).toFixed(3)}` +
    `\nratio b/d (code cache vs none): first answer ${(median(auto.firstMs) / median(uncached.firstMs)).toFixed(3)}, gateway CPU ${(median(auto.cpuMs) / median(uncached.cpuMs)).toFixed(3)}` +
    `\ntargets: warm first answer <= 200 ms (${median(auto.firstMs) <= 200 ? "met" : "NOT met"}); 0 downstream processes until a call (${median(auto.children) === 0 ? "met" : "NOT met"}); RSS of (b) <= 20% of (a) (${auto.rssBytes <= 0.2 * eager.rssBytes ? "met" : "NOT met"})` +
    `\n(filling the cache once, in (b)'s first run: ${auto.warmMs?.toFixed(0)} ms)`,
);
