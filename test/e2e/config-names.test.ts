// Issue 15, item 6, end to end: a server named `constructor` is served like any other, a name that
// only exists on Object.prototype is unknown, and a downstream's JSON-RPC error reaches the model
// with its "MCP error" prefix once.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doc, FIXTURES, startGateway, tempHome, text, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";

let home: TempHome;
let gw: GatewayClient;
beforeAll(async () => {
  home = tempHome("mcphub-names-");
  const cfg = home.writeConfig({
    expose: "all",
    servers: {
      constructor: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")] },
      rpc: { command: process.execPath, args: [join(FIXTURES, "rpc-error.mjs")] },
    },
  });
  gw = await startGateway(home, cfg);
  await waitReady(gw, ["constructor", "rpc"]);
});
afterAll(async () => {
  await gw?.close();
  home?.cleanup();
});

describe("config names and error texts through the gateway", () => {
  it("serves a server named constructor; toString is an unknown server", async () => {
    const servers = (doc(await gw.call("mcphub_list_servers")).servers as { name: string }[]).map((s) => s.name);
    expect(servers).toContain("constructor");
    expect(text(await gw.call("constructor__echo", { message: "hi" }))).toBe("Echo: hi");
    const unknown = await gw.call("mcphub_call_tool", { tool: "toString__x" });
    expect(JSON.stringify(unknown)).toMatch(/unknown server|not found|no tool/i);
    expect(JSON.stringify(unknown)).not.toMatch(/function|native code/);
  });

  it("a downstream JSON-RPC error carries its MCP error prefix once", async () => {
    const mounted = await gw.call("rpc__reject");
    expect(mounted.isError).toBe(true);
    expect(text(mounted)).toBe("call rpc__reject: MCP error -32602: the widget id is not valid");
    const viaCallTool = await gw.call("mcphub_call_tool", { tool: "rpc__reject" });
    expect(text(viaCallTool)).not.toMatch(/MCP error -32602: MCP error/);
    // An error the gateway itself raises reaches an SDK client with one prefix (the client's own).
    const err = await gw.client.callTool({ name: "nope__tool" }).then(() => undefined, (e: unknown) => e as Error);
    expect(err?.message).toMatch(/^MCP error -32602: unknown tool "nope__tool"/);
  });
});
