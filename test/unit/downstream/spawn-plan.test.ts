// Issue 15, item 14: what is spawned for a stdio server on each platform, as a pure function.
import { describe, expect, it } from "vitest";
import { findCommand, planSpawn, quoteForCmd, type FileProbe } from "../../../src/downstream/stdio/spawn-plan.js";

const files = (...present: string[]): FileProbe => ({ isExecutable: (p) => present.map((x) => x.toLowerCase()).includes(p.toLowerCase()) });
const WIN_ENV = { Path: "C:\\Windows\\system32;C:\\Program Files\\nodejs", PATHEXT: ".COM;.EXE;.BAT;.CMD", ComSpec: "C:\\Windows\\system32\\cmd.exe" };

describe("spawn plan", () => {
  it("POSIX: the command as given, in its own process group", () => {
    expect(planSpawn({ command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], platform: "linux", env: { PATH: "/usr/bin" } }, files())).toEqual({
      file: "npx",
      args: ["-y", "@modelcontextprotocol/server-memory"],
      detached: true,
      windowsVerbatimArguments: false,
      kill: "process-group",
    });
    expect(planSpawn({ command: "/opt/x/server", args: [], platform: "darwin", env: {} }, files()).kill).toBe("process-group");
  });

  it("Windows: npx resolves to npx.cmd and runs through cmd.exe with every argument quoted", () => {
    const plan = planSpawn(
      { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory", "a b", 'say "hi"', "50%&x"], platform: "win32", env: WIN_ENV },
      files("C:\\Program Files\\nodejs\\npx.cmd"),
    );
    expect(plan.file).toBe("C:\\Windows\\system32\\cmd.exe");
    expect(plan.detached).toBe(false);
    expect(plan.kill).toBe("taskkill");
    expect(plan.windowsVerbatimArguments).toBe(true);
    expect(plan.args.slice(0, 3)).toEqual(["/d", "/s", "/c"]);
    expect(plan.args[3]).toBe(
      '"C:\\Program^ Files\\nodejs\\npx.cmd ^"-y^" ^"@modelcontextprotocol/server-memory^" ^"a^ b^" ^"say^ \\^"hi\\^"^" ^"50^%^&x^""',
    );
  });

  it("Windows: an .exe runs directly (no shell), found through PATH and PATHEXT, env names case-insensitive", () => {
    const plan = planSpawn({ command: "node", args: ["server.js", "x y"], platform: "win32", env: { PATH: "C:\\nodejs", pathext: ".EXE;.CMD" } }, files("C:\\nodejs\\node.exe"));
    expect(plan).toEqual({ file: "C:\\nodejs\\node.exe", args: ["server.js", "x y"], detached: false, windowsVerbatimArguments: false, kill: "taskkill" });
  });

  it("Windows: a node_modules/.bin shim gets its metacharacters escaped twice; an unknown command is left to spawn's ENOENT", () => {
    const shim = planSpawn({ command: "C:\\p\\node_modules\\.bin\\mcp.cmd", args: ["a&b"], platform: "win32", env: WIN_ENV }, files("C:\\p\\node_modules\\.bin\\mcp.cmd"));
    expect(shim.args[3]).toBe('"C:\\p\\node_modules\\.bin\\mcp.cmd ^^^"a^^^&b^^^""');
    expect(planSpawn({ command: "nope", args: [], platform: "win32", env: WIN_ENV }, files()).file).toBe("nope");
  });

  it("quotes backslashes for the C runtime", () => {
    expect(quoteForCmd("C:\\dir\\", false)).toBe('^"C:\\dir\\\\^"');
    expect(quoteForCmd('a\\"b', false)).toBe('^"a\\\\\\^"b^"');
  });

  it("findCommand searches PATH on POSIX and honours paths with a separator", () => {
    expect(findCommand({ command: "node", platform: "linux", env: { PATH: "/a:/usr/bin" } }, files("/usr/bin/node"))).toBe("/usr/bin/node");
    expect(findCommand({ command: "./bin/x", platform: "linux", env: { PATH: "/usr/bin" }, cwd: "/srv" }, files("/srv/bin/x"))).toBe("/srv/bin/x");
    expect(findCommand({ command: "ghost", platform: "linux", env: { PATH: "/usr/bin" } }, files())).toBeUndefined();
  });
});
