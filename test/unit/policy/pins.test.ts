import { describe, expect, it } from "vitest";
import { planPublicNames } from "../../../src/catalog/names.js";
import { configuredPins, effectivePins, pinMatches, scopePins } from "../../../src/gateway/policy/pins.js";
import { Scope } from "../../../src/gateway/policy/scope.js";
import { config, stdio } from "./helpers.js";

describe("pinMatches", () => {
  it("matches a whole server by name or server__*", () => {
    expect(pinMatches(["gh"], "gh", "search", "search")).toBe(true);
    expect(pinMatches(["gh__*"], "gh", "search", "search")).toBe(true);
    expect(pinMatches(["gh"], "ghx", "search", "search")).toBe(false);
    expect(pinMatches(["gh__*"], "fs", "read", "read")).toBe(false);
  });

  it("matches an exact tool by public name, wire name or stutter form", () => {
    // wire bob_context, public bob__context
    expect(pinMatches(["bob__context"], "bob", "context", "bob_context")).toBe(true);
    expect(pinMatches(["bob__bob_context"], "bob", "context", "bob_context")).toBe(true);
    expect(pinMatches(["bob__bob-context"], "bob", "context", "bob_context")).toBe(true);
    // wire plan (no self-prefix): legacy clients may still write bob__bob_plan
    expect(pinMatches(["bob__bob_plan"], "bob", "plan", "plan")).toBe(true);
    expect(pinMatches(["bob__plan"], "bob", "plan", "plan")).toBe(true);
    expect(pinMatches(["bob__plans"], "bob", "plan", "plan")).toBe(false);
    expect(pinMatches(["amy__plan"], "bob", "plan", "plan")).toBe(false);
  });

  it("never matches with no pins", () => {
    expect(pinMatches([], "bob", "plan", "plan")).toBe(false);
  });

  it("with a plan, a stutter pin selects only the tool it names", () => {
    const plan = planPublicNames("live", ["echo", "live_echo"]);
    expect(pinMatches(["live__live_echo"], "live", "live_echo", "live_echo", plan)).toBe(true);
    expect(pinMatches(["live__live_echo"], "live", "echo", "echo", plan)).toBe(false);
    expect(pinMatches(["live__echo"], "live", "echo", "echo", plan)).toBe(true);
  });
});

describe("configuredPins / effectivePins", () => {
  const cfg = config({
    pin: ["a", "b__z"],
    servers: { a: stdio(), b: stdio(), c: stdio() },
    agents: {
      inherit: {},
      own: { pin: ["c__*"] },
      none: { pin: [] },
      onlyA: { servers: ["a"] },
      exact: { tools: ["a__x", "a__y", "b__z", "b__w", "c__v"] },
      exactOwn: { tools: ["a__a_x", "b__z"], pin: ["a__x"] },
    },
  });

  it("inherits the global list when the agent's pin is omitted", () => {
    expect(configuredPins(cfg)).toEqual(["a", "b__z"]);
    expect(configuredPins(cfg, "inherit")).toEqual(["a", "b__z"]);
    expect(effectivePins(cfg)).toEqual(["a", "b__z"]);
    expect(effectivePins(cfg, "inherit")).toEqual(["a", "b__z"]);
  });

  it("lets the agent's own list override, and [] mean none", () => {
    expect(effectivePins(cfg, "own")).toEqual(["c__*"]);
    expect(effectivePins(cfg, "none")).toEqual([]);
  });

  it("keeps only pins of in-scope servers for a servers-only scope", () => {
    expect(effectivePins(cfg, "onlyA")).toEqual(["a"]);
  });

  it("expands pins into the allowlisted names they match for an exact tool scope", () => {
    // "a" covers a__x and a__y; "b__z" covers b__z only; c is not pinned.
    expect(effectivePins(cfg, "exact")).toEqual(["a__x", "a__y", "b__z"]);
    // The allowlist spelling is kept (a__a_x is the stutter form of the pinned a__x).
    expect(effectivePins(cfg, "exactOwn")).toEqual(["a__a_x"]);
  });

  it("is empty when nothing is pinned", () => {
    const bare = config({ servers: { a: stdio() }, agents: { x: { servers: ["a"] } } });
    expect(effectivePins(bare)).toEqual([]);
    expect(effectivePins(bare, "x")).toEqual([]);
  });

  it("throws for an unknown agent, like the scope", () => {
    expect(() => effectivePins(cfg, "ghost")).toThrow(/no such agent/);
  });

  it("scopePins works on a prebuilt scope", () => {
    expect(scopePins(["a", "b"], new Scope(cfg, "onlyA"))).toEqual(["a"]);
    expect(scopePins(["a", "b"], new Scope(cfg))).toEqual(["a", "b"]);
  });
});
