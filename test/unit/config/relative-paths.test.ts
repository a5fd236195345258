// Issue 15, item 11: relative paths in a stdio server's command, args and cwd resolve against the
// config file's folder, by a precise rule (bare words and flags are never touched).
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";

describe("relative server paths", () => {
  it("resolve against the config file's folder, whatever the working directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcphub-rel-"));
    mkdirSync(join(dir, "conf"));
    const path = join(dir, "conf", "mcphub.yaml");
    writeFileSync(
      path,
      [
        "servers:",
        "  a:",
        "    command: ./bin/server",
        "    args: [./data, ../shared/x.json, ., --flag, --dir=./y, plain, sub/dir, '~/z']",
        "    cwd: work",
        "  b:",
        "    command: node",
        "    args: [tools/run.js]",
        "  c:",
        "    command: tools/run.sh",
        "    cwd: ~/x",
        "  r:",
        "    url: http://127.0.0.1:1/mcp",
      ].join("\n"),
    );
    const { config } = await loadConfig({ configPath: path, cwd: tmpdir(), env: { HOME: dir } });
    const conf = join(dir, "conf");
    expect(config.servers.a?.command).toBe(join(conf, "bin/server"));
    expect(config.servers.a?.args).toEqual([join(conf, "data"), join(dir, "shared/x.json"), conf, "--flag", "--dir=./y", "plain", "sub/dir", "~/z"]);
    expect(config.servers.a?.cwd).toBe(join(conf, "work"));
    expect(config.servers.b?.command).toBe("node");
    expect(config.servers.b?.args).toEqual(["tools/run.js"]);
    expect(config.servers.c?.command).toBe(join(conf, "tools/run.sh"));
    expect(config.servers.c?.cwd).toBe("~/x");
    expect(config.servers.r?.url).toBe("http://127.0.0.1:1/mcp");
  });
});
