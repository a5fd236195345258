// The guardrail keys of the config (src/config/policy.ts): every mistake is one line naming its
// place and what to do instead, including settings that are valid words but can never take effect
// (a confirm the allow level makes unreachable, a deny pattern outside the agent's servers).
import { describe, expect, it } from "vitest";
import { ConfigError, validateConfig } from "../../../src/config/index.js";

const SERVERS = { fx: { command: "node" }, gh: { command: "node" } };

function problems(raw: Record<string, unknown>): string[] {
  try {
    validateConfig({ servers: SERVERS, ...raw }, "mcphub.yaml");
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  return [];
}

describe("policy errors in config", () => {
  it("a misspelt class or level gets a did-you-mean", () => {
    expect(problems({ policy: { allow: "reed" } })).toEqual(['policy.allow: allow must be "read", "write" or "destructive" (got "reed"; did you mean "read"?)']);
    expect(problems({ agents: { claude: { policy: { confirm: "destructve" } } } })).toEqual([
      'agents.claude.policy.confirm: confirm must be "none", "write" or "destructive" (got "destructve"; did you mean "destructive"?)',
    ]);
    expect(problems({ effects: { fx__wipe: "destroy" } })).toEqual(['effects.fx__wipe: the effect must be "read", "write" or "destructive" (got "destroy")']);
  });

  it("a confirm level above allow in the same place never asks, and says what to change", () => {
    expect(problems({ policy: { allow: "write", confirm: "destructive" } })).toEqual([
      "policy.confirm: never asks: policy.allow: write refuses destructive tools before they could be confirmed; set allow: destructive to ask before such calls, or remove confirm to keep refusing them",
    ]);
    expect(problems({ agents: { claude: { policy: { allow: "read", confirm: "write" } } } })).toEqual([
      "agents.claude.policy.confirm: never asks: agents.claude.policy.allow: read refuses tools that write before they could be confirmed; set allow: write (or destructive) to ask before such calls, or remove confirm to keep refusing them",
    ]);
    // An agent's own confirm against the allow it inherits from the top level.
    expect(problems({ policy: { allow: "read" }, agents: { claude: { policy: { confirm: "destructive" } } } })).toEqual([
      "agents.claude.policy.confirm: never asks: policy.allow: read refuses destructive tools before they could be confirmed; set allow: destructive to ask before such calls, or remove confirm to keep refusing them",
    ]);
  });

  it("a confirm that some agent reaches is fine", () => {
    expect(problems({ policy: { allow: "write", confirm: "write" } })).toEqual([]);
    expect(problems({ policy: { allow: "destructive", confirm: "write" }, agents: { claude: { policy: { allow: "read" } } } })).toEqual([]);
    // The top-level confirm is the default of an agent that allows more.
    expect(problems({ policy: { allow: "read", confirm: "destructive" }, agents: { claude: { policy: { allow: "destructive" } } } })).toEqual([]);
    expect(problems({ agents: { claude: { policy: { allow: "write", confirm: "write" } } } })).toEqual([]);
  });

  it("a deny pattern that can never match is an error, not a silent no-op", () => {
    expect(problems({ policy: { deny: ["fxx__wipe"] } })).toEqual(['policy.deny[0]: unknown server "fxx"; configured servers: fx, gh']);
    expect(problems({ agents: { claude: { servers: ["gh"], policy: { deny: ["fx__wipe", "gh__delete_*", "*__drop_*"] } } } })).toEqual([
      `agents.claude.policy.deny[0]: "fx__wipe" never matches: server "fx" is not in this agent's servers list, so this agent cannot call its tools anyway`,
    ]);
    expect(problems({ policy: { deny: ["*"] } })).toEqual(['policy.deny[0]: "*" would deny every tool; to give an agent no tools, set its servers: []']);
    expect(problems({ policy: { deny: ["fx__"] } })).toEqual(['policy.deny[0]: "fx__" ends with "__"; use "fx" or "fx__*"']);
    expect(problems({ policy: { deny: ["fx__wipe all"] } })[0]).toContain("is not a tool name pattern");
  });

  it("effects and policy keys in the wrong place say where they belong", () => {
    expect(problems({ effects: { "fx__*": "read" } })).toEqual(['effects["fx__*"]: "fx__*" must be an exact server__tool name (for every tool of a server, set servers.fx.effects: {"*": read})']);
    expect(problems({ effects: { fx__wipe: "read" }, servers: { ...SERVERS, fx: { command: "node", effects: { wipe: "destructive" } } } })).toEqual([
      "effects.fx__wipe: also set as servers.fx.effects.wipe: destructive; set it in one place",
    ]);
    expect(problems({ agents: { claude: { mode: "direct", policy: { allow: "read" } } } })).toEqual([
      "agents.claude.policy: policy applies only to gateway mode (this agent is direct: its harness talks to the servers itself)",
    ]);
  });
});
