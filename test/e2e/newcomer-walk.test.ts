// Issue 24, acceptance: the README path walked as a newcomer, through the real CLI, in a fresh
// HOME. `mcphub init`; `mcphub add` exactly as `mcphub --help` prints it; then the harnesses this
// machine already has (Claude Code and Cursor fixture files: a name clash on `memory`, the same
// GitHub server under two names with a literal token) are imported with `init --from-agents`,
// and `mcphub sync --write --yes` switches them to the gateway. Checked afterwards:
//  - no harness file offers a tool twice (no entry left beside `mcphub` that the gateway serves);
//  - no plaintext secret in mcphub.yaml (the tokens are in the vault, the config refers to them);
//  - both clashing servers are configured, each with its own command;
//  - `mcphub sync --rollback` restores every harness file byte for byte.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { parseConfigText } from "../../src/config/index.js";
import { adapterFor, entryIdentity, openDocument, serverIdentity, type NeutralEntry } from "../../src/harness/index.js";
import { cliSandbox, type CliSandbox } from "../helpers/cli.js";

const FIX = join(import.meta.dirname, "..", "fixtures", "newcomer");
const GITHUB_TOKEN = "ghp_N3wc0m3rT0k3nF0rTh3Wa1kTest0123456789";
const BRAVE_KEY = "BSAq8XnewcomerKey5521";

let sb: CliSandbox;
let claudePath: string;
let cursorPath: string;
const originals = new Map<string, Buffer>();
const plans: { agent: string; planId: string }[] = [];

beforeAll(() => {
  sb = cliSandbox("mcphub-newcomer-");
  mkdirSync(join(sb.home, ".cursor"), { recursive: true });
  claudePath = join(sb.home, ".claude.json");
  cursorPath = join(sb.home, ".cursor", "mcp.json");
  copyFileSync(join(FIX, "claude.json"), claudePath);
  copyFileSync(join(FIX, "cursor.json"), cursorPath);
  for (const p of [claudePath, cursorPath]) originals.set(p, readFileSync(p));
});
afterAll(() => sb?.cleanup());

/** A harness file's entries as neutral entries (the sync adapters' own reading). */
function entriesOf(type: "claude" | "cursor", path: string): NeutralEntry[] {
  const adapter = adapterFor(type);
  if (!adapter) throw new Error(type);
  const doc = openDocument(adapter, path, readFileSync(path, "utf8"));
  return [...doc.entries()].map(([name, raw]) => adapter.codec.decode(name, raw)).filter((e): e is NeutralEntry => e !== undefined);
}

describe("a newcomer's first day, as the README and --help say", () => {
  it("init, then add as printed in --help", async () => {
    const init = await sb.run(["init"]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain("servers  none yet, so nothing is enabled");
    expect(init.stdout).toContain("agents   claude (~/.claude.json), cursor (~/.cursor/mcp.json): gateway mode");
    const help = await sb.run(["--help"]);
    const add = /^\s+mcphub (add .*)$/m.exec(help.stdout)?.[1]?.split(" ") ?? [];
    expect(add[0]).toBe("add");
    const r = await sb.run(add);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Added stdio server memory.");
  });

  it("init --from-agents imports both harnesses: the clash kept, the tokens moved to the vault", async () => {
    const r = await sb.run(["init", "--from-agents", "--force"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Imported 4 servers across 2 agents");
    expect(r.stdout).toContain("cursor's memory runs node /opt/other/memory.js, not what claude's memory runs (npx -y @modelcontextprotocol/server-memory); imported as memory-cursor");
    expect(r.stdout).toContain("cursor's gh is the same server as github (from claude); imported once, as github");
    expect(r.stdout).toContain("moved into the vault as github/Authorization");
    expect(r.stdout).toContain("moved into the vault as search/BRAVE_API_KEY");
  });

  it("sync --write --yes switches both harnesses to the gateway, removing the entries it now serves", async () => {
    const r = await sb.run(["sync", "--write", "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    for (const p of JSON.parse(r.stdout) as { agent: string; planId: string; written: boolean }[]) {
      expect(p.written).toBe(true);
      plans.push({ agent: p.agent, planId: p.planId });
    }
    expect(plans.map((p) => p.agent)).toEqual(["claude", "cursor"]);
  });

  it("then: no duplicate tools in any harness file", async () => {
    const config = parseConfigText(readFileSync(sb.config, "utf8"), "yaml");
    const served = new Set(Object.values(config.servers).filter((s) => s.enabled).map(serverIdentity));
    for (const [type, path] of [["claude", claudePath], ["cursor", cursorPath]] as const) {
      const entries = entriesOf(type, path);
      expect(entries.map((e) => e.name)).toContain("mcphub");
      const direct = entries.filter((e) => e.name !== "mcphub");
      // Nothing left beside the gateway runs what the gateway runs, and nothing twice on its own.
      expect(direct.filter((e) => served.has(entryIdentity(e))).map((e) => e.name), path).toEqual([]);
      expect(new Set(direct.map(entryIdentity)).size).toBe(direct.length);
    }
    // Here every server is imported, so each harness holds only the gateway entry, its other settings kept.
    expect(entriesOf("claude", claudePath).map((e) => e.name)).toEqual(["mcphub"]);
    expect(entriesOf("cursor", cursorPath).map((e) => e.name)).toEqual(["mcphub"]);
    expect(readFileSync(claudePath, "utf8")).toContain('"numStartups": 3');
    expect(readFileSync(cursorPath, "utf8")).toContain("// Cursor's own memory server");
    const status = JSON.parse((await sb.run(["status", "--json"])).stdout) as { agents: { agent: string; state: string; duplicates?: unknown[] }[] };
    expect(status.agents.map((a) => [a.agent, a.state, a.duplicates])).toEqual([
      ["claude", "in sync", undefined],
      ["cursor", "in sync", undefined],
    ]);
  });

  it("then: no plaintext secret in mcphub.yaml; the vault holds them", async () => {
    const text = readFileSync(sb.config, "utf8");
    expect(text).not.toContain(GITHUB_TOKEN);
    expect(text).not.toContain(BRAVE_KEY);
    const cfg = YAML.parse(text) as { servers: Record<string, Record<string, unknown>> };
    expect(cfg.servers.github?.headers).toEqual({ Authorization: "vault://github/Authorization" });
    expect(cfg.servers.search).toMatchObject({ vault: "search", vault_only: ["BRAVE_API_KEY"] });
    const vault = await sb.run(["vault", "list"]);
    expect(vault.stdout.trim().split("\n").sort()).toEqual(["github/Authorization", "search/BRAVE_API_KEY"]);
  });

  it("then: both clashing servers are present, each running its own program", () => {
    const cfg = YAML.parse(readFileSync(sb.config, "utf8")) as { servers: Record<string, Record<string, unknown>> };
    expect(cfg.servers.memory).toEqual({ command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] });
    expect(cfg.servers["memory-cursor"]).toEqual({ command: "node", args: ["/opt/other/memory.js"] });
    expect(Object.keys(cfg.servers).sort()).toEqual(["github", "memory", "memory-cursor", "search"]);
  });

  it("then: rollback restores every harness file byte for byte", async () => {
    for (const p of plans) {
      const r = await sb.run(["sync", "--rollback", p.planId]);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(readFileSync(claudePath)).toEqual(originals.get(claudePath));
    expect(readFileSync(cursorPath)).toEqual(originals.get(cursorPath));
  });
});
