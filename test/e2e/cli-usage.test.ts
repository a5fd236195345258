// Commands that read telemetry: `pin --top N` pins the most-called tools of configured servers,
// `status` reports calls and the enabled servers never called. Records are written with the real
// telemetry writer, the CLI runs as a process.
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import YAML from "yaml";
import { Telemetry, callRecord } from "../../src/telemetry/index.js";
import { cliSandbox, type CliSandbox } from "../helpers/cli.js";

let sb: CliSandbox;

beforeAll(async () => {
  sb = cliSandbox();
  writeFileSync(
    sb.config,
    YAML.stringify({
      servers: { memory: { command: "memory-mcp" }, notes: { command: "notes-mcp" }, idle: { command: "idle-mcp" } },
    }),
  );
  const t = Telemetry.open({ dataDir: sb.dataDir });
  const call = (server: string, tool: string, ok = true) =>
    t.record(
      callRecord({ agent: "claude", server, tool, namespaced: `${server}__${tool}`, via: "call_tool", duration_ms: 5, ok, args_bytes: 10, result_bytes: 90 }),
    );
  for (let i = 0; i < 3; i++) call("memory", "read_graph");
  for (let i = 0; i < 2; i++) call("notes", "search");
  call("notes", "append", false);
  for (let i = 0; i < 5; i++) call("removed", "tool"); // a server no longer configured
  await t.close();
});
afterAll(() => sb?.cleanup());

it("pin --top takes the most-called tools of configured servers only", async () => {
  const r = await sb.run(["pin", "--top", "2", "--since", "7d"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect((YAML.parse(readFileSync(sb.config, "utf8")) as { pin: string[] }).pin).toEqual(["memory__read_graph", "notes__search"]);
});

it("status sums the calls and lists enabled servers never called", async () => {
  const r = await sb.run(["status", "--json"]);
  const st = JSON.parse(r.stdout) as { calls: number; errors: number; unused_enabled: string[]; enabled: number };
  expect(st.calls).toBe(11);
  expect(st.errors).toBe(1);
  expect(st.enabled).toBe(3);
  expect(st.unused_enabled).toEqual(["idle"]);
});
