import { describe, expect, it } from "vitest";
import { planPublicNames } from "../../../src/catalog/names.js";
import { Scope } from "../../../src/gateway/policy/scope.js";
import { config, stdio } from "./helpers.js";

// Servers a and b are enabled, c is disabled. Tools: a__x, a__y, b__z.
function scopeFor(agent: { servers?: string[]; tools?: string[] }): Scope {
  return new Scope(
    config({ servers: { a: stdio(), b: stdio(), c: stdio(false) }, agents: { agent: agent } }),
    "agent",
  );
}

interface Expected {
  servers: Record<"a" | "b" | "c", boolean>;
  tools: Record<"a__x" | "a__y" | "b__z", boolean>;
  startable: string[];
  unscoped: boolean;
}

const ALL: Expected = {
  servers: { a: true, b: true, c: true },
  tools: { a__x: true, a__y: true, b__z: true },
  startable: ["a", "b"],
  unscoped: true,
};
const NONE: Expected = {
  servers: { a: false, b: false, c: false },
  tools: { a__x: false, a__y: false, b__z: false },
  startable: [],
  unscoped: false,
};
const ONLY_A: Expected = {
  servers: { a: true, b: false, c: false },
  tools: { a__x: true, a__y: true, b__z: false },
  startable: ["a"],
  unscoped: false,
};
const ONLY_A_X: Expected = { ...ONLY_A, tools: { a__x: true, a__y: false, b__z: false } };

const matrix: [string, { servers?: string[]; tools?: string[] }, Expected][] = [
  ["servers omitted, tools omitted", {}, ALL],
  ["servers omitted, tools []", { tools: [] }, NONE],
  ["servers omitted, tools [a__x]", { tools: ["a__x"] }, ONLY_A_X],
  ["servers [], tools omitted", { servers: [] }, NONE],
  ["servers [], tools []", { servers: [], tools: [] }, NONE],
  ["servers [a], tools omitted", { servers: ["a"] }, ONLY_A],
  ["servers [a], tools []", { servers: ["a"], tools: [] }, NONE],
  ["servers [a], tools [a__x]", { servers: ["a"], tools: ["a__x"] }, ONLY_A_X],
];

describe("Scope matrix", () => {
  for (const [name, agent, want] of matrix) {
    it(name, () => {
      const scope = scopeFor(agent);
      expect(scope.agent).toBe("agent");
      expect(scope.isUnscoped).toBe(want.unscoped);
      for (const [server, allowed] of Object.entries(want.servers)) {
        expect(scope.allowsServer(server), `allowsServer(${server})`).toBe(allowed);
      }
      for (const [ns, allowed] of Object.entries(want.tools)) {
        const [server, tool] = ns.split("__") as [string, string];
        expect(scope.allowsTool(server, tool, tool), `allowsTool(${ns})`).toBe(allowed);
      }
      expect(scope.startableServers()).toEqual(want.startable);
    });
  }

  it("servers [] with tools [a__x] is rejected by the config schema", () => {
    expect(() => scopeFor({ servers: [], tools: ["a__x"] })).toThrow(/not in this agent's servers list/);
  });
});

describe("Scope", () => {
  const cfg = config({
    servers: { bob: stdio(), live: stdio(), zed: stdio() },
    agents: {
      legacy: { tools: ["bob__bob_context", "live__live_echo", "zed__zed-run"] },
      plain: { type: "claude" },
      off: { disabled: true },
    },
  });

  it("is unscoped without an agent, or for an agent without servers/tools", () => {
    const none = new Scope(cfg);
    expect(none.agent).toBeUndefined();
    expect(none.isUnscoped).toBe(true);
    expect(none.toolAllowlist).toBeUndefined();
    expect(none.startableServers()).toEqual(["bob", "live", "zed"]);
    const plain = new Scope(cfg, "plain");
    expect(plain.agent).toBe("plain");
    expect(plain.isUnscoped).toBe(true);
  });

  it("accepts every alias spelling in the tool allowlist", () => {
    const scope = new Scope(cfg, "legacy");
    expect(scope.toolAllowlist).toEqual(["bob__bob_context", "live__live_echo", "zed__zed-run"]);
    // bob__bob_context is the stutter form of the public bob__context (wire bob-context or bob_context).
    expect(scope.allowsTool("bob", "context", "bob-context")).toBe(true);
    expect(scope.allowsTool("bob", "context", "bob_context")).toBe(true);
    expect(scope.allowsTool("bob", "context", "context")).toBe(true);
    expect(scope.allowsTool("bob", "other", "bob_other")).toBe(false);
    // zed__zed-run: hyphen stutter of zed__run.
    expect(scope.allowsTool("zed", "run", "run")).toBe(true);
  });

  it("with the server's plan, a stutter alias does not widen the scope to a neighbour", () => {
    const scope = new Scope(cfg, "legacy");
    const plan = planPublicNames("live", ["echo", "live_echo"]);
    // live__live_echo names the wire tool live_echo, which keeps its full name.
    expect(scope.allowsTool("live", "live_echo", "live_echo", plan)).toBe(true);
    expect(scope.allowsTool("live", "echo", "echo", plan)).toBe(false);
    // Without a plan there is no way to know, and the alias is accepted (the Go behaviour).
    expect(scope.allowsTool("live", "echo", "echo")).toBe(true);
  });

  it("lists allowlisted names per server, as spelled", () => {
    const scope = new Scope(cfg, "legacy");
    expect(scope.allowedToolNames("bob")).toEqual(["bob_context"]);
    expect(scope.allowedToolNames("nope")).toEqual([]);
    expect(new Scope(cfg).allowedToolNames("bob")).toBeUndefined();
  });

  it("rejects an unknown agent with the configured names", () => {
    expect(() => new Scope(cfg, "x")).toThrow('--agent "x": no such agent in config (configured: legacy, off, plain)');
    expect(() => new Scope(config({}), "x")).toThrow('--agent "x": no such agent in config (no agents are configured)');
  });

  it("rejects a disabled agent", () => {
    expect(() => new Scope(cfg, "off")).toThrow(/--agent "off": this agent is disabled/);
  });
});
