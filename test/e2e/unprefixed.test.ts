// `namespace: false` mounts a server under its own names; a name that another server (or the
// gateway itself) could also be reached by is refused for every claimant with an error naming
// both servers, never silently shadowed; the refused tools stay callable as server__tool.
// Also: pinned `roots:` answer roots/list from config, whatever the client declares.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doc, FIXTURES, startGateway, tempHome, text, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";

const node = process.execPath;
const named = (...tools: string[]) => ({ command: node, args: [join(FIXTURES, "named-tools.mjs"), ...tools] });

describe("namespace: false", () => {
  let home: TempHome;
  let gw: GatewayClient;
  beforeAll(async () => {
    home = tempHome("mcphub-unprefixed-");
    const cfg = home.writeConfig({
      expose: "all",
      servers: {
        a: { ...named("echo", "shared", "stats"), namespace: false },
        b: { ...named("shared", "other"), namespace: false },
        c: named("x"),
        d: { ...named("c__x"), namespace: false },
      },
    });
    gw = await startGateway(home, cfg);
    await waitReady(gw, ["a", "b", "c", "d"]);
  });
  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  it("publishes unrefused names bare and refused ones under server__tool", async () => {
    const names = (await gw.client.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith("mcphub_"));
    expect(names).toEqual(["a__shared", "a__stats", "b__shared", "c__x", "d__c__x", "echo", "other"]);
    const echo = (await gw.client.listTools()).tools.find((t) => t.name === "echo");
    expect(echo?.description).toBe("The tool whose wire name is echo.");
  });

  it("calls a bare mount and a refused tool by its qualified name", async () => {
    expect(JSON.parse(text(await gw.call("echo", { note: "hi" })))).toEqual({ wire: "echo", args: { note: "hi" } });
    expect(JSON.parse(text(await gw.call("b__shared")))).toEqual({ wire: "shared", args: {} });
    const lazy = await gw.call("mcphub_call_tool", { tool: "other" });
    expect(JSON.parse(text(lazy))).toEqual({ wire: "other", args: {} });
  });

  it("a refused bare name answers with an error naming both servers", async () => {
    await expect(gw.call("shared")).rejects.toThrow(
      'tool "shared" is offered by servers "a" and "b", all with namespace: false; neither gets the unprefixed name, they are published as a__shared and b__shared (rename one or set namespace: true on it)',
    );
    const lazy = await gw.call("mcphub_call_tool", { tool: "shared" });
    expect(lazy.isError).toBe(true);
    expect(text(lazy)).toContain('offered by servers "a" and "b"');
  });

  it("never shadows a management tool or another server's published name", async () => {
    // "stats" stays the gateway's own tool.
    expect(doc(await gw.call("stats")).this_agent).toBeDefined();
    const conflicts = doc(await gw.call("mcphub_list_servers")).mount_conflicts as { name: string; servers: string[]; message: string }[];
    expect(conflicts.map((c) => [c.name, c.servers])).toEqual([
      ["shared", ["a", "b"]],
      ["stats", ["a"]],
      ["c__x", ["c", "d"]],
    ]);
    expect(conflicts[1]?.message).toBe(`tool "stats" of server "a" (namespace: false) would shadow the gateway's own mcphub_stats tool; it is published as a__stats`);
    expect(conflicts[2]?.message).toBe(`tool "c__x" of server "d" (namespace: false) is also the published name of server "c"'s tool; it is published as d__c__x`);
    expect(JSON.parse(text(await gw.call("c__x")))).toEqual({ wire: "x", args: {} });
    expect(gw.stderr()).toContain('tool "shared" is offered by servers "a" and "b"');
  });
});

describe("pinned roots", () => {
  let home: TempHome;
  afterAll(() => home?.cleanup());

  it("roots: answers roots/list from config, even for a client without the roots capability", async () => {
    home = tempHome("mcphub-roots-pin-");
    const cfg = home.writeConfig({
      expose: "lazy",
      servers: { conf: { command: node, args: [join(FIXTURES, "conformance-server.mjs")], roots: ["/srv/data", "file:///opt/shared"] } },
    });
    const gw = await startGateway(home, cfg);
    try {
      const r = await gw.call("mcphub_call_tool", { tool: "conf__test_roots" });
      expect(text(r)).toBe("roots: file:///srv/data, file:///opt/shared");
    } finally {
      await gw.close();
    }
  });
});
