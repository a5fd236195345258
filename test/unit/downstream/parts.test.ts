// The small parts on their own: redaction, stderr summaries, child env, backoff, the stderr tail,
// and the stdio transport's exit and tree-kill behaviour.
import { describe, expect, it } from "vitest";
import { backoffDelay } from "../../../src/downstream/backoff.js";
import { buildChildEnv, resolveChildCwd } from "../../../src/downstream/stdio/child-env.js";
import { redactPatterns, sanitizeLine, sanitizeText, summarizeStartupStderr } from "../../../src/downstream/sanitize.js";
import { TailBuffer } from "../../../src/downstream/stdio/stderr-tail.js";
import { ProcessGroupStdioTransport } from "../../../src/downstream/stdio/transport.js";
import { probeServer } from "../../../src/downstream/probe.js";
import { alive, eventually, fixture } from "./util.js";

describe("sanitize", () => {
  it("redacts known values, longest first", () => {
    expect(sanitizeText("a=abcdef and abcdefgh", ["abcdef", "abcdefgh"])).toBe("a=[redacted] and [redacted]");
  });

  it("redacts credential shapes", () => {
    const out = redactPatterns(
      [
        "\u001b[31mred\u001b[0m",
        "Authorization: Bearer abc.def.ghi",
        "curl -H 'x' with bearer sometokenvalue",
        "GITHUB_TOKEN=ghp_1234567890abcdefghij1234 next",
        '{"api_key": "zzzzzz", "name": "ok"}',
        "postgres://user:hunter2@db/x",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----",
      ].join("\n"),
    );
    expect(out).not.toMatch(/\u001b|abc\.def|sometokenvalue|ghp_|zzzzzz|hunter2|MIIB/);
    expect(out).toContain("red");
    expect(out).toContain('"name": "ok"');
    expect(out).toContain("next");
  });

  it("flattens to one bounded line", () => {
    const line = sanitizeLine("x\ny\t\tz".repeat(1000), [], 100);
    expect(line).not.toMatch(/[\n\t]/);
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(100);
  });

  it("summarises startup stderr with fixed sentences only", () => {
    const cfg = { command: "x", enabled: true, env: { GITHUB_TOKEN: "v" } };
    expect(summarizeStartupStderr("Error: GITHUB_TOKEN is not set", false, cfg)).toMatch(/GITHUB_TOKEN/);
    expect(summarizeStartupStderr("Error: OTHER_VAR is not set", false, cfg)).not.toMatch(/OTHER_VAR/);
    expect(summarizeStartupStderr("EACCES: permission denied, open '/x'", false, cfg)).toMatch(/permission/);
    expect(summarizeStartupStderr("Error: Cannot find module 'foo'", false, cfg)).toMatch(/could not find a file/);
    expect(summarizeStartupStderr("error: unknown option '--bad'", false, cfg)).toMatch(/rejected a startup option/);
    const other = summarizeStartupStderr("something odd happened with 12345", true, cfg);
    expect(other).not.toContain("12345");
    expect(other).toMatch(/capture limit/);
  });
});

describe("child env", () => {
  const servers = {
    a: { command: "a", enabled: true, env: { A_KEY: "a", SHARED: "a" } },
    b: { command: "b", enabled: true, env: { B_KEY: "b", SHARED: "b" } },
    v: { command: "v", enabled: true, vault: "P", vault_only: ["API_TOKEN"], vault_prefix: "SVC_" },
  };
  const parent = { PATH: "/bin", HOME: "/h", MCPHUB_VAULT_PASSPHRASE: "p", MCPHUB_VAULT_PASSPHRASE_FILE: "/f", B_KEY: "ambient", API_TOKEN: "stale", SVC_X: "stale", FN: "() { evil; }" };

  it("drops gateway-only vars and other servers' vars, adds own env", () => {
    const env = buildChildEnv({ server: "a", cfg: servers.a, allServers: servers, parentEnv: parent });
    expect(env).toEqual({ PATH: "/bin", HOME: "/h", API_TOKEN: "stale", SVC_X: "stale", A_KEY: "a", SHARED: "a" });
  });

  it("drops stale ambient values the vault provides, then adds vault secrets last", () => {
    const env = buildChildEnv({ server: "v", cfg: servers.v, allServers: servers, parentEnv: parent, vaultEnv: { API_TOKEN: "fresh" } });
    expect(env.API_TOKEN).toBe("fresh");
    expect(env.SVC_X).toBeUndefined();
    expect(env.B_KEY).toBeUndefined();
    expect(env.MCPHUB_VAULT_PASSPHRASE).toBeUndefined();
  });

  it("expands ~ in cwd", () => {
    expect(resolveChildCwd("~", "/home/u")).toBe("/home/u");
    expect(resolveChildCwd("~/proj", "/home/u")).toBe("/home/u/proj");
    expect(resolveChildCwd(undefined)).toBeUndefined();
  });
});

describe("backoff", () => {
  it("grows exponentially up to the cap, with full jitter", () => {
    const p = { initialMs: 500, maxMs: 30_000 };
    expect(backoffDelay(0, p, () => 0.999999)).toBe(499);
    expect(backoffDelay(3, p, () => 0.999999)).toBe(3999);
    expect(backoffDelay(20, p, () => 0.999999)).toBe(29_999);
    expect(backoffDelay(1000, p, () => 0.5)).toBe(15_000);
    expect(backoffDelay(5, p, () => 0)).toBe(0);
  });
});

describe("TailBuffer", () => {
  it("keeps only the last bytes and says it dropped some", () => {
    const t = new TailBuffer(10);
    t.append(Buffer.from("hello "));
    expect(t.truncated).toBe(false);
    t.append(Buffer.from("world!!"));
    expect(t.text()).toBe("lo world!!");
    expect(t.truncated).toBe(true);
    t.append(Buffer.from("0123456789abc"));
    expect(t.text()).toBe("3456789abc");
    expect(t.byteLength).toBe(10);
  });
});

describe("ProcessGroupStdioTransport", () => {
  it("reports close when the child exits even if a grandchild holds stdout, and kills the grandchild", async () => {
    const tr = new ProcessGroupStdioTransport({
      command: "/bin/sh",
      args: ["-c", "sleep 300 & echo $! >&2; sleep 0.2; exit 0"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    const closed = new Promise<void>((resolve) => (tr.onclose = resolve));
    await tr.start();
    await closed;
    expect(tr.exit?.code).toBe(0);
    await tr.close();
    const pid = Number(tr.stderrTail.text().trim());
    expect(pid).toBeGreaterThan(0);
    await eventually(() => !alive(pid), "the orphaned grandchild to be killed", 5000);
  });

  it("rejects start for a missing command", async () => {
    const tr = new ProcessGroupStdioTransport({ command: "/nonexistent/mcp-server", args: [], env: {} });
    await expect(tr.start()).rejects.toThrow(/ENOENT/);
  });
});

describe("probeServer", () => {
  it("reports a handshake, the tool count and the server version", async () => {
    const r = await probeServer("s", fixture("slow-start.mjs"), { timeoutMs: 20_000 });
    expect(r).toMatchObject({ handshake_ok: true, tool_count: 4, serverVersion: { name: "slow-start-0", version: "1.0.0" } });
    expect(r.latency_ms).toBeGreaterThan(0);
  });

  it("reports a failed start without leaking the secret", async () => {
    const r = await probeServer("s", fixture("stderr-secret.mjs", { env: { SERVICE_TOKEN: "tok-very-secret-1" } }), { timeoutMs: 20_000 });
    expect(r.handshake_ok).toBe(false);
    expect(r.error).toMatch(/exited with code 3/);
    expect(r.error).not.toContain("tok-very-secret-1");
  });

  it("reports a connect timeout", async () => {
    const r = await probeServer("s", fixture("slow-start.mjs", { env: { SLOW_START_MS: "30000" } }), { timeoutMs: 300 });
    expect(r.handshake_ok).toBe(false);
    expect(r.error).toMatch(/timed out after 300ms/);
  });
});
