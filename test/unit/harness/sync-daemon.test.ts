// Daemon mode (`listen` set): sync writes the URL entry with the agent's own bearer token,
// creates the token only on --write, remembers it in the 0600 state file so the next sync is a
// no-op, and never shows the token in a plan.
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { adapterFor, openDocument, planSync, publicPlan, statePath, writePlan, type SyncContext } from "../../../src/harness/index.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcphub-daemon-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it.each(["claude", "gemini", "codex", "local-agent", "opencode"] as const)("writes the daemon URL with a bearer token for %s", async (type) => {
  const adapter = adapterFor(type);
  if (!adapter) throw new Error("no adapter");
  const path = join(dir, `harness.${adapter.format}`);
  const config = configSchema.parse({ listen: "0.0.0.0:9820", agents: { work: { type, path } } });
  const created: string[] = [];
  const ctx: SyncContext = {
    configPath: join(dir, "mcphub.yaml"),
    dataDir: join(dir, "data"),
    home: dir,
    self: { command: "mcphub", args: [] },
    createToken: async (agent) => {
      created.push(agent);
      return `tok-${agent}-secret`;
    },
  };
  const plan = await planSync(config, "work", ctx);
  expect(plan.actions).toEqual([{ action: "add", name: "mcphub", detail: expect.stringMatching(/^url "http:\/\/127\.0\.0\.1:\d+\/mcp"; headers Authorization \(values redacted\)$/) }]);
  expect(created).toEqual([]); // a dry run creates nothing
  expect(JSON.stringify(publicPlan(plan))).not.toContain("tok-");

  await writePlan(config, plan, ctx);
  expect(created).toEqual(["work"]);
  const entry = adapter.codec.decode("mcphub", openDocument(adapter, path, await readFile(path, "utf8")).entries().get("mcphub") ?? null);
  expect(entry).toEqual({
    name: "mcphub",
    url: "http://127.0.0.1:9820/mcp",
    transport: "http",
    headers: { Authorization: "Bearer tok-work-secret" },
  });
  expect((await stat(statePath(ctx.dataDir))).mode & 0o777).toBe(0o600);

  const again = await planSync(config, "work", ctx);
  expect(again.actions).toEqual([{ action: "unchanged", name: "mcphub" }]);
  expect((await writePlan(config, again, ctx)).written).toBe(false);
  expect(created).toEqual(["work"]);

  // A revoked token is not re-written: the next --write creates a fresh one.
  const revoked: SyncContext = { ...ctx, tokenValid: async () => false, createToken: async (agent) => `fresh-${agent}` };
  const renew = await planSync(config, "work", revoked);
  expect(renew.actions).toEqual([{ action: "update", name: "mcphub", detail: "headers.Authorization changed (value redacted)" }]);
  await writePlan(config, renew, revoked);
  const renewed = adapter.codec.decode("mcphub", openDocument(adapter, path, await readFile(path, "utf8")).entries().get("mcphub") ?? null);
  expect(renewed?.headers).toEqual({ Authorization: "Bearer fresh-work" });

  // Switching back to stdio gateway: an update whose detail never shows the token.
  const stdio = configSchema.parse({ agents: { work: { type, path } } });
  const back = await planSync(stdio, "work", ctx);
  expect(back.actions[0]?.action).toBe("update");
  expect(back.actions[0]?.detail).toContain("headers.Authorization removed");
  expect(back.actions[0]?.detail).not.toContain("tok-");
  expect(back.actions[0]?.detail).not.toContain("fresh-");
});
