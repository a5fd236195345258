// `init --from-agents`, `sync`, `offload` and `status` through the real CLI process, against
// fixture harness files in a temp HOME.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import YAML from "yaml";
import { TokenStore } from "../../src/serve/tokens.js";
import { cliSandbox, type CliSandbox } from "../helpers/cli.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "harness");

let sb: CliSandbox;
beforeEach(() => {
  sb = cliSandbox();
});
afterEach(() => sb.cleanup());

function place(fixture: string, rel: string, edit?: (text: string) => string): string {
  const path = join(sb.home, rel);
  mkdirSync(dirname(path), { recursive: true });
  if (edit) writeFileSync(path, edit(readFileSync(join(FIXTURES, fixture), "utf8")));
  else copyFileSync(join(FIXTURES, fixture), path);
  return path;
}

interface PlanJson {
  agent: string;
  planId: string;
  actions: { action: string; name: string; detail?: string }[];
  written: boolean;
  backup?: string | null;
}

describe("init --from-agents", () => {
  it("imports every server once: the same server declared twice is merged, a different one under a taken name is renamed", async () => {
    // local-agent is scanned first: its "notes" keeps the name; the other harnesses' "notes" run
    // something else (another command, other env names), so each is kept under a new name.
    place("local-agent.yaml", ".config/local-agent/config.yaml");
    place("cursor.json", ".cursor/mcp.json");
    place("gemini.json", ".gemini/settings.json");
    // A harness already wired to mcphub: that entry must not be imported as a server.
    place("claude.json", ".claude.json", (t) => t.replace('"mcpServers": {\n', '"mcpServers": {\n    "mcphub": { "command": "mcphub", "args": ["mcp", "serve"] },\n'));

    const r = await sb.run(["init", "--from-agents"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Imported 5 servers across 4 agents");
    expect(r.stdout).toContain("cursor's notes runs notes-mcp serve, not what local-agent's notes runs (/usr/local/bin/notes-mcp serve); imported as notes-cursor");
    // claude's and gemini's notes are the same server (notes-mcp serve, no env): imported once.
    expect(r.stdout).toContain("gemini's notes is the same server as notes-claude (from claude); imported once, as notes-claude");
    const cfg = YAML.parse(readFileSync(sb.config, "utf8")) as {
      servers: Record<string, unknown>;
      agents: Record<string, { type: string; path: string; mode: string }>;
    };
    expect(cfg.servers).toEqual({
      notes: { command: "/usr/local/bin/notes-mcp", args: ["serve"], env: { NOTES_DIR: "/tmp/notes" } },
      "notes-claude": { command: "notes-mcp", args: ["serve"] },
      "notes-cursor": { command: "notes-mcp", args: ["serve"], env: { NOTES_DIR: "/tmp/notes" } },
      docs: { url: "https://docs.example.com/mcp" },
      search: { url: "https://search.example.com/mcp" },
    });
    expect(cfg.agents).toEqual({
      "local-agent": { type: "local-agent", path: "~/.config/local-agent/config.yaml", mode: "gateway" },
      claude: { type: "claude", path: "~/.claude.json", mode: "gateway" },
      cursor: { type: "cursor", path: "~/.cursor/mcp.json", mode: "gateway" },
      gemini: { type: "gemini", path: "~/.gemini/settings.json", mode: "gateway" },
    });

    // Those agents now sync to the gateway: one mcphub entry each, hand-added entries kept.
    const plan = JSON.parse((await sb.run(["sync", "--json"])).stdout) as PlanJson[];
    expect(plan.map((p) => [p.agent, p.actions])).toEqual([
      ["claude", [{ action: "update", name: "mcphub", detail: expect.stringContaining("command") }]],
      ["cursor", [{ action: "add", name: "mcphub", detail: expect.stringContaining('"mcp","serve"') }]],
      ["gemini", [{ action: "add", name: "mcphub", detail: expect.stringContaining('"mcp","serve"') }]],
      ["local-agent", [{ action: "add", name: "mcphub", detail: expect.stringContaining('"mcp","serve"') }]],
    ]);
  });
});

describe("sync", () => {
  const setup = (agents: Record<string, unknown>) =>
    writeFileSync(sb.config, YAML.stringify({ servers: { memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] } }, agents }));

  it("dry-runs, writes with a backup, is a no-op the second time and rolls back byte for byte", async () => {
    const path = place("local-agent.yaml", ".config/local-agent/config.yaml");
    const original = readFileSync(path);
    setup({ "local-agent": { type: "local-agent", path: "~/.config/local-agent/config.yaml", pin: ["memory"], tool_schema_budget: "8KB" } });

    const dry = await sb.run(["sync"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("» local-agent  (local-agent, gateway) → ~/.config/local-agent/config.yaml");
    expect(dry.stdout).toContain("+ add       mcphub");
    expect(dry.stdout).toContain("Dry run. Re-run with --write");
    expect(readFileSync(path)).toEqual(original);

    const w = JSON.parse((await sb.run(["sync", "--write", "--json"])).stdout) as PlanJson[];
    expect(w[0]?.written).toBe(true);
    expect(readFileSync(w[0]?.backup as string)).toEqual(original);
    const after = readFileSync(path, "utf8");
    const servers = (YAML.parse(after) as { servers: { name: string; command?: string; args?: string[] }[] }).servers;
    expect(servers.map((s) => s.name)).toEqual(["notes", "mcphub"]);
    const gw = servers[1];
    expect(gw?.args?.slice(-5)).toEqual([sb.config, "mcp", "serve", "--agent", "local-agent"]);
    expect(after).toContain("# my notes server, added by hand");
    expect(after).toContain("num_ctx: 16384 # keep the context small");

    const again = JSON.parse((await sb.run(["sync", "--write", "--json"])).stdout) as PlanJson[];
    expect(again[0]?.actions).toEqual([{ action: "unchanged", name: "mcphub" }]);
    expect(again[0]?.written).toBe(false);
    expect(readFileSync(path, "utf8")).toBe(after);

    const rb = await sb.run(["sync", "--rollback", w[0]?.planId as string]);
    expect(rb.code).toBe(0);
    expect(readFileSync(path)).toEqual(original);
  });

  it("creates a missing harness file, and rollback deletes it again", async () => {
    setup({ cursor: { type: "cursor" } });
    const path = join(sb.home, ".cursor", "mcp.json");
    const w = JSON.parse((await sb.run(["sync", "cursor", "--write", "--json"])).stdout) as PlanJson[];
    expect(w[0]?.backup).toBeNull();
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      mcpServers: { mcphub: { command: process.execPath, args: [expect.stringMatching(/bin\/mcphub\.js$/), "--config", sb.config, "mcp", "serve"] } },
    });
    await sb.run(["sync", "--rollback", w[0]?.planId as string]);
    expect(existsSync(path)).toBe(false);
  });

  it("offload removes entries the gateway serves identically, never by name alone; status reports sync state", async () => {
    const path = place("cursor.json", ".cursor/mcp.json");
    // notes is the same server as cursor's (command, args, env names); docs only shares a name.
    writeFileSync(
      sb.config,
      YAML.stringify({
        servers: { notes: { command: "notes-mcp", args: ["serve"], env: { NOTES_DIR: "/srv/other" } }, docs: { url: "https://other.example.com/mcp" } },
        agents: { cursor: { type: "cursor" } },
      }),
    );
    const early = await sb.run(["offload", "--json"]);
    expect((JSON.parse(early.stdout) as { note?: string }[])[0]?.note).toMatch(/no "mcphub" entry yet/);

    const st1 = JSON.parse((await sb.run(["status", "--json"])).stdout) as {
      agents: { agent: string; state: string; duplicates?: { name: string; server: string }[] }[];
      unused_enabled: string[];
    };
    expect(st1.agents).toEqual([expect.objectContaining({ agent: "cursor", state: "1 pending, 1 duplicate", duplicates: [{ name: "notes", server: "notes" }] })]);
    expect(st1.unused_enabled).toEqual(["docs", "notes"]);

    await sb.run(["sync", "--write"]);
    const st2 = JSON.parse((await sb.run(["status", "--json"])).stdout) as { agents: { state: string }[] };
    expect(st2.agents[0]?.state).toBe("in sync, 1 duplicate");
    const doctor = await sb.run(["doctor", "--json"]);
    const agentCheck = (JSON.parse(doctor.stdout) as { name: string; ok: boolean; detail: string }[]).find((c) => c.name === "agent:cursor");
    expect(agentCheck).toMatchObject({ ok: false, detail: expect.stringContaining("notes is also served by the gateway, so the model sees its tools twice") });

    const off = await sb.run(["offload", "--write"]);
    expect(off.stdout).toContain("- remove    notes");
    expect(off.stdout).toContain("kept      docs: not the gateway's docs (this one runs https://docs.example.com/mcp; the gateway's runs https://other.example.com/mcp)");
    const left = Object.keys((JSON.parse(readFileSync(path, "utf8")) as { mcpServers: object }).mcpServers);
    expect(left).toEqual(["docs", "mcphub"]);
    const planId = /plan: (plan_\S+)/.exec(off.stdout)?.[1] as string;
    await sb.run(["sync", "--rollback", planId]);
    expect(Object.keys((JSON.parse(readFileSync(path, "utf8")) as { mcpServers: object }).mcpServers)).toEqual(["notes", "docs", "mcphub"]);
  }, 180_000);

  it("sync --write --yes removes the duplicates in the same write: one backup, one byte-exact rollback", async () => {
    const path = place("cursor.json", ".cursor/mcp.json");
    const original = readFileSync(path);
    writeFileSync(sb.config, YAML.stringify({ servers: { mynotes: { command: "notes-mcp", args: ["serve"], env: { NOTES_DIR: "/x" } } }, agents: { cursor: { type: "cursor" } } }));
    const noYes = await sb.run(["sync", "--yes"]);
    expect(noYes.code).not.toBe(0);
    expect(noYes.stderr).toContain("--yes applies only with --write");
    const dry = await sb.run(["sync"]);
    expect(dry.stdout).toContain("! duplicate notes: the gateway serves it too (as mynotes), so the model would see its tools twice");
    expect(dry.stdout).toContain("Remove it with `mcphub sync --write --yes`");
    const w = JSON.parse((await sb.run(["sync", "--write", "--yes", "--json"])).stdout) as PlanJson[];
    expect(w[0]?.actions).toEqual([
      { action: "add", name: "mcphub", detail: expect.any(String) },
      { action: "remove", name: "notes", detail: "served through the mcphub gateway as mynotes" },
    ]);
    expect(Object.keys((JSON.parse(readFileSync(path, "utf8")) as { mcpServers: object }).mcpServers)).toEqual(["docs", "mcphub"]);
    expect(readFileSync(w[0]?.backup as string)).toEqual(original);
    const rb = await sb.run(["sync", "--rollback", w[0]?.planId as string]);
    expect(rb.code, rb.stderr).toBe(0);
    expect(readFileSync(path)).toEqual(original);
  }, 180_000);

  it("refuses to write anything when any agent's file is unreadable", async () => {
    const bad = place("claude.json", ".claude.json", () => "{ not json");
    const good = place("cursor.json", ".cursor/mcp.json");
    const before = readFileSync(good);
    setup({ claude: { type: "claude" }, cursor: { type: "cursor" } });
    const r = await sb.run(["sync", "--write"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("agent claude:");
    expect(r.stderr).toContain("invalid JSON");
    expect(readFileSync(good)).toEqual(before);
    expect(readFileSync(bad, "utf8")).toBe("{ not json");
  });

  it("with listen set, writes the daemon URL and a real per-agent token the token store verifies", async () => {
    writeFileSync(sb.config, YAML.stringify({ listen: "127.0.0.1:9820", agents: { claude: { type: "claude" }, cursor: { type: "cursor" } } }));
    const dry = await sb.run(["sync", "--json"]);
    expect(dry.stdout).not.toMatch(/Bearer [A-Za-z0-9_-]{20,}/);
    const w = JSON.parse((await sb.run(["sync", "--write", "--json"])).stdout) as PlanJson[];
    expect(w.map((p) => p.written)).toEqual([true, true]);
    const store = TokenStore.open(sb.dataDir);
    for (const [agent, rel] of [["claude", ".claude.json"], ["cursor", ".cursor/mcp.json"]] as const) {
      const entry = (JSON.parse(readFileSync(join(sb.home, rel), "utf8")) as { mcpServers: Record<string, { type: string; url: string; headers: { Authorization: string } }> }).mcpServers.mcphub;
      expect(entry?.type).toBe("http");
      expect(entry?.url).toBe("http://127.0.0.1:9820/mcp");
      const bearer = entry?.headers.Authorization.replace(/^Bearer /, "") ?? "";
      expect((await store.verify(bearer))?.agent).toBe(agent);
    }
    const again = JSON.parse((await sb.run(["sync", "--write", "--json"])).stdout) as PlanJson[];
    expect(again.map((p) => p.written)).toEqual([false, false]);
  });
});
