// OAuth end to end, with real processes: a running gateway (`mcphub mcp serve`), the `mcphub auth`
// CLI, and a local OAuth-protected MCP server (test/fixtures/oauth-server.ts: an authorization
// server and a resource server on loopback). The person's browser step is done by the test
// through the URL the CLI prints. Checked in order:
//   needs_auth with the exact command while the other server works → `auth login` → the running
//   gateway connects by itself → tool call → access token expires → refreshed without a person →
//   403 insufficient_scope → sign in again with the scope → refresh token revoked → needs_auth
//   again, the other server unaffected → status and logout (revocation) → no token value in the
//   data dir, the logs or any process's argv.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveInBrowser, CANARY, startOAuthFixture, type OAuthFixture } from "../fixtures/oauth-server.js";
import { BIN, doc, FIXTURES, startGateway, tempHome, text, type GatewayClient, type TempHome } from "../helpers/gateway.js";

interface ServerRow {
  name: string;
  state: string;
  error?: string;
  sign_in?: string;
}

/** Everything any process printed, to look for token values in. */
const outputs: string[] = [];
/** argv of every process seen while tokens existed. */
const argvSeen: string[] = [];

function sampleArgv(): void {
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      argvSeen.push(readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " "));
    } catch {
      // gone, or not ours to read
    }
  }
}

function cli(home: TempHome, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...home.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) =>
    child.once("close", (code) => {
      outputs.push(stdout, stderr);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** `mcphub auth login SERVER --no-browser`, with the test acting as the person in the browser. */
async function login(home: TempHome, config: string, server: string): Promise<{ code: number | null; stderr: string; page: string }> {
  const child = spawn(process.execPath, [BIN, "--config", config, "auth", "login", server, "--no-browser", "--timeout", "60s"], {
    env: { ...home.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      const m = /^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(stderr);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("close", (code) => reject(new Error(`auth login exited (${code}) before printing a URL: ${stderr}`)));
  });
  sampleArgv();
  const page = await (await approveInBrowser(url)).text();
  const code = await new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("close", (c) => resolve(c))));
  outputs.push(stdout, stderr);
  return { code, stderr, page };
}

/** A tool call through the gateway; what it returned is kept for the canary check. */
async function call(gw: GatewayClient, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const result = await gw.call(name, args);
  outputs.push(JSON.stringify(result));
  return result;
}

async function servers(gw: GatewayClient): Promise<Map<string, ServerRow>> {
  const rows = doc(await call(gw, "mcphub_list_servers")).servers as ServerRow[];
  outputs.push(JSON.stringify(rows));
  return new Map(rows.map((r) => [r.name, r]));
}

/** Polls list_servers until `server` is in `state` (bounded by attempts, not a clock assertion). */
async function waitState(gw: GatewayClient, server: string, state: string): Promise<ServerRow> {
  let last: ServerRow | undefined;
  for (let i = 0; i < 600; i++) {
    last = (await servers(gw)).get(server);
    if (last?.state === state) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${server} never reached ${state} (last: ${JSON.stringify(last)})`);
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

describe("OAuth-protected downstreams, end to end", () => {
  let fixture: OAuthFixture;
  let home: TempHome;
  let config: string;
  let gw: GatewayClient;

  beforeAll(async () => {
    fixture = await startOAuthFixture();
    home = tempHome("mcphub-oauth-");
    config = home.writeConfig({
      servers: {
        // Configured for OAuth, over streamable HTTP.
        secure: { url: fixture.mcpUrl, oauth: { scopes: ["mcp:read", "openid"] }, description: "Identity of the signed-in user" },
        // No oauth block: sign-in starts from the server's Bearer challenge (legacy SSE transport).
        legacy: { url: fixture.sseUrl, transport: "sse" },
        plain: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")] },
      },
    });
    gw = await startGateway(home, config, { env: { MCPHUB_LOG_LEVEL: "info" } });
  });

  afterAll(async () => {
    await gw?.close();
    await fixture?.close();
    home?.cleanup();
  });

  it("shows needs_auth with the exact command while the other server works", async () => {
    const row = await waitState(gw, "secure", "needs_auth");
    const command = `mcphub --config ${config} auth login secure`;
    expect(row.sign_in).toBe(command);
    expect(row.error).toContain(`run \`${command}\``);
    expect((await waitState(gw, "legacy", "needs_auth")).sign_in).toBe(`mcphub --config ${config} auth login legacy`);
    await waitState(gw, "plain", "ready");
    expect(text(await call(gw, "plain__echo", { message: "hi" }))).toBe("Echo: hi");
    // Discovery says it too: a request for what the server offers names it, its state and the
    // command that signs it in, and is never confident (issue 23, failure-aware routing).
    const resolved = doc(await call(gw, "mcphub_resolve_tool", { query: "who is the signed-in user" }));
    expect(resolved.status).not.toBe("confident");
    expect(resolved.reason_codes).toContain("server_unavailable");
    expect((resolved.unavailable as Record<string, unknown>[]).find((u) => u.server === "secure")).toMatchObject({ state: "needs_auth", fix: `run \`${command}\`` });
    expect(String(resolved.hint)).toContain(`server secure is needs auth; fix: run \`${command}\``);
    // The daemon log says it too, once per server.
    expect(gw.stderr().match(/secure: needs sign-in: run `mcphub --config \S+ auth login secure`/g)?.length).toBe(1);
  });

  it("auth login signs in through the browser, and the running gateway connects without a restart", async () => {
    const r = await login(home, config, "secure");
    expect(r.code).toBe(0);
    expect(r.page).toContain("You can close this tab");
    expect(r.stderr).toMatch(/signed in to secure as alice@example\.com; scopes: mcp:read openid; access token valid for (1h|59m\d*s?), refreshed automatically/);
    expect(fixture.counts.register).toBe(1);
    await waitState(gw, "secure", "ready");
    expect(text(await call(gw, "secure__whoami"))).toBe("alice@example.com (mcp:read openid)");
    sampleArgv();

    expect((await login(home, config, "legacy")).code).toBe(0);
    await waitState(gw, "legacy", "ready");
    expect(text(await call(gw, "legacy__whoami"))).toBe("alice@example.com (mcp:read)");
  });

  it("refreshes an expired access token without a person", async () => {
    const before = fixture.counts.refreshGrants;
    fixture.expireAccessTokens("mcp");
    expect(text(await call(gw, "secure__whoami"))).toBe("alice@example.com (mcp:read openid)");
    expect(fixture.counts.refreshGrants).toBe(before + 1);
    expect(text(await call(gw, "secure__whoami"))).toBe("alice@example.com (mcp:read openid)");
    expect(fixture.counts.refreshGrants).toBe(before + 1);
    expect((await servers(gw)).get("secure")?.state).toBe("ready");
    // The refreshed token is masked when a server quotes it.
    expect(text(await call(gw, "secure__leak_token"))).toBe("token rejected: Bearer [redacted] ([redacted])");
    sampleArgv();
  });

  it("a call needing a broader scope says so; signing in again grants it", async () => {
    const denied = await call(gw, "secure__write_note", { text: "x" });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toContain(`scope "mcp:read mcp:write"`);
    expect(text(denied)).toContain(`run \`mcphub --config ${config} auth login secure\``);
    expect((await servers(gw)).get("secure")?.state).toBe("ready");
    const status = await cli(home, ["--config", config, "auth", "status", "secure"]);
    expect(status.stdout).toContain("needs scope mcp:read openid mcp:write");

    expect((await login(home, config, "secure")).code).toBe(0);
    expect(text(await call(gw, "secure__write_note", { text: "x" }))).toBe("noted: x");
  });

  it("a revoked refresh token puts the server back to needs_auth; the others keep working", async () => {
    fixture.revokeRefreshTokens("mcp");
    fixture.expireAccessTokens("mcp");
    const failed = await call(gw, "secure__whoami");
    expect(failed.isError).toBe(true);
    expect(text(failed)).toContain(`needs sign-in: run \`mcphub --config ${config} auth login secure\``);
    expect(text(failed)).toContain("refused the refresh token (invalid_grant)");
    const row = await waitState(gw, "secure", "needs_auth");
    expect(row.sign_in).toBe(`mcphub --config ${config} auth login secure`);
    expect(text(await call(gw, "plain__echo", { message: "still" }))).toBe("Echo: still");
    expect(fixture.counts.refusedRefreshes).toBeGreaterThan(0);
    // The other OAuth server still works on its own sign-in.
    expect(text(await call(gw, "legacy__whoami"))).toBe("alice@example.com (mcp:read)");
    // doctor says the same, with the command.
    const dr = await cli(home, ["--config", config, "doctor", "--probe", "--server", "secure"]);
    expect(dr.code).toBe(1);
    expect(dr.stdout).toMatch(new RegExp(`FAIL\\s+auth:secure\\s+needs sign-in: run \`mcphub --config \\S+ auth login secure\``));
    expect(dr.stdout).toMatch(/FAIL\s+probe:secure\s+needs sign-in: run `mcphub --config \S+ auth login secure` \(no sign-in is stored\)/);
  });

  it("auth status shows account, scopes and expiry; logout revokes and deletes", async () => {
    const status = await cli(home, ["--config", config, "auth", "status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/legacy\s+signed in\s+alice@example\.com\s+mcp:read\s+in (59m|1h)/);
    expect(status.stdout).toMatch(/secure\s+not signed in/);
    expect(status.stderr).toContain(`secure: run \`mcphub --config ${config} auth login secure\``);
    const json = JSON.parse((await cli(home, ["--config", config, "--json", "auth", "status", "legacy"])).stdout) as Record<string, unknown>[];
    expect(json[0]).toMatchObject({ server: "legacy", state: "signed_in", account: "alice@example.com", scopes: ["mcp:read"], refreshable: true, client: "dynamic" });

    const revokedBefore = fixture.counts.revocations;
    const out = await cli(home, ["--config", config, "auth", "logout", "legacy"]);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("signed legacy out (revocation: revoked)");
    expect(fixture.counts.revocations).toBe(revokedBefore + 2);
    expect((await cli(home, ["--config", config, "auth", "status", "legacy"])).stdout).toMatch(/legacy\s+not signed in/);
  });

  it("no token value ever appears in the data dir, the logs or any process's argv", async () => {
    const issued = fixture.issued();
    expect(issued.length).toBeGreaterThan(10);
    const dataDir = home.env.MCPHUB_DATA_DIR as string;
    const files = filesUnder(dataDir);
    expect(files.some((f) => f.endsWith("oauth.enc"))).toBe(true);
    for (const f of files) expect(readFileSync(f).toString("latin1").includes(CANARY), f).toBe(false);
    expect((statSync(join(dataDir, "vault", "oauth.enc")).mode & 0o777).toString(8)).toBe("600");
    // Tool results and errors (list_servers, failed calls), CLI output and the gateway log.
    for (const text of [...outputs, gw.stderr()]) expect(text.includes(CANARY)).toBe(false);
    // stats come from the telemetry under the data dir (checked above) and say why calls failed.
    const stats = await cli(home, ["--config", config, "--json", "stats"]);
    expect(stats.code).toBe(0);
    expect(stats.stdout.includes(CANARY)).toBe(false);
    expect(argvSeen.length).toBeGreaterThan(0);
    for (const argv of argvSeen) expect(argv.includes(CANARY)).toBe(false);
    // The gateway log did record what happened, without values.
    expect(gw.stderr()).toContain("secure: access token refreshed");
  });
});
