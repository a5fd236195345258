// Editing config files: comments and layout survive in YAML, invalid results write nothing,
// saves are atomic with a timestamped backup and keep the file's mode.
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, editConfig, loadConfig, writeNewConfig } from "../../../src/config/index.js";
import { backupFile } from "../../../src/config/edit.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcphub-edit-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const BACKUP_RE = /^mcphub\.yaml\.bak-\d{8}-\d{6}(-\d+)?$/;
const mode = (p: string) => statSync(p).mode & 0o777;

// Deliberately irregular: extra spaces before comments and values, flow lists without padding,
// sequences not indented under their key, a comment that introduces the next top-level key.
const ORIGINAL = `# mcphub config — hand written
version: 1
expose:   lazy    # keep the context small

servers:
  # GitHub's hosted server
  github:
    url: https://api.example.com/mcp   # hosted
    use_when:
    - work with pull requests
    - "read issues"
  fs:
    command: npx
    args: [-y, server-fs]   # pinned version later

# Sets of servers for \`mcphub use\`
groups:
  dev: [github, fs]
`;

describe("editConfig on YAML", () => {
  it("changes only the edited nodes, byte for byte", async () => {
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, ORIGINAL);
    const config = await editConfig(p, (ed) => {
      ed.set(["expose"], "all");
      ed.set(["servers", "fs", "enabled"], false);
      ed.set(["servers", "memory"], { command: "node", args: ["memory.js"] });
      ed.delete(["servers", "github", "use_when", 1]);
    });
    expect(config.expose).toBe("all");
    expect(config.servers.fs?.enabled).toBe(false);
    expect(readFileSync(p, "utf8")).toBe(`# mcphub config — hand written
version: 1
expose:   all    # keep the context small

servers:
  # GitHub's hosted server
  github:
    url: https://api.example.com/mcp   # hosted
    use_when:
    - work with pull requests
  fs:
    command: npx
    args: [-y, server-fs]   # pinned version later
    enabled: false
  memory:
    command: node
    args:
    - memory.js

# Sets of servers for \`mcphub use\`
groups:
  dev: [github, fs]
`);
  });

  it("keeps a comment with the key it introduces when that key's neighbour is removed", async () => {
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, ORIGINAL);
    await editConfig(p, (ed) => {
      ed.delete(["servers", "fs"]);
      ed.set(["groups", "dev"], ["github"]);
    });
    const text = readFileSync(p, "utf8");
    expect(text).toContain("    - \"read issues\"\n\n# Sets of servers for `mcphub use`\ngroups:\n  dev: [github]\n");
    expect(text).not.toContain("fs");
  });

  it("offers get/has/raw views of the document being edited", async () => {
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, ORIGINAL);
    await editConfig(p, (ed) => {
      expect(ed.get(["servers", "github", "use_when", 1])).toBe("read issues");
      expect(ed.has(["servers", "fs"])).toBe(true);
      expect(ed.has(["servers", "nope"])).toBe(false);
      expect(ed.get(["groups"])).toEqual({ dev: ["github", "fs"] });
      ed.set(["pin"], ["github"]);
      expect((ed.raw() as { pin: string[] }).pin).toEqual(["github"]);
    });
  });

  it("fills an empty `servers:` and an empty file", async () => {
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, "# start here\nservers:\n");
    await editConfig(p, (ed) => ed.set(["servers", "a", "command"], "x"));
    expect(readFileSync(p, "utf8")).toBe("# start here\nservers:\n  a:\n    command: x\n");

    const empty = join(dir, "empty.yaml");
    writeFileSync(empty, "");
    await editConfig(empty, (ed) => ed.set(["expose"], "lazy"));
    expect(readFileSync(empty, "utf8")).toBe("expose: lazy\n");
  });
});

describe("editing the commented example config", () => {
  it("inserts a server as a block of new lines and changes nothing else", async () => {
    const example = readFileSync(join(import.meta.dirname, "../../../mcphub.example.yaml"), "utf8");
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, example);
    await editConfig(p, (ed) => {
      ed.set(["servers", "github"], { url: "https://api.example.com/mcp", description: "GitHub" });
      ed.set(["groups", "local"], ["everything", "memory", "files", "github"]);
    });
    const after = readFileSync(p, "utf8");
    const added = "  github:\n    url: https://api.example.com/mcp\n    description: GitHub\n";
    expect(after).toContain(added);
    expect(after).toContain("  local: [everything, memory, files, github]\n");
    // Remove the two edits and the original comes back byte for byte.
    const undone = after.replace(added, "").replace("[everything, memory, files, github]", "[everything, memory, files]");
    expect(undone).toBe(example);
    // The new server sits after the last server's own comments and before the groups' comment.
    expect(after.indexOf(added)).toBeGreaterThan(after.indexOf("#   Authorization: Bearer vault://demo/TOKEN"));
    expect(after.indexOf(added)).toBeLessThan(after.indexOf("# Named sets of servers"));
  });
});

describe("invalid edits write nothing", () => {
  it("throws a ConfigError and leaves the file, with no backup or temp file", async () => {
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, ORIGINAL);
    const before = readFileSync(p);
    const err = await editConfig(p, (ed) => {
      ed.set(["servers", "fs", "url"], "https://example.com/mcp");
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toBe(`${p}: servers.fs: set either command (stdio) or url (remote), not both`);
    expect(readFileSync(p).equals(before)).toBe(true);
    expect(readdirSync(dir)).toEqual(["mcphub.yaml"]);
  });

  it("writes nothing when the mutation itself throws", async () => {
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, ORIGINAL);
    await expect(
      editConfig(p, (ed) => {
        ed.set(["expose"], "all");
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(readFileSync(p, "utf8")).toBe(ORIGINAL);
    expect(readdirSync(dir)).toEqual(["mcphub.yaml"]);
  });

  it("refuses a missing file unless asked to create it", async () => {
    const p = join(dir, "mcphub.yaml");
    await expect(editConfig(p, () => undefined)).rejects.toThrow(`no config at ${p} — run \`mcphub init\` to create one`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("reports a syntax error in the file being edited with its line", async () => {
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, "servers:\n  a: [\n");
    await expect(editConfig(p, () => undefined)).rejects.toThrow(/^.*mcphub\.yaml:3:1: YAML syntax error: /);
  });
});

describe("saving", () => {
  it("backs up the previous file and replaces it by rename, keeping its mode", async () => {
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, ORIGINAL);
    chmodSync(p, 0o640);
    const inode = statSync(p).ino;
    await editConfig(p, (ed) => ed.set(["verbatim"], true));

    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(2); // the config and one backup; no temp file left
    const backup = files.find((f) => f !== "mcphub.yaml") ?? "";
    expect(backup).toMatch(BACKUP_RE);
    expect(readFileSync(join(dir, backup), "utf8")).toBe(ORIGINAL);
    expect(mode(join(dir, backup))).toBe(0o640);
    expect(readFileSync(p, "utf8")).toBe(`${ORIGINAL}verbatim: true\n`);
    expect(mode(p)).toBe(0o640);
    // A new inode: the file was replaced by a rename, never rewritten in place.
    expect(statSync(p).ino).not.toBe(inode);
  });

  it("does not write or back up when nothing changed", async () => {
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, ORIGINAL);
    const inode = statSync(p).ino;
    await editConfig(p, (ed) => ed.set(["expose"], "lazy"));
    expect(readdirSync(dir)).toEqual(["mcphub.yaml"]);
    expect(statSync(p).ino).toBe(inode);
  });

  it("numbers backups taken within the same second", async () => {
    const p = join(dir, "mcphub.yaml");
    writeFileSync(p, "version: 1\n");
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
    const names = [];
    for (let i = 0; i < 3; i++) names.push(await backupFile(p, 0o600, at));
    expect(names).toEqual([`${p}.bak-20260102-030405`, `${p}.bak-20260102-030405-1`, `${p}.bak-20260102-030405-2`]);
  });

  it("creates a missing file as 0600 in a 0700 directory when asked", async () => {
    const p = join(dir, "conf", "mcphub.yaml");
    const config = await editConfig(p, (ed) => ed.set(["servers", "a"], { command: "x" }), { createIfMissing: true });
    expect(config.servers.a?.command).toBe("x");
    expect(mode(p)).toBe(0o600);
    expect(mode(join(dir, "conf"))).toBe(0o700);
    expect(readdirSync(join(dir, "conf"))).toEqual(["mcphub.yaml"]);
  });

  it("creates missing TOML and JSON files too", async () => {
    for (const name of ["new.json", "new.toml"]) {
      const p = join(dir, name);
      await editConfig(p, (ed) => ed.set(["expose"], "lazy"), { createIfMissing: true });
      const { config } = await loadConfig({ configPath: p, env: {}, cwd: dir, home: dir });
      expect(config.expose).toBe("lazy");
      expect(mode(p)).toBe(0o600);
    }
  });

  it("edits the target of a symlink and keeps the link", async () => {
    const real = join(dir, "real.yaml");
    const link = join(dir, "mcphub.yaml");
    writeFileSync(real, "version: 1\n");
    symlinkSync(real, link);
    await editConfig(link, (ed) => ed.set(["expose"], "lazy"));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toBe("version: 1\nexpose: lazy\n");
  });
});

describe("editConfig on TOML and JSON", () => {
  it("writes JSON with 2-space indentation and a trailing newline", async () => {
    const p = join(dir, "mcphub.json");
    writeFileSync(p, '{"servers":{"a":{"command":"x"}}}');
    await editConfig(p, (ed) => {
      ed.set(["servers", "a", "args"], ["--flag"]);
      ed.delete(["servers", "missing"]);
    });
    expect(readFileSync(p, "utf8")).toBe('{\n  "servers": {\n    "a": {\n      "command": "x",\n      "args": [\n        "--flag"\n      ]\n    }\n  }\n}\n');
  });

  it("round-trips TOML through an edit", async () => {
    const p = join(dir, "mcphub.toml");
    writeFileSync(p, 'expose = "lazy"\n\n[servers.a]\ncommand = "x"\n');
    await editConfig(p, (ed) => ed.set(["servers", "b"], { url: "http://127.0.0.1:1/mcp", enabled: false }));
    const { config } = await loadConfig({ configPath: p, env: {}, cwd: dir, home: dir });
    expect(config.expose).toBe("lazy");
    expect(config.servers.b).toMatchObject({ url: "http://127.0.0.1:1/mcp", enabled: false });
    expect(readdirSync(dir).some((f) => f.startsWith("mcphub.toml.bak-"))).toBe(true);
  });

  it("rejects an invalid JSON edit without touching the file", async () => {
    const p = join(dir, "mcphub.json");
    writeFileSync(p, '{"expose": "all"}\n');
    await expect(editConfig(p, (ed) => ed.set(["expose"], "sometimes"))).rejects.toThrow(
      `${p}: expose: expose must be "all" or "lazy" (got "sometimes")`,
    );
    expect(readFileSync(p, "utf8")).toBe('{"expose": "all"}\n');
    expect(readdirSync(dir)).toEqual(["mcphub.json"]);
  });
});

describe("writeNewConfig", () => {
  const STARTER = "# starter\nexpose: lazy # lean\nservers: {}\n";

  it("writes YAML verbatim as 0600 and refuses to overwrite without force", async () => {
    const p = join(dir, "mcphub.yaml");
    await writeNewConfig(p, { yamlText: STARTER });
    expect(readFileSync(p, "utf8")).toBe(STARTER);
    expect(mode(p)).toBe(0o600);
    await expect(writeNewConfig(p, { yamlText: "expose: all\n" })).rejects.toThrow(
      `a config already exists at ${p}; pass --force to replace it (the old one is kept as a backup)`,
    );
    await writeNewConfig(p, { yamlText: "expose: all\n" }, { force: true });
    expect(readFileSync(p, "utf8")).toBe("expose: all\n");
    expect(readdirSync(dir).filter((f) => BACKUP_RE.test(f))).toHaveLength(1);
  });

  it("converts the starter to TOML and JSON", async () => {
    await writeNewConfig(join(dir, "mcphub.toml"), { yamlText: STARTER });
    await writeNewConfig(join(dir, "mcphub.json"), { raw: { expose: "lazy", servers: {} } });
    expect(readFileSync(join(dir, "mcphub.json"), "utf8")).toBe('{\n  "expose": "lazy",\n  "servers": {}\n}\n');
    const t = await loadConfig({ configPath: "mcphub.toml", env: {}, cwd: dir, home: dir });
    expect(t.config.expose).toBe("lazy");
  });

  it("validates before writing anything", async () => {
    mkdirSync(join(dir, "sub"));
    const p = join(dir, "sub", "mcphub.yaml");
    await expect(writeNewConfig(p, { raw: { servers: { mcphub: { command: "x" } } } })).rejects.toThrow(
      'servers.mcphub: "mcphub" is reserved for the gateway itself; pick another name',
    );
    expect(readdirSync(join(dir, "sub"))).toEqual([]);
  });
});
