// The sandbox: key (docs/config.md#sandbox): its shapes, its messages, how a server's own setting
// combines with the top-level default, and relative paths resolved against the config's folder.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, parseConfigText, type Config } from "../../../src/config/index.js";
import { connectionFingerprint, connectionKey } from "../../../src/downstream/identity.js";

function problems(yaml: string): string {
  try {
    parseConfigText(yaml, "yaml", "mcphub.yaml");
  } catch (err) {
    return (err as Error).message;
  }
  return "valid";
}

const sandboxes = (c: Config) => Object.fromEntries(Object.entries(c.servers).map(([k, v]) => [k, v.sandbox]));

describe("sandbox settings", () => {
  it("accepts off/false, on/true and a map; combines with the top-level default key by key", () => {
    const c = parseConfigText(
      [
        "sandbox: {network: loopback, read: [/srv/docs], env: [GITHUB_*]}",
        "servers:",
        "  inherits: {command: x}",
        "  own: {command: x, sandbox: {network: full, write: [/srv/out]}}",
        "  off: {command: x, sandbox: off}",
        "  false: {command: x, sandbox: false}",
        "  on: {command: x, sandbox: true}",
        "  remote: {url: 'http://127.0.0.1:1/mcp'}",
      ].join("\n"),
      "yaml",
    );
    expect(sandboxes(c)).toEqual({
      inherits: { network: "loopback", read: ["/srv/docs"], env: ["GITHUB_*"] },
      own: { network: "full", read: ["/srv/docs"], write: ["/srv/out"], env: ["GITHUB_*"] },
      off: false,
      false: false,
      on: { network: "loopback", read: ["/srv/docs"], env: ["GITHUB_*"] },
      remote: undefined,
    });
    // Without a default, servers are not sandboxed unless they say so.
    expect(sandboxes(parseConfigText("servers: {a: {command: x}, b: {command: x, sandbox: on}}", "yaml"))).toEqual({ a: undefined, b: {} });
  });

  it("says precisely what is wrong", () => {
    expect(problems("servers: {a: {command: x, sandbox: {network: nne}}}")).toBe('mcphub.yaml: servers.a.sandbox.network: network must be "none", "loopback" or "full" (got "nne"; did you mean "none"?)');
    expect(problems("servers: {a: {command: x, sandbox: {wirte: [x]}}}")).toBe('mcphub.yaml: servers.a.sandbox.wirte: unknown key; did you mean "write"?');
    expect(problems("servers: {a: {command: x, sandbox: yes}}")).toBe('mcphub.yaml: servers.a.sandbox: expected off (or false), on (or true), or a map with network, read, write and env, got a string ("yes")');
    expect(problems("servers: {a: {command: x, sandbox: {read: /srv}}}")).toBe(
      'mcphub.yaml: servers.a.sandbox.read: expected a list of paths (absolute, ~/..., relative to the config file\'s folder, or "roots"), got a string ("/srv")',
    );
    expect(problems("servers: {a: {command: x, sandbox: {read: ['', '~bob/x', /a, /a]}}}")).toBe(
      [
        "mcphub.yaml: servers.a.sandbox.read[0]: a path must not be empty",
        'mcphub.yaml: servers.a.sandbox.read[1]: "~bob/x": only ~ and ~/... are expanded (not ~user)',
        'mcphub.yaml: servers.a.sandbox.read[3]: "/a" is listed twice in read',
      ].join("\n"),
    );
    expect(problems("servers: {a: {command: x, sandbox: {env: [1X, MCPHUB_VAULT_PASSPHRASE_FILE]}}}")).toBe(
      [
        'mcphub.yaml: servers.a.sandbox.env[0]: "1X" is not a variable name; use letters, digits and _ (a trailing * matches every name with that prefix, e.g. AWS_*)',
        'mcphub.yaml: servers.a.sandbox.env[1]: "MCPHUB_VAULT_PASSPHRASE_FILE" is mcphub\'s vault passphrase, which never reaches a server',
      ].join("\n"),
    );
    expect(problems("servers: {a: {url: 'http://127.0.0.1:1/mcp', sandbox: {network: none}}}")).toBe("mcphub.yaml: servers.a.sandbox: sandbox applies only to stdio servers (this one has a url)");
    expect(problems("sandbox: {network: everything}")).toBe('mcphub.yaml: sandbox.network: network must be "none", "loopback" or "full" (got "everything")');
  });

  it("relative read/write paths resolve against the config's folder; ~ and roots are kept", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcphub-sbx-"));
    const path = join(dir, "mcphub.yaml");
    writeFileSync(path, ["sandbox: {write: [./out]}", "servers:", "  a: {command: x, sandbox: {read: [docs, '~/notes', roots]}}", "  b: {command: x}"].join("\n"));
    const { config } = await loadConfig({ configPath: path, cwd: tmpdir(), env: { HOME: dir } });
    expect(config.servers.a?.sandbox).toEqual({ write: [join(dir, "out")], read: [join(dir, "docs"), "~/notes", "roots"] });
    expect(config.servers.b?.sandbox).toEqual({ write: [join(dir, "out")] });
  });

  it("a change of sandbox restarts the server, but keeps its cached catalogue", () => {
    const a = parseConfigText("servers: {s: {command: x, sandbox: {network: none}}}", "yaml").servers.s;
    const b = parseConfigText("servers: {s: {command: x, sandbox: {network: full}}}", "yaml").servers.s;
    if (!a || !b) throw new Error("parsed");
    expect(connectionKey(a)).not.toBe(connectionKey(b));
    expect(connectionFingerprint(a)).toBe(connectionFingerprint(b));
  });
});
