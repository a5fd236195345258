// Child process for the concurrency test: appends `count` records for writer `id` to the data dir,
// flushing after each one so every record is its own write() racing the other processes.
import { Telemetry } from "../../../src/telemetry/index.js";

const [dataDir, id, count] = process.argv.slice(2);
if (!dataDir || !id || !count) throw new Error("usage: append-child.ts DATA_DIR ID COUNT");
const t = Telemetry.open({ dataDir });
const base = Date.now();
for (let i = 0; i < Number(count); i++) {
  t.record({
    ts: base,
    agent: `agent-${id}`,
    server: `srv${id}`,
    tool: `tool_${i % 7}`,
    namespaced: `srv${id}__tool_${i % 7}`,
    via: "call_tool",
    duration_ms: i,
    ok: i % 10 !== 0,
    ...(i % 10 === 0 ? { error_class: "timeout" } : {}),
    args_bytes: 2,
    result_bytes: i,
    est_tokens: Math.ceil((2 + i) / 4),
  });
  await t.flush();
}
await t.close();
if (t.dropped !== 0) throw new Error(`${t.dropped} records dropped`);
