// Config path resolution order and the data directory, with every input passed explicitly.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, dataDir, expandHome, formatFromPath, resolveConfigPath } from "../../../src/config/index.js";

let root: string;
let cwd: string;
let home: string;
let homeConfig: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mcphub-paths-"));
  cwd = join(root, "project");
  home = join(root, "home");
  homeConfig = join(home, ".config", "mcphub");
  mkdirSync(cwd, { recursive: true });
  mkdirSync(homeConfig, { recursive: true });
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

const touch = (p: string) => writeFileSync(p, "version: 1\n");

describe("resolveConfigPath", () => {
  it("falls back to ~/.config/mcphub/mcphub.yaml when nothing exists", () => {
    expect(resolveConfigPath({ env: {}, cwd, home })).toEqual({
      path: join(homeConfig, "mcphub.yaml"),
      format: "yaml",
      exists: false,
      source: "default",
    });
  });

  it("walks the order flag > env > cwd > home, each step only when the earlier is absent", () => {
    touch(join(homeConfig, "mcphub.toml"));
    expect(resolveConfigPath({ env: {}, cwd, home })).toMatchObject({ path: join(homeConfig, "mcphub.toml"), format: "toml", source: "home" });

    touch(join(cwd, "mcphub.json"));
    expect(resolveConfigPath({ env: {}, cwd, home })).toMatchObject({ path: join(cwd, "mcphub.json"), format: "json", source: "cwd" });

    const fromEnv = join(root, "elsewhere.yml");
    expect(resolveConfigPath({ env: { MCPHUB_CONFIG: fromEnv }, cwd, home })).toEqual({
      path: fromEnv,
      format: "yaml",
      exists: false, // an explicit choice wins even before the file exists (init creates it)
      source: "env",
    });

    expect(resolveConfigPath({ explicit: "custom.toml", env: { MCPHUB_CONFIG: fromEnv }, cwd, home })).toMatchObject({
      path: join(cwd, "custom.toml"),
      format: "toml",
      source: "flag",
    });
  });

  it("prefers yaml, then yml, toml, json within one directory", () => {
    for (const name of ["mcphub.json", "mcphub.toml", "mcphub.yml"]) touch(join(cwd, name));
    expect(resolveConfigPath({ env: {}, cwd, home }).path).toBe(join(cwd, "mcphub.yml"));
    touch(join(cwd, "mcphub.yaml"));
    expect(resolveConfigPath({ env: {}, cwd, home }).path).toBe(join(cwd, "mcphub.yaml"));
  });

  it("expands ~ in --config and $MCPHUB_CONFIG and ignores an empty variable", () => {
    touch(join(home, "x.yaml"));
    expect(resolveConfigPath({ explicit: "~/x.yaml", env: {}, cwd, home })).toMatchObject({ path: join(home, "x.yaml"), exists: true });
    expect(resolveConfigPath({ env: { MCPHUB_CONFIG: "~/x.yaml" }, cwd, home }).path).toBe(join(home, "x.yaml"));
    expect(resolveConfigPath({ env: { MCPHUB_CONFIG: "" }, cwd, home }).source).toBe("default");
  });

  it("uses $HOME from env when no home is given", () => {
    expect(resolveConfigPath({ env: { HOME: home }, cwd }).path).toBe(join(homeConfig, "mcphub.yaml"));
  });

  it("rejects an unknown extension with the allowed ones", () => {
    expect(() => resolveConfigPath({ explicit: "mcphub.ini", env: {}, cwd, home })).toThrow(ConfigError);
    expect(() => formatFromPath("/etc/mcphub.ini")).toThrow(
      'config file "/etc/mcphub.ini" has an unsupported extension; use .yaml, .yml, .toml or .json',
    );
    expect(formatFromPath("A.YML")).toBe("yaml");
  });
});

describe("dataDir and expandHome", () => {
  it("uses $MCPHUB_DATA_DIR, else ~/.local/share/mcphub", () => {
    expect(dataDir({ MCPHUB_DATA_DIR: join(root, "data") })).toBe(join(root, "data"));
    expect(dataDir({ HOME: home })).toBe(join(home, ".local", "share", "mcphub"));
    expect(dataDir({ MCPHUB_DATA_DIR: "~/d", HOME: home })).toBe(join(home, "d"));
  });

  it("expands only a leading ~", () => {
    expect(expandHome("~", home)).toBe(home);
    expect(expandHome("~/a/b", home)).toBe(join(home, "a/b"));
    expect(expandHome("/x/~/y", home)).toBe("/x/~/y");
    expect(expandHome("~other/y", home)).toBe("~other/y");
  });
});
