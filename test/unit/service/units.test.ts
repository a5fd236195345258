// The systemd unit and launchd agent texts: quoting that survives odd paths, the environment
// allowlist (locations only, never a secret), and the daemon records' stale detection.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findDaemon, launchdPlist, liveDaemons, recordDaemon, serviceEnv, systemdUnit, systemdWord, type ServiceSpec } from "../../../src/service/index.js";

const spec: ServiceSpec = {
  name: "mcphub",
  argv: ["/usr/bin/node", "/opt/mcp hub/bin/mcphub.js", "--config", '/home/me/100% "odd"/mcphub.yaml', "up"],
  workingDirectory: "/home/me",
  env: { PATH: "/usr/bin:/bin", MCPHUB_DATA_DIR: "/home/me/.local/share/mcphub" },
  configPath: "/home/me/mcphub.yaml",
  logPath: "/home/me/Library/Logs/mcphub/mcphub.log",
};

describe("systemd unit", () => {
  it("quotes words with spaces, escapes % and $ and quotes", () => {
    expect(systemdWord("/usr/bin/node")).toBe("/usr/bin/node");
    expect(systemdWord("a b")).toBe('"a b"');
    expect(systemdWord("100%")).toBe("100%%");
    expect(systemdWord("$HOME")).toBe("$$HOME");
    expect(systemdWord('say "hi"')).toBe('"say \\"hi\\""');
    const unit = systemdUnit(spec);
    expect(unit).toContain('ExecStart=/usr/bin/node "/opt/mcp hub/bin/mcphub.js" --config "/home/me/100%% \\"odd\\"/mcphub.yaml" up');
    expect(unit).toContain('Environment="PATH=/usr/bin:/bin"');
    expect(unit).toMatch(/^Restart=on-failure$/m);
  });

  it("carries only the allowlisted variables, and no proxy credentials", () => {
    const env = serviceEnv({
      PATH: "/bin",
      MCPHUB_DATA_DIR: "/d",
      MCPHUB_VAULT_PASSPHRASE: "secret-1",
      MCPHUB_VAULT_PASSPHRASE_FILE: "/home/me/.pass",
      GITHUB_TOKEN: "ghp_x",
      HTTPS_PROXY: "http://user:pw@proxy:3128",
      HTTP_PROXY: "http://proxy:3128",
    });
    expect(env).toEqual({ PATH: "/bin", MCPHUB_DATA_DIR: "/d", MCPHUB_VAULT_PASSPHRASE_FILE: "/home/me/.pass", HTTP_PROXY: "http://proxy:3128" });
  });
});

describe("launchd agent", () => {
  it("is a well-formed plist: program arguments, restart on failure, logs", () => {
    const plist = launchdPlist(spec);
    expect(plist).toContain("<string>dev.mcphub.mcphub</string>");
    expect(plist).toContain("<string>/home/me/100% &quot;odd&quot;/mcphub.yaml</string>");
    expect(plist).toMatch(/<key>KeepAlive<\/key>\s*<dict>\s*<key>SuccessfulExit<\/key>\s*<false\/>/);
    expect(plist).toMatch(/<key>StandardErrorPath<\/key>\s*<string>\/home\/me\/Library\/Logs\/mcphub\/mcphub\.log<\/string>/);
    // Balanced tags, as plutil -lint would require.
    const open = (plist.match(/<(dict|array)>/g) ?? []).length;
    const close = (plist.match(/<\/(dict|array)>/g) ?? []).length;
    expect(open).toBe(close);
    const xmllint = spawnSync("xmllint", ["--noout", "-"], { input: plist, encoding: "utf8" });
    if (xmllint.error === undefined) expect(xmllint.status, xmllint.stderr).toBe(0);
  });
});

describe("daemon records", () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("records this process, finds it by config, and removes the record", () => {
    dir = mkdtempSync(join(tmpdir(), "mcphub-daemons-"));
    const remove = recordDaemon(dir, { url: "http://127.0.0.1:5/mcp", host: "127.0.0.1", port: 5, config: "/c.yaml", version: "0" });
    expect(findDaemon(dir, "/c.yaml")?.pid).toBe(process.pid);
    expect(findDaemon(dir, "/other.yaml")?.pid).toBe(process.pid); // the only one
    remove();
    expect(liveDaemons(dir)).toEqual([]);
  });

  it("drops the record of a process that is gone", () => {
    dir = mkdtempSync(join(tmpdir(), "mcphub-daemons-"));
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid as number;
    recordDaemon(dir, { pid: dead, url: "http://127.0.0.1:5/mcp", host: "127.0.0.1", port: 5, version: "0" });
    expect(readdirSync(join(dir, "daemons"))).toEqual([`${dead}.json`]);
    expect(liveDaemons(dir)).toEqual([]);
    expect(readdirSync(join(dir, "daemons"))).toEqual([]);
  });
});
