import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TokenStore, type TokenInfo } from "../../../src/serve/tokens.js";
import { cliSandbox, type CliSandbox } from "../../helpers/cli.js";

let sb: CliSandbox;
beforeAll(() => {
  sb = cliSandbox("mcphub-token-cli-");
  writeFileSync(sb.config, "version: 1\nagents:\n  claude: {}\n  codex: {}\n");
});
afterAll(() => sb.cleanup());

describe("mcphub token", () => {
  it("create prints the token once on stdout (note on stderr); list never shows it; revoke stops it", async () => {
    const created = await sb.run(["token", "create", "claude"]);
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^mcphub_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toMatch(/cannot be displayed again/);
    expect(await TokenStore.open(sb.dataDir).verify(token)).toMatchObject({ agent: "claude" });
    expect(readFileSync(join(sb.dataDir, "tokens.json"), "utf8")).not.toContain(token);

    const listed = await sb.run(["token", "list", "--json"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(token);
    const infos = JSON.parse(listed.stdout) as TokenInfo[];
    expect(infos).toHaveLength(1);
    expect(infos[0]).toMatchObject({ agent: "claude", last4: token.slice(-4) });

    const text = await sb.run(["token", "list"]);
    expect(text.stdout).toMatch(/ID\s+AGENT\s+CREATED \(UTC\)\s+ENDS\s+STATE/);
    expect(text.stdout).toMatch(new RegExp(`${infos[0]?.id}\\s+claude\\s+.*…${token.slice(-4)}\\s+live`));

    const revoked = await sb.run(["token", "revoke", "claude"]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(/^Revoked 1 token \(claude\)/);
    expect(await TokenStore.open(sb.dataDir).verify(token)).toBeUndefined();
  });

  it("create --json returns the token with its metadata", async () => {
    const res = await sb.run(["token", "create", "codex", "--json"]);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as TokenInfo & { token: string };
    expect(out).toMatchObject({ agent: "codex", last4: out.token.slice(-4) });
    expect(out.id).toMatch(/^tok_/);
  });

  it("refuses an agent that is not in the config, naming the configured ones", async () => {
    const res = await sb.run(["token", "create", "claud"]);
    expect(res.code).not.toBe(0);
    expect(res.stdout).toBe("");
    expect(res.stderr.trim()).toBe('mcphub: unknown agent "claud"; configured agents: claude, codex');
  });

  it("revoking something that matches nothing is an error", async () => {
    const res = await sb.run(["token", "revoke", "tok_000000000000"]);
    expect(res.code).not.toBe(0);
    expect(res.stderr.trim()).toMatch(/^mcphub: no live token matches "tok_000000000000"/);
  });
});
