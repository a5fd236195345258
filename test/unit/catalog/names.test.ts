import { describe, expect, it } from "vitest";
import { namespacedAliases, planPublicNames, splitNamespaced, stripSelfPrefix } from "../../../src/catalog/names.js";

const fragments = (server: string, wires: string[]): Record<string, string> =>
  Object.fromEntries(wires.map((w) => [w, planPublicNames(server, wires).publicOf(w)]));

describe("planPublicNames", () => {
  it("strips an underscore or hyphen self-prefix", () => {
    expect(fragments("bob", ["bob_context"])).toEqual({ bob_context: "context" });
    expect(fragments("bob", ["bob-context"])).toEqual({ "bob-context": "context" });
  });

  it("leaves names without a self-prefix, and a bare prefix, alone", () => {
    expect(fragments("bob", ["plan", "bob_", "bob-", "bobcat", "bob"])).toEqual({
      plan: "plan",
      bob_: "bob_",
      "bob-": "bob-",
      bobcat: "bobcat",
      bob: "bob",
    });
  });

  it("keeps the wire name when stripping collides with an exact wire name", () => {
    expect(fragments("bob", ["context", "bob-context"])).toEqual({ context: "context", "bob-context": "bob-context" });
    expect(fragments("live", ["echo", "live_echo", "live_other"])).toEqual({
      echo: "echo",
      live_echo: "live_echo",
      live_other: "other",
    });
  });

  it("gives a contested fragment to the first wire name in byte order ('-' < '_')", () => {
    expect(fragments("test", ["test_foo", "test-foo"])).toEqual({ "test-foo": "foo", test_foo: "test_foo" });
    expect(fragments("test", ["test-foo", "test_foo"])).toEqual({ "test-foo": "foo", test_foo: "test_foo" });
  });

  it("does not depend on input order and ignores duplicates", () => {
    const a = planPublicNames("s", ["s_b", "b", "s-c", "s_c", "s_d"]).entries();
    const b = planPublicNames("s", ["s_d", "s_c", "s-c", "b", "s_b", "s_d"]).entries();
    expect(a).toEqual(b);
    expect(a).toEqual([
      { wire: "b", fragment: "b" },
      { wire: "s-c", fragment: "c" },
      { wire: "s_d", fragment: "d" },
      { wire: "s_b", fragment: "s_b" },
      { wire: "s_c", fragment: "s_c" },
    ]);
  });

  it("falls back to the pure strip rule for a wire name outside the plan", () => {
    const plan = planPublicNames("bob", ["context"]);
    expect(plan.publicOf("bob_other")).toBe("other");
  });

  it("resolves public fragments, wire names and stutter forms to the wire name", () => {
    const plan = planPublicNames("bob", ["bob_context", "bob-plan", "check"]);
    expect(plan.resolve("context")).toBe("bob_context");
    expect(plan.resolve("bob_context")).toBe("bob_context");
    expect(plan.resolve("bob-context")).toBe("bob_context");
    expect(plan.resolve("plan")).toBe("bob-plan"); // decision 3: hyphen self-prefix resolves inbound
    expect(plan.resolve("bob-plan")).toBe("bob-plan");
    expect(plan.resolve("bob_plan")).toBe("bob-plan");
    expect(plan.resolve("check")).toBe("check");
    expect(plan.resolve("bob_check")).toBe("check");
    expect(plan.resolve("bob-check")).toBe("check");
    expect(plan.resolve("bob__check")).toBe("check");
    expect(plan.resolve("missing")).toBeUndefined();
    expect(plan.resolve("bob_")).toBeUndefined();
    expect(plan.resolve("")).toBeUndefined();
  });

  it("resolves exact names before stutter forms in a collision", () => {
    const plan = planPublicNames("live", ["echo", "live_echo", "live_other"]);
    expect(plan.resolve("echo")).toBe("echo");
    expect(plan.resolve("live_echo")).toBe("live_echo");
    expect(plan.resolve("other")).toBe("live_other");
    expect(plan.resolve("live-other")).toBe("live_other");
    const t = planPublicNames("test", ["test_foo", "test-foo"]);
    expect(t.resolve("foo")).toBe("test-foo");
    expect(t.resolve("test-foo")).toBe("test-foo");
    expect(t.resolve("test_foo")).toBe("test_foo");
  });

  it("property: every advertised name and alias resolves back to its own wire name", () => {
    // A seeded generator keeps failures reproducible.
    let seed = 0x9e3779b9;
    const rand = (n: number): number => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
      return seed % n;
    };
    const atoms = ["a", "b", "ab", "x", "echo", "foo", "s", "s_", "s-", "_", "-"];
    const failures: string[] = [];
    for (let round = 0; round < 500; round++) {
      const count = 1 + rand(8);
      const wires: string[] = [];
      for (let i = 0; i < count; i++) {
        const prefix = ["", "s_", "s-", "s__", "s_s_", "s-s_"][rand(6)] ?? "";
        let body = "";
        for (let k = 0, n = 1 + rand(2); k < n; k++) body += atoms[rand(atoms.length)];
        wires.push(prefix + body);
      }
      const plan = planPublicNames("s", wires);
      const where = JSON.stringify(wires);
      const seen = new Set<string>();
      for (const { wire, fragment } of plan.entries()) {
        // Collect failures instead of calling expect per check: thousands of checks stay fast.
        if (fragment === "") failures.push(`empty fragment for ${wire} in ${where}`);
        if (seen.has(fragment)) failures.push(`duplicate fragment ${fragment} in ${where}`);
        seen.add(fragment);
        if (plan.resolve(fragment) !== wire) failures.push(`fragment ${fragment} ↛ ${wire} in ${where}`);
        if (plan.resolve(wire) !== wire) failures.push(`wire ${wire} ↛ itself in ${where}`);
        for (const alias of namespacedAliases("s", fragment, wire, plan)) {
          const split = splitNamespaced(alias);
          if (split?.server !== "s" || plan.resolve(split.tool) !== wire) failures.push(`alias ${alias} ↛ ${wire} in ${where}`);
        }
      }
      expect(plan.entries().map((e) => e.wire).sort()).toEqual([...new Set(wires)].sort());
    }
    expect(failures).toEqual([]);
  });
});

describe("stripSelfPrefix", () => {
  it("strips once, underscore before hyphen", () => {
    expect(stripSelfPrefix("bob", "bob_bob_x")).toBe("bob_x");
    expect(stripSelfPrefix("bob", "bob-x")).toBe("x");
    expect(stripSelfPrefix("bob", "bobx")).toBe("bobx");
  });
});

describe("splitNamespaced", () => {
  it("splits on the first double underscore", () => {
    expect(splitNamespaced("bob__context")).toEqual({ server: "bob", tool: "context" });
    expect(splitNamespaced("bob__a__b")).toEqual({ server: "bob", tool: "a__b" });
    expect(splitNamespaced("bob___x")).toEqual({ server: "bob", tool: "_x" });
  });

  it("rejects names without both halves", () => {
    expect(splitNamespaced("bob")).toBeUndefined();
    expect(splitNamespaced("__x")).toBeUndefined();
    expect(splitNamespaced("bob__")).toBeUndefined();
  });

  it("with a server: requires it and strips a redundant second server__", () => {
    expect(splitNamespaced("bob__bob__plan", "bob")).toEqual({ server: "bob", tool: "plan" });
    expect(splitNamespaced("bob__plan", "bob")).toEqual({ server: "bob", tool: "plan" });
    expect(splitNamespaced("bob__bob__", "bob")).toEqual({ server: "bob", tool: "bob__" });
    expect(splitNamespaced("amy__plan", "bob")).toBeUndefined();
  });
});

describe("namespacedAliases", () => {
  it("lists every accepted spelling, deduplicated", () => {
    expect(namespacedAliases("bob", "context", "bob_context")).toEqual([
      "bob__context",
      "bob__bob_context",
      "bob__bob-context",
    ]);
    expect(namespacedAliases("bob", "plan", "plan")).toEqual(["bob__plan", "bob__bob_plan", "bob__bob-plan"]);
  });

  it("with a plan, drops spellings that name a different tool", () => {
    const plan = planPublicNames("live", ["echo", "live_echo"]);
    expect(namespacedAliases("live", "echo", "echo", plan)).toEqual(["live__echo", "live__live-echo"]);
    expect(namespacedAliases("live", "live_echo", "live_echo", plan)).toEqual([
      "live__live_echo",
      "live__live_live_echo",
      "live__live-live_echo",
    ]);
  });
});
