// Which browser opens the sign-in page, and the exact command a needs_auth server names.
import { describe, expect, it } from "vitest";
import { browserCommand } from "../../../src/auth/browser.js";
import { loginCommand } from "../../../src/auth/command.js";

const URL_ = "http://127.0.0.1:1/authorize?x=1&y=2";

describe("browserCommand", () => {
  it("uses $BROWSER (with %s or the URL appended), and opens nothing for BROWSER=none", () => {
    expect(browserCommand(URL_, { BROWSER: "firefox --new-window" }, "linux")).toEqual(["firefox", "--new-window", URL_]);
    expect(browserCommand(URL_, { BROWSER: "w3m %s:lynx" }, "linux")).toEqual(["w3m", URL_]);
    expect(browserCommand(URL_, { BROWSER: "none" }, "darwin")).toBeUndefined();
  });

  it("uses the desktop opener, and nothing on a Linux machine without a display", () => {
    expect(browserCommand(URL_, {}, "darwin")).toEqual(["open", URL_]);
    expect(browserCommand(URL_, {}, "win32")).toEqual(["rundll32", "url.dll,FileProtocolHandler", URL_]);
    expect(browserCommand(URL_, { PATH: "/nonexistent" }, "linux")).toBeUndefined();
    expect(browserCommand(URL_, { DISPLAY: ":0", PATH: "/nonexistent" }, "linux")).toBeUndefined();
  });
});

describe("loginCommand", () => {
  it("names the config file unless it is the default one, quoting for the shell", () => {
    const env = { HOME: "/home/u" };
    expect(loginCommand("linear", undefined, env)).toBe("mcphub auth login linear");
    expect(loginCommand("linear", "/home/u/.config/mcphub/mcphub.yaml", env)).toBe("mcphub auth login linear");
    expect(loginCommand("linear", "/srv/my config/mcphub.toml", env)).toBe("mcphub --config '/srv/my config/mcphub.toml' auth login linear");
  });
});
