#!/usr/bin/env node
// One agent of bench/agents.ts, in a process of its own as a harness would be (so the agents'
// MCP clients do not share one JavaScript thread, which would measure the bench, not mcphub).
// Either connects to the daemon (MCPHUB_BENCH_URL, the agent's token in MCPHUB_BENCH_TOKEN: never
// in argv) or starts its own stdio gateway (MCPHUB_BENCH_STDIO, a JSON [command, ...args]); waits
// until echo__echo answers, warms up, prints {"ready": ...}, makes its calls when a "go" line
// arrives on stdin, prints {"lat": [...], "errors": n}, and exits on "exit" or end of stdin.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const agent = process.env.MCPHUB_BENCH_AGENT ?? "agent";
const calls = Number(process.env.MCPHUB_BENCH_CALLS ?? 1000);
const warmup = Number(process.env.MCPHUB_BENCH_WARMUP ?? 300);
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

const client = new Client({ name: `bench-${agent}`, version: "1.0.0" });
let gatewayPid;
if (process.env.MCPHUB_BENCH_URL) {
  const headers = { Authorization: `Bearer ${process.env.MCPHUB_BENCH_TOKEN}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCPHUB_BENCH_URL), { requestInit: { headers } }));
} else {
  const [command, ...args] = JSON.parse(process.env.MCPHUB_BENCH_STDIO ?? "[]");
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
  await client.connect(transport);
  gatewayPid = transport.pid;
}
const call = (message) => client.callTool({ name: "mcphub_call_tool", arguments: { tool: "echo__echo", arguments: { message } } });
for (let i = 0; ; i++) {
  const r = await call("ready?");
  if (!r.isError && !r.structuredContent?.error) break;
  if (i > 800) throw new Error("echo__echo never became callable");
  await new Promise((res) => setTimeout(res, 25));
}
for (let i = 0; i < warmup; i++) await call(`warm ${i}`);
say({ ready: true, gatewayPid });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (line === "go") {
    const lat = [];
    let errors = 0;
    for (let i = 0; i < calls; i++) {
      const message = `${agent} call ${i}`;
      const s = performance.now();
      const r = await call(message);
      lat.push(performance.now() - s);
      // A wrong or failed answer is counted, not silently timed.
      if (r.isError || r.structuredContent?.error || !JSON.stringify(r.content).includes(message)) errors++;
    }
    say({ lat, errors });
  } else if (line === "exit") break;
}
await client.close();
process.exit(0);
