// The MCP lifecycle over stdio, as the daemon enforces it over HTTP: a request before initialize
// (a downstream tool call included) is refused with a JSON-RPC error and never runs; ping is
// allowed; a second initialize is refused; the session then serves normally. Real bytes to a real
// `mcphub mcp serve`, and the downstream's own log proves the early call never reached it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, tempHome, type TempHome } from "../helpers/gateway.js";
import { RawGateway } from "../helpers/raw-stdio.js";

let home: TempHome;
beforeAll(() => {
  home = tempHome("mcphub-lifecycle-");
});
afterAll(() => home.cleanup());

const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } };

describe("stdio follows the MCP lifecycle", () => {
  it("refuses requests before initialize and a second initialize, like HTTP; ping and notifications are fine", async () => {
    const log = join(home.dir, "calls.log");
    const cfg = home.writeConfig({ expose: "all", servers: { rec: { command: process.execPath, args: [join(FIXTURES, "recorder.mjs")], env: { RECORDER_LOG: log }, start: "eager" } } });
    const gw = new RawGateway(home, cfg);
    try {
      // Before initialize: a downstream call, a management tool, a listing.
      for (const [id, method, params] of [
        [1, "tools/call", { name: "rec__store", arguments: { key: "k", value: "v" } }],
        [2, "tools/call", { name: "mcphub_list_servers", arguments: {} }],
        [3, "tools/list", {}],
      ] as const) {
        const r = await gw.request(id, method, params);
        expect(r.result).toBeUndefined();
        expect(r.error).toEqual({ code: -32000, message: "Bad Request: Server not initialized; the first request must be initialize" });
      }
      // A notification before initialize is dropped without a reply; ping is always answered.
      await gw.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/roots/list_changed" })}\n`);
      expect((await gw.request(4, "ping")).result).toEqual({});

      const init = await gw.request(5, "initialize", INIT);
      expect(init.result?.serverInfo).toMatchObject({ name: "mcphub" });
      await gw.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      const again = await gw.request(6, "initialize", INIT);
      expect(again.result).toBeUndefined();
      expect(again.error).toEqual({ code: -32600, message: "Invalid Request: Server already initialized" });

      // Serving normally afterwards; the early call never reached the downstream.
      let listed: unknown[] = [];
      for (let i = 0; i < 200 && !listed.some((t) => (t as { name: string }).name === "rec__store"); i++) {
        listed = ((await gw.request(100 + i, "tools/list", {})).result?.tools as unknown[]) ?? [];
        if (!listed.length) await new Promise((r) => setTimeout(r, 25));
      }
      const call = await gw.request(7, "tools/call", { name: "rec__store", arguments: { key: "k2", value: "v2" } });
      expect(JSON.stringify(call.result)).toContain("stored k2");
      const calls = readFileSync(log, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { arguments: { key: string } }).arguments.key);
      expect(calls).toEqual(["k2"]);
      expect(gw.exit).toBeUndefined();
    } finally {
      await gw.close();
    }
  });
});
