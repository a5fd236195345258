// Every command's --help, at every level (the root, `mcp`, `vault set`, `token create`, ...), ends
// with examples. Runs the CLI's main() in-process (help is pure output; the other cli-*.test.ts
// files spawn the real process). The list of commands comes from the program itself, so a new
// command without examples fails here.
import { describe, expect, it } from "vitest";
import type { Command } from "commander";
import { buildProgram, main } from "../../src/cli/main.js";
import { commandsFor } from "../../src/cli/commands/index.js";
import type { CliIO } from "../../src/cli/context.js";

const quiet: CliIO = { out: () => undefined, err: () => undefined, color: false };

async function commandPaths(): Promise<string[][]> {
  const program = buildProgram(quiet, await commandsFor([]));
  const out: string[][] = [[]];
  const walk = (c: Command, path: string[]) => {
    for (const sub of c.commands) {
      out.push([...path, sub.name()]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  return out;
}

describe("every --help ends with examples", async () => {
  const paths = await commandPaths();
  it("covers the whole command tree", () => {
    const names = paths.map((p) => p.join(" "));
    for (const n of ["", "mcp", "mcp serve", "up", "vault", "vault set", "vault list", "vault rm", "vault status", "token", "token create", "token list", "token revoke", "stats", "add", "sync"]) {
      expect(names).toContain(n);
    }
  });

  it.each(paths.map((p) => [p.join(" ") || "(root)", p] as const))("mcphub %s --help", async (_label, path) => {
    let out = "";
    const io: CliIO = { out: (t) => void (out += `${t}\n`), err: (t) => void (out += `${t}\n`), color: false };
    const code = await main([...path, "--help"], io);
    expect(code).toBe(0);
    expect(out).toContain(`Usage: mcphub${path.length ? ` ${path.join(" ")}` : ""}`);
    const tail = out.trimEnd().split("\n");
    const at = tail.lastIndexOf("Examples:");
    expect(at).toBeGreaterThan(0);
    const examples = tail.slice(at + 1);
    expect(examples.length).toBeGreaterThan(0);
    for (const line of examples) expect(line).toMatch(/^ {2}\S/);
    expect(examples.some((l) => l.includes("mcphub"))).toBe(true);
  });
});
