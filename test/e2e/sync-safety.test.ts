// Issue 15, items 7 and 8, through the real CLI: a rollback never loses edits made after its plan
// (refused with what changed unless --force, the current file saved first, never twice), sync
// changes only the bytes of its own entry in every format, and the dry run shows what it will run.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import YAML from "yaml";
import { cliSandbox, type CliSandbox } from "../helpers/cli.js";

let sb: CliSandbox;
beforeEach(() => {
  sb = cliSandbox("mcphub-sync-safety-");
});
afterEach(() => sb.cleanup());

function setup(agents: Record<string, unknown>, files: Record<string, string>): void {
  writeFileSync(sb.config, YAML.stringify({ servers: {}, agents }));
  for (const [rel, text] of Object.entries(files)) {
    const path = join(sb.home, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
}

async function writeSync(agent: string): Promise<string> {
  const r = await sb.run(["sync", agent, "--write", "--json"]);
  expect(r.stderr).toBe("");
  const plans = JSON.parse(r.stdout) as { planId: string; written: boolean }[];
  expect(plans[0]?.written).toBe(true);
  return plans[0]?.planId as string;
}

const CLAUDE = `{\n  "theme": "dark",\n  "mcpServers": {\n    "notes": {"command": "notes-mcp", "args": ["serve"]}\n  }\n}\n`;

describe("sync --rollback", () => {
  it("refuses when the file changed after the plan, saying what changed; --force saves the current file first; never twice", async () => {
    setup({ claude: { type: "claude" } }, { ".claude.json": CLAUDE });
    const file = join(sb.home, ".claude.json");
    const plan = await writeSync("claude");
    // The user adds a server by hand after the sync.
    const edited = readFileSync(file, "utf8").replace('"mcpServers": {\n', '"mcpServers": {\n    "github": {"command": "gh-mcp"},\n');
    writeFileSync(file, edited);

    const refused = await sb.run(["sync", "--rollback", plan]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    expect(refused.stderr).toMatch(new RegExp(`changed after plan ${plan} was written \\(mcpServers entries added: github\\); rolling back would lose that\\. Pass --force`));
    expect(readFileSync(file, "utf8")).toBe(edited);

    const forced = await sb.run(["sync", "--rollback", plan, "--force"]);
    expect(forced.stderr).toBe("");
    expect(forced.code).toBe(0);
    const saved = /The file as it was is saved as (\S+)\.$/m.exec(forced.stdout)?.[1]?.replace(/^~/, sb.home);
    expect(saved && readFileSync(saved, "utf8")).toBe(edited);
    expect(readFileSync(file, "utf8")).toBe(CLAUDE);

    const again = await sb.run(["sync", "--rollback", plan, "--force"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`plan ${plan} was already rolled back`));
    expect(readFileSync(file, "utf8")).toBe(CLAUDE);
  });

  it("an untouched file rolls back without --force, and the current file is saved first", async () => {
    setup({ claude: { type: "claude" } }, { ".claude.json": CLAUDE });
    const file = join(sb.home, ".claude.json");
    const plan = await writeSync("claude");
    const synced = readFileSync(file, "utf8");
    const r = await sb.run(["sync", "--rollback", plan]);
    expect(r.code).toBe(0);
    const saved = /saved as (\S+)\.$/m.exec(r.stdout)?.[1]?.replace(/^~/, sb.home);
    expect(saved && readFileSync(saved, "utf8")).toBe(synced);
    expect(readFileSync(file, "utf8")).toBe(CLAUDE);
  });

  it("names edits outside the MCP section, and a deleted file", async () => {
    setup({ claude: { type: "claude" }, cursor: { type: "cursor" } }, { ".claude.json": CLAUDE });
    const file = join(sb.home, ".claude.json");
    const plan = await writeSync("claude");
    writeFileSync(file, readFileSync(file, "utf8").replace('"theme": "dark"', '"theme": "light"'));
    expect((await sb.run(["sync", "--rollback", plan])).stderr).toMatch(/settings outside mcpServers were edited/);

    const created = await writeSync("cursor"); // ~/.cursor/mcp.json did not exist
    const cursorFile = join(sb.home, ".cursor", "mcp.json");
    writeFileSync(cursorFile, readFileSync(cursorFile, "utf8").replace("{", '{\n  "x": 1,'));
    expect((await sb.run(["sync", "--rollback", created])).stderr).toMatch(/settings outside mcpServers were edited/);
    const forced = await sb.run(["sync", "--rollback", created, "--force"]);
    expect(forced.stdout).toMatch(/Removed .*mcp\.json, which plan .* had created .* The file as it was is saved as/);
    expect(existsSync(cursorFile)).toBe(false);
  });
});

/** Asserts `after` is `before` with one contiguous region replaced, and returns that region of `before`. */
function changedRegion(before: string, after: string): { removed: string; inserted: string } {
  let p = 0;
  while (p < before.length && p < after.length && before[p] === after[p]) p++;
  let s = 0;
  while (s < before.length - p && s < after.length - p && before[before.length - 1 - s] === after[after.length - 1 - s]) s++;
  return { removed: before.slice(p, before.length - s), inserted: after.slice(p, after.length - s) };
}

const FORMATS: { agent: string; type: string; rel: string; text: string; others: string[] }[] = [
  {
    agent: "claude",
    type: "claude",
    rel: ".claude.json",
    text: `{\n  "theme": "dark",\n  "mcpServers": {\n    "notes": {"command": "notes-mcp", "args": ["serve"]},\n    "z": { "command": "y" }\n  },\n  "tail": [1, 2]\n}\n`,
    others: ['"notes": {"command": "notes-mcp", "args": ["serve"]}', '"z": { "command": "y" }', '"tail": [1, 2]'],
  },
  {
    agent: "cursor",
    type: "cursor",
    rel: ".cursor/mcp.json",
    text: `{"mcpServers": {"notes": {"command": "notes-mcp", "args": ["serve"]}}, "theme": "dark"}\n`,
    others: ['"notes": {"command": "notes-mcp", "args": ["serve"]}', '"theme": "dark"'],
  },
  {
    agent: "vscode",
    type: "vscode",
    rel: ".config/Code/User/mcp.json",
    text: `{\n\t// my servers\n\t"servers": {\n\t\t"notes": {"type": "stdio", "command": "notes-mcp"}, // inline\n\t},\n}\n`,
    others: ['"notes": {"type": "stdio", "command": "notes-mcp"}, // inline', "// my servers"],
  },
  {
    agent: "codex",
    type: "codex",
    rel: ".codex/config.toml",
    text: `# codex\nmodel = "o3"  # favourite\n\n[mcp_servers.notes]\ncommand = "notes-mcp"\nargs = ["serve"]   # keep\n`,
    others: ['[mcp_servers.notes]\ncommand = "notes-mcp"\nargs = ["serve"]   # keep', 'model = "o3"  # favourite'],
  },
  {
    agent: "local-agent",
    type: "local-agent",
    rel: ".config/local-agent/config.yaml",
    text: `model: m  # mine\nservers:\n  - {name: notes, command: notes-mcp, args: [serve]}\n`,
    others: ["  - {name: notes, command: notes-mcp, args: [serve]}", "model: m  # mine"],
  },
];

describe("sync touches only its own entry", () => {
  for (const f of FORMATS) {
    it(`${f.type}: other entries keep their exact bytes; the dry run shows command and args`, async () => {
      setup({ [f.agent]: { type: f.type } }, { [f.rel]: f.text });
      const file = join(sb.home, f.rel);
      const dry = await sb.run(["sync", f.agent]);
      expect(dry.code).toBe(0);
      expect(dry.stdout).toMatch(/\+ add\s+mcphub\n\s+command "[^"]+"; args \[.*"mcp","serve"\]/);
      await writeSync(f.agent);
      const after = readFileSync(file, "utf8");
      for (const o of f.others) expect(after).toContain(o);
      const { removed, inserted } = changedRegion(f.text, after);
      // One contiguous change that only adds text (a separator and the new entry).
      expect(removed.replace(/[\s,]/g, "")).toBe("");
      expect(inserted).toContain("mcphub");
    });
  }

  it("an update rewrites only the mcphub entry, even on a one-line section", async () => {
    const text = `{"mcpServers": {"a": {"command": "x"}, "mcphub": {"command": "old", "timeout": 5}, "b": {"command": "y"}}}\n`;
    setup({ claude: { type: "claude" } }, { ".claude.json": text });
    await writeSync("claude");
    const after = readFileSync(join(sb.home, ".claude.json"), "utf8");
    const { removed, inserted } = changedRegion(text, after);
    expect(text.indexOf(removed)).toBeGreaterThan(text.indexOf('"mcphub": '));
    expect(text.indexOf(removed) + removed.length).toBeLessThan(text.indexOf('"b": '));
    expect(inserted).toContain('"timeout": 5');
    expect(after).toContain('{"a": {"command": "x"}, "mcphub": {');
    expect(after).toContain(', "b": {"command": "y"}}}');
  });
});
