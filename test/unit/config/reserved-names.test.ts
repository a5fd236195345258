// Issue 15, item 6: a config name that JavaScript objects treat specially is either served like any
// other (`constructor`, `toString`, ...) or refused with a message (`__proto__`), never dropped,
// in YAML, TOML and JSON alike.
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfigText } from "../../../src/config/index.js";
import { readState } from "../../../src/harness/state.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const FORMATS = {
  yaml: (names: string[]) => `servers:\n${names.map((n) => `  ${n}:\n    command: node\n`).join("")}`,
  // Object.fromEntries defines "__proto__" as an own key, so JSON.stringify writes it.
  json: (names: string[]) => JSON.stringify({ servers: Object.fromEntries(names.map((n) => [n, { command: "node" }])) }),
  toml: (names: string[]) => names.map((n) => `[servers.${n}]\ncommand = "node"\n`).join(""),
} as const;

describe("reserved-looking names in the config", () => {
  for (const format of ["yaml", "json", "toml"] as const) {
    it(`serves constructor, toString, hasOwnProperty and valueOf (${format})`, () => {
      const names = ["constructor", "toString", "hasOwnProperty", "valueOf"];
      const config = parseConfigText(FORMATS[format](names), format, `x.${format}`);
      expect(Object.keys(config.servers).sort()).toEqual([...names].sort());
      for (const n of names) expect(config.servers[n]?.command).toBe("node");
    });

    it(`refuses a server named __proto__ with a message (${format})`, () => {
      const text = FORMATS[format](["__proto__", "ok"]);
      let err: unknown;
      try {
        parseConfigText(text, format, `x.${format}`);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toBe(`x.${format}: servers.__proto__: "__proto__" cannot be used as a name (JavaScript reserves it); pick another name`);
    });
  }

  it("refuses __proto__ in every map: agents, groups, env, headers", () => {
    const text = [
      "servers:",
      "  a:",
      "    command: node",
      "    env:",
      "      __proto__: x",
      "agents:",
      "  __proto__:",
      "    type: claude",
      "groups:",
      "  __proto__: [a]",
    ].join("\n");
    expect(() => parseConfigText(text, "yaml", "m.yaml")).toThrow(/servers\.a\.env\.__proto__: .*\n.*agents\.__proto__: .*\n.*groups\.__proto__/);
  });

  it("an unknown name finds nothing inherited", () => {
    const config = parseConfigText("servers:\n  a:\n    command: node\nagents:\n  claude: {}\n", "yaml");
    expect(config.servers.constructor).toBeUndefined();
    expect(config.agents.toString).toBeUndefined();
    expect(config.groups.hasOwnProperty).toBeUndefined();
    expect(config.servers.a?.env?.constructor).toBeUndefined();
  });

  it("sync state keyed by an agent named constructor finds nothing inherited", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcphub-state-"));
    writeFileSync(join(dir, "state.json"), JSON.stringify({ version: 1, agents: {}, plans: {}, tokens: {} }));
    const state = await readState(dir);
    expect(state.tokens.constructor).toBeUndefined();
    expect(state.agents.constructor).toBeUndefined();
    expect((await readState(join(dir, "missing"))).tokens.constructor).toBeUndefined();
  });
});
