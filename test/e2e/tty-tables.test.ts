// Issue 15, item 10: on a real terminal (a pseudo-terminal made by `script`), where colour is on,
// table columns still line up: widths are measured without the colour codes.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { stripVTControlCharacters } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import YAML from "yaml";
import { cliCommand, cliSandbox, type CliSandbox } from "../helpers/cli.js";

const hasScript = spawnSync("script", ["--version"]).status === 0;

let sb: CliSandbox;
beforeEach(() => {
  sb = cliSandbox("mcphub-tty-");
});
afterEach(() => sb.cleanup());

const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** Runs the CLI inside a pseudo-terminal; returns what the terminal showed. */
function onTerminal(args: string[]): string {
  const line = [process.execPath, ...cliCommand(), ...args].map(quote).join(" ");
  const env: NodeJS.ProcessEnv = { ...sb.env, TERM: "xterm-256color" };
  delete env.NO_COLOR;
  const r = spawnSync("script", ["-qec", line, "/dev/null"], { cwd: sb.dir, env, encoding: "utf8", timeout: 60_000 });
  return r.stdout.replace(/\r\n/g, "\n");
}

/** Start columns of each header word, and whether every row's cells start at the same columns. */
function aligned(out: string, header: string[], rowNames: string[]): { colour: boolean; misaligned: string[] } {
  const lines = out.split("\n");
  const plain = lines.map(stripVTControlCharacters);
  const h = plain.findIndex((l) => header.every((w) => l.includes(w)));
  const starts = header.map((w) => (plain[h] ?? "").indexOf(w));
  const end = plain.findIndex((l, i) => i > h && l.trim() === "");
  const misaligned: string[] = [];
  expect(h).toBeGreaterThanOrEqual(0);
  const rows = plain.slice(h + 1, end === -1 ? undefined : end).filter((r) => rowNames.some((n) => r.startsWith(`${n} `)));
  expect(rows).toHaveLength(rowNames.length);
  for (const row of rows) {
    for (const s of starts.slice(1)) if (s > 0 && row.length > s && (row[s - 1] !== " " || row[s] === " ")) misaligned.push(row);
  }
  return { colour: lines.some((l) => l.includes("\u001b[")), misaligned };
}

describe.skipIf(!hasScript)("tables on a terminal", () => {
  it("mcphub list lines up with coloured STATE cells", () => {
    writeFileSync(
      sb.config,
      YAML.stringify({
        servers: {
          alpha: { command: "node", args: ["a.js"], description: "first" },
          beta: { command: "node", args: ["b.js"], enabled: false, description: "second" },
          gamma: { url: "https://example.com/mcp", tags: ["x"], description: "third" },
        },
      }),
    );
    const out = onTerminal(["list"]);
    const r = aligned(out, ["SERVER", "STATE", "KIND", "TARGET"], ["alpha", "beta", "gamma"]);
    expect(r.colour).toBe(true);
    expect(r.misaligned).toEqual([]);
  });

  it("mcphub status lines up its agent table with coloured states", () => {
    writeFileSync(sb.config, YAML.stringify({ servers: {}, agents: { claude: { type: "claude" }, "local-agent": { type: "local-agent", disabled: true } } }));
    const out = onTerminal(["status"]);
    const r = aligned(out, ["AGENT", "TYPE", "MODE", "STATE", "FILE"], ["claude", "local-agent"]);
    expect(r.colour).toBe(true);
    expect(r.misaligned).toEqual([]);
  });
});
