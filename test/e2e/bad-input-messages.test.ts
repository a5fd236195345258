// Bad input that used to get a message saying nothing about what was wrong, each now one line that
// says what and where: a YAML alias bomb (names the file), a stats window reaching before 1970,
// tool arguments nested thousands of levels deep (was "Maximum call stack size exceeded"), and a
// timeout_ms of 0 or -1 (was silently ignored). Real CLI and gateway processes.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, runMcphub, tempHome, type TempHome } from "../helpers/gateway.js";
import { RawGateway } from "../helpers/raw-stdio.js";

const node = process.execPath;

function aliasBomb(): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  let prev = "a";
  for (const n of "bcdefghi") {
    lines.push(`${n}: &${n} [${Array(9).fill(`*${prev}`).join(",")}]`);
    prev = n;
  }
  return `${lines.join("\n")}\n`;
}

describe("messages for bad input", () => {
  let home: TempHome;
  let cfg: string;
  let gw: RawGateway;

  beforeAll(async () => {
    home = tempHome();
    cfg = home.writeConfig({ expose: "all", servers: { echo: { command: node, args: [join(FIXTURES, "echo.mjs")] } } });
    gw = new RawGateway(home, cfg);
    await gw.initialize();
  });
  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  it("a YAML alias bomb names the file", async () => {
    const bomb = join(home.dir, "bomb.yaml");
    writeFileSync(bomb, aliasBomb());
    const r = await runMcphub(home, ["--config", bomb, "list"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(/^mcphub: \S*bomb\.yaml: YAML aliases \(\*name\) expand to too many nodes \(over 100, .*\); write those values out instead of aliasing them$/);
  });

  it("stats since a window before 1970 says so, in the tool and the CLI", async () => {
    const r = await gw.request(1, "tools/call", { name: "mcphub_stats", arguments: { since: "9999999999d" } });
    const body = JSON.parse(((r.result?.content as { text: string }[])[0] as { text: string }).text) as { error: string };
    expect(body.error).toMatch(/^since "9999999999d" reaches back before 1970 \(the longest window today is \d+d\); give a shorter one such as 30d, or leave since out for every call retained$/);
    const cli = await runMcphub(home, ["--config", cfg, "stats", "--since", "9999999999d"]);
    expect(cli.code).toBe(1);
    expect(cli.stderr.trim()).toMatch(/^mcphub: --since "9999999999d" reaches back before 1970 \(the longest window today is \d+d\); give a shorter one such as 30d$/);
  });

  it("arguments nested 100,000 levels deep get a precise refusal, on a mounted call, call_tool and a management tool", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const cases: [number, string, string, RegExp][] = [
      [2, "echo__echo", `{"message":"hi","x":${deep}}`, /^arguments of echo__echo nest more than 512 levels deep \(at arguments\.x\[0\]\[0\]\[0\]…\); nothing was sent: flatten them$/],
      [3, "mcphub_call_tool", `{"tool":"echo__echo","arguments":{"x":${deep}}}`, /^arguments of mcphub_call_tool nest more than 512 levels deep \(at arguments\.arguments\.x\[0\]\[0\]…\)/],
      [4, "mcphub_search_tools", `{"query":${deep}}`, /^arguments of mcphub_search_tools nest more than 512 levels deep \(at arguments\.query\[0\]/],
    ];
    for (const [id, name, args, expected] of cases) {
      await gw.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}\n`);
      let reply;
      do reply = await gw.next();
      while (reply.id !== id);
      const text = ((reply.result?.content as { text: string }[])[0] as { text: string }).text;
      expect(reply.result?.isError).toBe(true);
      expect(text).toMatch(expected);
      expect(text).not.toMatch(/call stack/);
    }
    // 500 levels still go through.
    const fine = `${"[".repeat(500)}${"]".repeat(500)}`;
    await gw.write(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo__echo","arguments":{"message":"ok","x":${fine}}}}\n`);
    let reply;
    do reply = await gw.next();
    while (reply.id !== 5);
    expect(JSON.stringify(reply.result)).toContain("Echo: ok");
  });

  it("timeout_ms of 0, -1 or 1.5 is refused with the allowed range; 1 and above work", async () => {
    for (const [i, bad] of [0, -1, 1.5].entries()) {
      const r = await gw.request(10 + i, "tools/call", { name: "mcphub_call_tool", arguments: { tool: "echo__echo", arguments: { message: "x" }, timeout_ms: bad } });
      expect(r.result?.isError).toBe(true);
      expect(((r.result?.content as { text: string }[])[0] as { text: string }).text).toBe(
        `timeout_ms ${bad} is out of range: give a whole number of milliseconds from 1 to 1800000 (call_timeout, 30m; a larger one is capped to it), or leave it out for the default limits. Send {tool: "server__tool", arguments: {...}} (optionally detach: true, timeout_ms).`,
      );
    }
    const ok = await gw.request(20, "tools/call", { name: "mcphub_call_tool", arguments: { tool: "echo__echo", arguments: { message: "x" }, timeout_ms: 30_000 } });
    expect(JSON.stringify(ok.result)).toContain("Echo: x");
  });
});
