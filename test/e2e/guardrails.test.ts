// Guardrails end to end (docs/guardrails.md): per-agent effect policy, confirmation through MCP
// elicitation on the calling session, pinned tool definitions with `mcphub approve`, the audit
// trail, and the daemon applying each agent's policy to its own sessions only. Downstream is
// test/fixtures/effects.mjs, which records every call it receives: a refused call must not be in
// its log.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { httpClient, startDaemon, type Daemon } from "../helpers/daemon.js";
import { BIN, doc, FIXTURES, runMcphub, startGateway, tempHome, text, until, waitReady, type GatewayClient, type TempHome } from "../helpers/gateway.js";
import { peerClient, type Answers, type PeerClient } from "../helpers/passthrough.js";
import { checkResolveContract } from "../helpers/resolve-contract.js";

const node = process.execPath;
const EFFECTS = join(FIXTURES, "effects.mjs");
const CANARY = "canary-7f3e9b21-do-not-log";

function calls(log: string): { name: string; arguments: Record<string, unknown> }[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { name: string; arguments: Record<string, unknown> });
}

function auditLines(home: TempHome): Record<string, unknown>[] {
  const dir = join(home.dir, "data", "telemetry");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith("audit-"))
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n"))
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function telemetryText(home: TempHome): string {
  const dir = join(home.dir, "data", "telemetry");
  return existsSync(dir) ? readdirSync(dir).map((f) => readFileSync(join(dir, f), "utf8")).join("") : "";
}

function peer(home: TempHome, cfg: string, agent: string, answers: Answers): Promise<PeerClient> {
  const transport = new StdioClientTransport({ command: node, args: [BIN, "--config", cfg, "mcp", "serve", "--agent", agent], env: home.env as Record<string, string>, stderr: "pipe" });
  return peerClient(transport, answers);
}

describe("per-agent effect policy", () => {
  let home: TempHome;
  let cfg: string;
  let log: string;
  let gw: GatewayClient;

  beforeAll(async () => {
    home = tempHome("mcphub-guard-policy-");
    log = join(home.dir, "calls.ndjson");
    cfg = home.writeConfig({
      expose: "all",
      servers: { fx: { command: node, args: [EFFECTS], env: { RECORDER_LOG: log } } },
      agents: {
        reader: { policy: { allow: "read" } },
        denier: { policy: { deny: ["fx__wipe", "*__twe*"] } },
      },
    });
    gw = await startGateway(home, cfg, { agent: "reader" });
    await waitReady(gw, ["fx"]);
  });
  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  it("a read-only tool runs; a destructive one is refused and never reaches the downstream", async () => {
    expect(text(await gw.call("fx__look", { key: "a" }))).toBe("look done");
    const mounted = await gw.call("fx__wipe", { why: CANARY });
    expect(mounted.isError).toBe(true);
    const d = doc(mounted);
    expect(d).toMatchObject({ status: "refused", reason: "effect_not_allowed", namespaced: "fx__wipe", effect: "destructive", effect_source: "annotations", rule: "agents.reader.policy.allow: read" });
    expect(String(d.hint)).toContain("agents.reader.policy.allow: destructive");
    const viaCallTool = await gw.call("mcphub_call_tool", { tool: "fx__wipe", arguments: { why: CANARY } });
    expect(viaCallTool.isError).toBeFalsy();
    expect(doc(viaCallTool)).toMatchObject({ status: "refused", reason: "effect_not_allowed" });
    const detached = doc(await gw.call("mcphub_call_tool", { tool: "fx__wipe", arguments: {}, detach: true }));
    expect(detached).toMatchObject({ status: "refused", reason: "effect_not_allowed" });
    expect(detached.callId).toBeUndefined();
    expect(calls(log).map((c) => c.name)).toEqual(["look"]);
  });

  it("a tool without annotations counts as write, never read", async () => {
    const d = doc(await gw.call("mcphub_call_tool", { tool: "fx__note", arguments: { text: "x" } }));
    expect(d).toMatchObject({ status: "refused", effect: "write", effect_source: "default" });
    const described = doc(await gw.call("mcphub_describe_tool", { tool: "fx__note" }));
    expect(described).toMatchObject({ effect: "write", effect_source: "default", policy: { decision: "refused", reason: "effect_not_allowed", rule: "agents.reader.policy.allow" } });
    expect(calls(log).some((c) => c.name === "note")).toBe(false);
  });

  it("discovery still shows refused tools, marked; resolve never recommends one as confident", async () => {
    const search = doc(await gw.call("mcphub_search_tools", { query: "" }));
    const byName = new Map((search.matches as Record<string, unknown>[]).map((m) => [m.namespaced, m]));
    expect(byName.get("fx__look")).toMatchObject({ effect: "read" });
    expect(byName.get("fx__look")?.refused).toBeUndefined();
    expect(byName.get("fx__wipe")).toMatchObject({ effect: "destructive", refused: "effect_not_allowed" });
    expect(byName.get("fx__tweak")).toMatchObject({ effect: "write", refused: "effect_not_allowed" });
    const resolved = doc(await gw.call("mcphub_resolve_tool", { query: "delete every value" }));
    expect(checkResolveContract(resolved)).toEqual([]);
    expect((resolved.recommendation as Record<string, unknown>).namespaced).toBe("fx__wipe");
    expect(resolved).toMatchObject({ status: "ambiguous", ambiguous: true });
    expect(resolved.reason_codes).toContain("tool_refused");
    const servers = doc(await gw.call("mcphub_list_servers"));
    expect(servers.policy).toEqual({ allow: "read", confirm: "none" });
    expect((servers.servers as Record<string, unknown>[])[0]).toMatchObject({ name: "fx", effects: { read: 1, write: 2, destructive: 1 }, policy: { refused: 3 } });
  });

  it("refusals are counted in stats and audited, without argument values", async () => {
    await gw.close();
    const stats = await runMcphub(home, ["stats", "--json", "--recent", "10"]);
    const report = JSON.parse(stats.stdout) as { totals: { calls: number; errors: number }; recent: { tool: string; error_class?: string }[] };
    expect(report.totals.errors).toBeGreaterThanOrEqual(4);
    expect(report.recent.filter((r) => r.error_class === "effect_not_allowed").map((r) => r.tool)).toContain("fx__wipe");
    const refused = auditLines(home).filter((a) => a.event === "refused");
    expect(refused.length).toBeGreaterThanOrEqual(4);
    expect(refused[0]).toMatchObject({ agent: "reader", server: "fx", reason: "effect_not_allowed", rule: "agents.reader.policy.allow" });
    expect(telemetryText(home)).not.toContain(CANARY);
    gw = await startGateway(home, cfg, { agent: "reader" });
  });

  it("deny patterns refuse what they match, whatever the effect, and name the pattern", async () => {
    const denier = await startGateway(home, cfg, { agent: "denier" });
    try {
      const d = doc(await denier.call("mcphub_call_tool", { tool: "fx__tweak", arguments: { key: "k" } }));
      expect(d).toMatchObject({ status: "refused", reason: "denied", rule: "agents.denier.policy.deny[1]: *__twe*" });
      expect(String(d.hint)).toContain('removing "*__twe*" from agents.denier.policy.deny');
      expect(text(await denier.call("fx__note", { text: "hi" }))).toBe("note done");
    } finally {
      await denier.close();
    }
  });
});

describe("effect overrides", () => {
  let home: TempHome;
  afterEach(() => home?.cleanup());

  it("a config override wins over the annotations, and a hot reload applies it", async () => {
    home = tempHome("mcphub-guard-effects-");
    const log = join(home.dir, "calls.ndjson");
    const config = (effects: Record<string, string>, serverEffects?: Record<string, string>) => ({
      expose: "lazy",
      servers: { fx: { command: node, args: [EFFECTS], env: { RECORDER_LOG: log }, ...(serverEffects ? { effects: serverEffects } : {}) } },
      agents: { reader: { policy: { allow: "read" } } },
      effects,
    });
    const cfg = home.writeConfig(config({ fx__note: "read" }, { "*": "destructive" }));
    const gw = await startGateway(home, cfg, { agent: "reader" });
    try {
      // The top-level exact override wins over the server's "*"; look is read by its
      // annotations, but the server's "*" says destructive.
      expect(text(await gw.call("mcphub_call_tool", { tool: "fx__note", arguments: { text: "x" } }))).toBe("note done");
      expect(doc(await gw.call("mcphub_describe_tool", { tool: "fx__note" }))).toMatchObject({ effect: "read", effect_source: "config", effect_rule: "effects.fx__note" });
      expect(doc(await gw.call("mcphub_call_tool", { tool: "fx__look", arguments: { key: "a" } }))).toMatchObject({ status: "refused", effect: "destructive", effect_source: "config" });
      home.writeConfig(config({}));
      await until(async () => text(await gw.call("mcphub_call_tool", { tool: "fx__look", arguments: { key: "a" } })) === "look done", "the reloaded config to apply");
      expect(doc(await gw.call("mcphub_call_tool", { tool: "fx__note", arguments: { text: "y" } }))).toMatchObject({ status: "refused", effect: "write" });
    } finally {
      await gw.close();
    }
  });

  it("policy errors in config get precise messages", async () => {
    home = tempHome("mcphub-guard-errors-");
    const cfg = home.writeConfig(
      [
        "servers:",
        "  fx: {command: node, effects: {wipe: destroy}}",
        "policy: {allow: raed, deny: [ghost__*]}",
        "agents:",
        "  a: {policy: {confirm: always, deny: [\"\"]}}",
        "  b: {mode: direct, policy: {allow: read}}",
        "",
      ].join("\n"),
    );
    const r = await runMcphub(home, ["--config", cfg, "list"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('servers.fx.effects.wipe: the effect must be "read", "write" or "destructive" (got "destroy")');
    expect(r.stderr).toContain('policy.allow: allow must be "read", "write" or "destructive" (got "raed"; did you mean "read"?)');
    expect(r.stderr).toContain('agents.a.policy.confirm: confirm must be "none", "write" or "destructive" (got "always")');
    const fixed = home.writeConfig(
      ["servers:", "  fx: {command: node}", "policy: {deny: [ghost__*]}", "agents:", '  a: {policy: {deny: [""]}}', "  b: {mode: direct, policy: {allow: read}}", ""].join("\n"),
    );
    const r2 = await runMcphub(home, ["--config", fixed, "list"]);
    expect(r2.stderr).toContain('policy.deny[0]: unknown server "ghost"; configured servers: fx');
    expect(r2.stderr).toContain("agents.a.policy.deny[0]: a deny pattern must not be empty");
    expect(r2.stderr).toContain("agents.b.policy: policy applies only to gateway mode");
  });
});
