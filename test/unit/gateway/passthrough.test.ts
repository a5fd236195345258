// Pure parts of the protocol pass-through: the mount plan for `namespace: false` (deterministic,
// collisions refused for every claimant) and the per-request capability check.
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfigText } from "../../../src/config/index.js";
import { missingCapability } from "../../../src/gateway/passthrough/capabilities.js";
import { planMounts, type MountInput } from "../../../src/gateway/policy/mounts.js";
import { rootOf } from "../../../src/gateway/passthrough/roots.js";

const prompt = (server: string, name: string, unprefixed: boolean): MountInput<string> => ({
  server,
  bare: name,
  qualified: `${server}__${name}`,
  unprefixed,
  item: `${server}:${name}`,
});

describe("planMounts", () => {
  it("publishes unprefixed names bare and namespaced ones qualified, sorted by published name", () => {
    const plan = planMounts("prompt", [prompt("b", "zeta", false), prompt("a", "alpha", true), prompt("a", "beta", true)]);
    expect(plan.items.map((i) => i.published)).toEqual(["alpha", "b__zeta", "beta"]);
    expect(plan.byPublished.get("alpha")?.item).toBe("a:alpha");
    expect(plan.conflicts.size).toBe(0);
  });

  it("refuses a name offered by two unprefixed servers for both, whatever the input order", () => {
    const inputs = [prompt("a", "same", true), prompt("b", "same", true), prompt("b", "own", true)];
    for (const order of [inputs, [...inputs].reverse()]) {
      const plan = planMounts("prompt", order);
      expect(plan.items.map((i) => i.published)).toEqual(["a__same", "b__same", "own"]);
      expect(plan.byPublished.has("same")).toBe(false);
      expect(plan.conflicts.get("same")).toEqual({
        kind: "prompt",
        name: "same",
        servers: ["a", "b"],
        message: 'prompt "same" is offered by servers "a" and "b", all with namespace: false; neither gets the unprefixed name, they are published as a__same and b__same (rename one or set namespace: true on it)',
      });
    }
  });

  it("refuses a bare name equal to another item's qualified name, and names the gateway's own reservations", () => {
    const plan = planMounts(
      "resource",
      [
        { server: "u", bare: "mcphub://howto", qualified: "mcphub://u/mcphub%3A%2F%2Fhowto", unprefixed: true, item: 1 },
        { server: "u", bare: "x__y", qualified: "mcphub://u/x__y", unprefixed: true, item: 2 },
        { server: "x", bare: "y", qualified: "x__y", unprefixed: false, item: 3 },
      ],
      (name) => (name === "mcphub://howto" ? "the gateway's own mcphub://howto resource" : undefined),
    );
    expect(plan.conflicts.get("mcphub://howto")?.message).toBe(
      'resource "mcphub://howto" of server "u" (namespace: false) would shadow the gateway\'s own mcphub://howto resource; it is published as mcphub://u/mcphub%3A%2F%2Fhowto',
    );
    expect(plan.conflicts.get("x__y")?.servers).toEqual(["u", "x"]);
    expect(plan.byPublished.get("x__y")?.item).toBe(3);
  });

  it("a server listing one name twice publishes it once; an item is never in conflict with itself", () => {
    const plan = planMounts("tool", [
      { server: "a", bare: "a__b", qualified: "a__b", unprefixed: true, item: 1 },
      { server: "a", bare: "a__b", qualified: "a__b", unprefixed: true, item: 1 },
    ]);
    expect(plan.items).toHaveLength(1);
    expect(plan.conflicts.size).toBe(0);
  });
});

describe("missingCapability", () => {
  it("follows the spec's capability rules for each forwarded request", () => {
    expect(missingCapability("roots/list", undefined, {})).toBe("the roots capability");
    expect(missingCapability("roots/list", undefined, { roots: {} })).toBeUndefined();
    expect(missingCapability("sampling/createMessage", {}, {})).toBe("the sampling capability");
    expect(missingCapability("sampling/createMessage", { tools: [] }, { sampling: {} })).toBe("sampling.tools (sampling with tools)");
    expect(missingCapability("sampling/createMessage", { includeContext: "allServers" }, { sampling: {} })).toBe('sampling.context (includeContext "allServers")');
    expect(missingCapability("sampling/createMessage", { includeContext: "none" }, { sampling: {} })).toBeUndefined();
    expect(missingCapability("elicitation/create", {}, undefined)).toBe("the elicitation capability");
    // An empty elicitation object means form mode only (backwards compatibility).
    expect(missingCapability("elicitation/create", {}, { elicitation: {} })).toBeUndefined();
    expect(missingCapability("elicitation/create", { mode: "url" }, { elicitation: {} })).toBe("elicitation.url (url-mode elicitation)");
    expect(missingCapability("elicitation/create", {}, { elicitation: { url: {} } })).toBe("elicitation.form (form-mode elicitation)");
    expect(missingCapability("elicitation/create", { mode: "url" }, { elicitation: { url: {} } })).toBeUndefined();
  });
});

describe("pinned roots", () => {
  it("turns paths into file:// URIs and keeps URIs", () => {
    expect(rootOf("/srv/data")).toEqual({ uri: "file:///srv/data" });
    expect(rootOf("file:///opt/x")).toEqual({ uri: "file:///opt/x" });
    expect(rootOf("~/code").uri).toMatch(/^file:\/\/\/.+\/code$/);
  });
});

describe("pass-through config keys", () => {
  const rejected = (server: string): string => {
    try {
      parseConfigText(`servers:\n  s:\n${server}`, "yaml", "mcphub.yaml");
    } catch (err) {
      if (err instanceof ConfigError) return err.message;
      throw err;
    }
    throw new Error("expected the config to be rejected");
  };

  it("accepts namespace, connection and roots", () => {
    const c = parseConfigText("servers:\n  s:\n    command: x\n    namespace: false\n    connection: per-session\n    roots: [/a, ~/b, file:///c]\n", "yaml");
    expect(c.servers.s).toMatchObject({ namespace: false, connection: "per-session", roots: ["/a", "~/b", "file:///c"] });
  });

  it("rejects a bad connection or a relative root with one precise line", () => {
    expect(rejected("    command: x\n    connection: per-agent\n")).toBe('mcphub.yaml: servers.s.connection: connection must be "shared" or "per-session" (got "per-agent")');
    expect(rejected("    command: x\n    roots: [data]\n")).toBe('mcphub.yaml: servers.s.roots[0]: "data" must be an absolute path, ~/..., or a file:// URI');
  });
});
