// The launcher's V8 code cache (bin/mcphub.js): a gateway that started without a usable cache
// writes one, private, where only this user can write; a later start uses it as is; a cache V8
// rejects is replaced; a cache directory others could write is never read or written; operator
// commands never write it (they would leave a cache without the gateway's functions).
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { alive, FIXTURES, runMcphub, startGateway, tempHome, until, type TempHome } from "../helpers/gateway.js";

const homes: TempHome[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) h.cleanup();
});

function setup(): { home: TempHome; cfg: string; cacheDir: string } {
  const home = tempHome("mcphub-codecache-");
  homes.push(home);
  delete home.env.XDG_CACHE_HOME;
  delete home.env.MCPHUB_NO_CODE_CACHE;
  delete home.env.MCPHUB_NO_BUNDLE;
  const cfg = home.writeConfig({ servers: { echo: { command: process.execPath, args: [join(FIXTURES, "echo.mjs")], start: "lazy" } } });
  return { home, cfg, cacheDir: join(home.dir, ".cache", "mcphub") };
}

const files = (dir: string) => {
  try {
    return readdirSync(dir).filter((f) => f.startsWith("code-cache-"));
  } catch {
    return [];
  }
};

/** One gateway session: initialize, one request, close (stdin ends, the gateway exits). */
async function gatewayRun(home: TempHome, cfg: string, env: NodeJS.ProcessEnv = {}): Promise<void> {
  const gw = await startGateway(home, cfg, { env });
  const listed = await gw.client.listTools();
  expect(listed.tools.map((t) => t.name)).toContain("mcphub_search_tools");
  await gw.close();
  await until(() => !alive(gw.pid), "the gateway exits");
}

describe("the launcher's code cache", () => {
  it("a gateway writes it once (0600 in a 0700 directory) and a later start uses it without rewriting", async () => {
    const { home, cfg, cacheDir } = setup();
    await gatewayRun(home, cfg);
    const [file] = files(cacheDir);
    expect(file).toBeDefined();
    const path = join(cacheDir, file as string);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(path).size).toBeGreaterThan(100_000);
    const before = readFileSync(path);
    const mtime = statSync(path).mtimeMs;
    await gatewayRun(home, cfg);
    // Accepted by V8, so not written again.
    expect(statSync(path).mtimeMs).toBe(mtime);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("a cache V8 rejects (corrupt) still starts the gateway and is replaced", async () => {
    const { home, cfg, cacheDir } = setup();
    await gatewayRun(home, cfg);
    const path = join(cacheDir, files(cacheDir)[0] as string);
    writeFileSync(path, Buffer.alloc(4096, 7), { mode: 0o600 });
    await gatewayRun(home, cfg);
    const after = readFileSync(path);
    expect(after.length).toBeGreaterThan(100_000);
    expect(after.equals(Buffer.alloc(after.length, 7))).toBe(false);
  });

  it("is named by the bundle's content: another build's cache is never read, and is removed when this one is written", async () => {
    const { home, cfg, cacheDir } = setup();
    await gatewayRun(home, cfg);
    const [name] = files(cacheDir) as [string];
    expect(name).toMatch(/^code-cache-[0-9a-f]{16}-[0-9a-f]{16}\.bin$/);
    // As if written by an earlier build at the same place (same length, other content).
    const older = name.replace(/-[0-9a-f]{16}\.bin$/, "-0123456789abcdef.bin");
    renameSync(join(cacheDir, name), join(cacheDir, older));
    await gatewayRun(home, cfg);
    expect(files(cacheDir)).toEqual([name]);
  });

  it("operator commands and MCPHUB_NO_CODE_CACHE=1 write nothing", async () => {
    const { home, cfg, cacheDir } = setup();
    const r = await runMcphub(home, ["--config", cfg, "list"]);
    expect(r.code).toBe(0);
    expect(files(cacheDir)).toEqual([]);
    await gatewayRun(home, cfg, { MCPHUB_NO_CODE_CACHE: "1" });
    expect(files(cacheDir)).toEqual([]);
  });

  it("a cache directory that others can write is neither read nor written; XDG_CACHE_HOME is followed", async () => {
    const { home, cfg, cacheDir } = setup();
    mkdirSync(cacheDir, { recursive: true });
    chmodSync(cacheDir, 0o777);
    await gatewayRun(home, cfg);
    expect(files(cacheDir)).toEqual([]);
    const xdg = join(home.dir, "xdg");
    await gatewayRun(home, cfg, { XDG_CACHE_HOME: xdg });
    expect(files(join(xdg, "mcphub"))).toHaveLength(1);
  });
});
