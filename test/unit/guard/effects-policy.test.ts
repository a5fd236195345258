// Effect classes from annotations and config overrides, and the per-agent policy's decisions.
import { describe, expect, it } from "vitest";
import { planPublicNames } from "../../../src/catalog/names.js";
import { parseConfigText } from "../../../src/config/index.js";
import { effectFromAnnotations, effectOf } from "../../../src/guard/effects.js";
import { agentPolicy, decide, patternRegex } from "../../../src/guard/policy.js";

const config = (yaml: string) => parseConfigText(yaml, "yaml", "mcphub.yaml");

describe("effectFromAnnotations", () => {
  it.each([
    [undefined, "write", "default"],
    [{}, "write", "default"],
    [{ idempotentHint: true, openWorldHint: false }, "write", "default"],
    [{ readOnlyHint: true }, "read", "annotations"],
    [{ readOnlyHint: true, openWorldHint: true }, "read", "annotations"],
    [{ readOnlyHint: false }, "write", "annotations"],
    [{ readOnlyHint: false, destructiveHint: false }, "write", "annotations"],
    [{ destructiveHint: true }, "destructive", "annotations"],
    [{ readOnlyHint: false, destructiveHint: true, idempotentHint: true }, "destructive", "annotations"],
    // Contradictory hints are read the less safe way.
    [{ readOnlyHint: true, destructiveHint: true }, "destructive", "annotations"],
    // Not booleans: ignored.
    [{ readOnlyHint: "true" }, "write", "default"],
  ])("%j → %s (%s)", (annotations, effect, source) => {
    expect(effectFromAnnotations(annotations as Record<string, unknown> | undefined)).toEqual({ effect, source });
  });
});

describe("effectOf: overrides win, most specific first", () => {
  const c = config(`
servers:
  bob:
    command: x
    effects: {"*": destructive, bob_context: read, bob_plan: write}
  plain: {command: x}
effects:
  bob__context: write
  plain__rm: destructive
`);
  const plan = planPublicNames("bob", ["bob_context", "bob_plan", "other"]);
  it("the top-level server__tool key, in any accepted spelling, beats the server's own", () => {
    expect(effectOf(c, { server: "bob", tool: "context", wire: "bob_context", annotations: { readOnlyHint: true } }, plan)).toEqual({
      effect: "write",
      source: "config",
      rule: "effects.bob__context",
    });
  });
  it("the server's key matches the public or the wire name", () => {
    expect(effectOf(c, { server: "bob", tool: "plan", wire: "bob_plan" }, plan)).toMatchObject({ effect: "write", rule: "servers.bob.effects.bob_plan" });
  });
  it('"*" covers the rest of the server, over its annotations', () => {
    expect(effectOf(c, { server: "bob", tool: "other", wire: "other", annotations: { readOnlyHint: true } }, plan)).toMatchObject({
      effect: "destructive",
      rule: 'servers.bob.effects["*"]',
    });
  });
  it("without an override, the annotations decide", () => {
    expect(effectOf(c, { server: "plain", tool: "ls", wire: "ls", annotations: { readOnlyHint: true } })).toEqual({ effect: "read", source: "annotations" });
    expect(effectOf(c, { server: "plain", tool: "rm", wire: "rm", annotations: { readOnlyHint: true } })).toMatchObject({ effect: "destructive", source: "config" });
  });
  it("names such as constructor are ordinary names, never inherited", () => {
    expect(effectOf(c, { server: "plain", tool: "constructor", wire: "constructor" })).toEqual({ effect: "write", source: "default" });
  });
});

describe("agent policy", () => {
  const c = config(`
servers: {gh: {command: x}, db: {command: x}}
policy: {allow: write, confirm: destructive, deny: ["*__drop_*"]}
agents:
  inherit: {}
  strict: {policy: {allow: read}}
  open: {policy: {deny: [], confirm: none}}
  deny_server: {policy: {deny: [gh]}}
  wide: {policy: {allow: destructive}}
`);
  it("an agent's keys replace the top-level ones one by one; unscoped uses the top level", () => {
    const strict = agentPolicy(c, "strict");
    expect([strict.allow, strict.allowRule, strict.confirm, strict.confirmRule, strict.deny.map((d) => d.rule)]).toEqual([
      "read",
      "agents.strict.policy.allow",
      "destructive",
      "policy.confirm",
      ["policy.deny[0]"],
    ]);
    const open = agentPolicy(c, "open");
    expect([open.allow, open.confirm, open.deny]).toEqual(["write", "none", []]);
    expect(agentPolicy(c, undefined).allowRule).toBe("policy.allow");
    expect(agentPolicy(config("servers: {}"), "x")).toMatchObject({ allow: "destructive", confirm: "none", deny: [], allowRule: undefined });
  });
  it("deny first, then allow, then confirm", () => {
    const p = agentPolicy(c, "inherit");
    expect(decide(p, "read", ["db__drop_table"])).toEqual({ kind: "refuse", reason: "denied", rule: "policy.deny[0]", pattern: "*__drop_*" });
    expect(decide(p, "destructive", ["db__truncate"])).toEqual({ kind: "refuse", reason: "effect_not_allowed", rule: "policy.allow" });
    expect(decide(agentPolicy(c, "open"), "write", ["db__insert"])).toEqual({ kind: "allow" });
    expect(decide(agentPolicy(c, "wide"), "destructive", ["db__truncate"])).toEqual({ kind: "confirm", rule: "policy.confirm" });
    const confirming = agentPolicy(config("servers: {a: {command: x}}\npolicy: {confirm: write}"), undefined);
    expect(decide(confirming, "write", ["a__b"])).toEqual({ kind: "confirm", rule: "policy.confirm" });
    expect(decide(confirming, "destructive", ["a__b"])).toEqual({ kind: "confirm", rule: "policy.confirm" });
    expect(decide(confirming, "read", ["a__b"])).toEqual({ kind: "allow" });
  });
  it("a deny pattern may name a whole server, match any spelling given, and treats other characters literally", () => {
    const p = agentPolicy(c, "deny_server");
    expect(decide(p, "read", ["gh__search"]).kind).toBe("refuse");
    expect(decide(p, "read", ["ghx__search"]).kind).toBe("allow");
    expect(patternRegex("a.b__c*").test("a.b__cd")).toBe(true);
    expect(patternRegex("a.b__c*").test("axb__cd")).toBe(false);
    expect(decide(agentPolicy(config("servers: {bob: {command: x}}\npolicy: {deny: [bob__bob_rm]}"), undefined), "read", ["bob__rm", "bob__bob_rm"]).kind).toBe("refuse");
  });
});
