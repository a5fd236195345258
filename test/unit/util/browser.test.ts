// Which browser opens a URL: $BROWSER (with %s, or the URL appended; "none" opens nothing), else
// the desktop's opener, and nothing on Linux without a graphical session.
import { describe, expect, it } from "vitest";
import { launch, pickOpener } from "../../../src/util/browser.js";

const URL_ = "http://127.0.0.1:1/authorize?x=1&y=2";
const argv = (env: NodeJS.ProcessEnv, platform: NodeJS.Platform) => {
  const o = pickOpener(env, platform);
  return "why" in o ? o : [o.command, ...o.args(URL_)];
};

describe("pickOpener", () => {
  it("uses $BROWSER (with %s or the URL appended), and opens nothing for BROWSER=none", () => {
    expect(argv({ BROWSER: "firefox --new-window" }, "linux")).toEqual(["firefox", "--new-window", URL_]);
    expect(argv({ BROWSER: "w3m %s:lynx" }, "linux")).toEqual(["w3m", URL_]);
    expect(argv({ BROWSER: "none" }, "darwin")).toEqual({ why: "BROWSER=none" });
  });

  it("uses the desktop opener, and nothing on Linux without a graphical session", () => {
    expect(argv({}, "darwin")).toEqual(["open", URL_]);
    expect(argv({}, "win32")).toEqual(["rundll32", "url.dll,FileProtocolHandler", URL_]);
    expect(argv({}, "linux")).toEqual({ why: "no graphical session here" });
    expect(argv({ WAYLAND_DISPLAY: "wayland-0" }, "linux")).toEqual(["xdg-open", URL_]);
  });

  it("says when the opener is not installed", async () => {
    expect(await launch({ command: "/nonexistent/browser", args: (t) => [t] }, URL_, {})).toEqual({ ok: false, why: "/nonexistent/browser is not installed" });
  });
});
