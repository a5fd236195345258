// Issue 15, item 15: `mcphub mcp serve` started by hand on a terminal says what it is and how to
// stop it (one line on stderr), and still stops on Ctrl-D; started by a harness (stdin a pipe) it
// prints nothing of the kind. The management tools reach a real client with their hints.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, startGateway, tempHome, type TempHome } from "../helpers/gateway.js";

const hasScript = spawnSync("script", ["--version"]).status === 0;
let home: TempHome;
let cfg: string;
beforeAll(() => {
  home = tempHome("mcphub-terminal-");
  cfg = home.writeConfig({ expose: "lazy", servers: {} });
});
afterAll(() => home.cleanup());

const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

describe("mcp serve on a terminal", () => {
  it.skipIf(!hasScript)("prints one line saying it speaks MCP on stdio and how to stop it; Ctrl-D stops it", () => {
    const line = [process.execPath, BIN, "--config", cfg, "mcp", "serve"].map(quote).join(" ");
    // Ctrl-D (EOF on the terminal) once the gateway is up.
    const r = spawnSync("sh", ["-c", `(sleep 3; printf '\\004') | script -qec ${quote(line)} /dev/null`], { env: home.env, encoding: "utf8", timeout: 60_000 });
    expect(r.status).toBe(0);
    const lines = r.stdout.split(/\r?\n/).filter((l) => l.startsWith("mcphub:"));
    expect(lines).toEqual([
      "mcphub: this is an MCP server speaking JSON-RPC on stdin/stdout, meant to be launched by an agent harness (see `mcphub sync`). Press Ctrl-C (or Ctrl-D) to stop.",
    ]);
  });

  it("says nothing of the kind to a harness, and advertises the tools' hints", async () => {
    const gw = await startGateway(home, cfg);
    try {
      const tools = (await gw.client.listTools()).tools;
      expect(tools.find((t) => t.name === "mcphub_call_tool")?.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
      expect(tools.find((t) => t.name === "mcphub_search_tools")?.annotations).toEqual({ readOnlyHint: true });
      expect(gw.stderr()).not.toContain("speaking JSON-RPC");
    } finally {
      await gw.close();
    }
  });
});
