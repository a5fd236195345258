// Issue 15, item 11, end to end: a config whose stdio server is given by relative paths (command,
// args, cwd) works from a gateway started in another directory.
import { chmodSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, startGateway, tempHome, text, waitReady, type TempHome } from "../helpers/gateway.js";

let home: TempHome;
beforeAll(() => {
  home = tempHome("mcphub-relpaths-");
});
afterAll(() => home.cleanup());

describe("relative server paths", () => {
  it("command, args and cwd resolve against the config file's folder", async () => {
    const conf = join(home.dir, "conf");
    mkdirSync(join(conf, "bin"), { recursive: true });
    mkdirSync(join(conf, "work"));
    // A server script next to the config, and a launcher script run by a relative command.
    writeFileSync(join(conf, "server.mjs"), `import ${JSON.stringify(join(FIXTURES, "slow-start.mjs"))};\n`);
    writeFileSync(join(conf, "bin", "launch.sh"), `#!/bin/sh\nexec "${process.execPath}" "$@"\n`);
    chmodSync(join(conf, "bin", "launch.sh"), 0o755);
    const cfg = home.writeConfig(
      {
        expose: "all",
        servers: {
          byargs: { command: process.execPath, args: ["./server.mjs"], cwd: "work" },
          bycommand: { command: "./bin/launch.sh", args: ["./server.mjs"] },
        },
      },
      "conf/mcphub.yaml",
    );
    // The gateway runs with the repository as its working directory, not conf/.
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["byargs", "bycommand"]);
      expect(realpathSync(text(await gw.call("byargs__cwd")))).toBe(realpathSync(join(conf, "work")));
      expect(text(await gw.call("bycommand__echo", { message: "ok" }))).toBe("echo: ok");
    } finally {
      await gw.close();
    }
  });
});
