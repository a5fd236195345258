// The exact command a needs_auth server names.
import { describe, expect, it } from "vitest";
import { loginCommand } from "../../../src/auth/command.js";

describe("loginCommand", () => {
  it("names the config file unless it is the default one, quoting for the shell", () => {
    const env = { HOME: "/home/u" };
    expect(loginCommand("linear", undefined, env)).toBe("mcphub auth login linear");
    expect(loginCommand("linear", "/home/u/.config/mcphub/mcphub.yaml", env)).toBe("mcphub auth login linear");
    expect(loginCommand("linear", "/srv/my config/mcphub.toml", env)).toBe("mcphub --config '/srv/my config/mcphub.toml' auth login linear");
  });
});
