// Watching the config file: saves by rename and in place are picked up (debounced), identical
// content is ignored, an invalid edit is one error line per distinct content, and reload() (SIGHUP)
// re-applies on demand.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/schema.js";
import { watchConfig, type ConfigWatcher } from "../../../src/config/watch.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

function setup(initial: string) {
  const dir = mkdtempSync(join(tmpdir(), "mcphub-watch-"));
  const path = join(dir, "mcphub.yaml");
  writeFileSync(path, initial);
  const configs: { config: Config; why: string }[] = [];
  const errors: string[] = [];
  const watcher: ConfigWatcher = watchConfig({
    path,
    label: "mcphub.yaml",
    debounceMs: 50,
    pollMs: 200,
    onConfig: (config, why) => configs.push({ config, why }),
    onError: (m) => errors.push(m),
  });
  cleanups.push(() => {
    watcher.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, path, configs, errors, watcher };
}

describe("watchConfig", () => {
  it("picks up a save by rename and an in-place write, and ignores a save with identical content", async () => {
    const w = setup("expose: lazy\n");
    const tmp = join(w.dir, ".mcphub.yaml.tmp");
    writeFileSync(tmp, "expose: all\n");
    renameSync(tmp, w.path);
    await until(() => w.configs.length === 1, "the renamed save");
    expect(w.configs[0]?.config.expose).toBe("all");
    expect(w.configs[0]?.why).toBe("changed");
    writeFileSync(w.path, "expose: all\n");
    writeFileSync(w.path, "expose: lazy\n");
    await until(() => w.configs.length === 2, "the in-place write");
    expect(w.configs[1]?.config.expose).toBe("lazy");
    writeFileSync(w.path, "expose: lazy\n");
    // A later, different edit arrives alone: the identical save in between produced nothing.
    writeFileSync(w.path, "expose: lazy\nconnect_timeout: 5s\n");
    await until(() => w.configs.length === 3, "the next edit");
    expect(w.configs[2]?.config.connect_timeout).toBe(5000);
    expect(w.errors).toEqual([]);
  });

  it("reports an invalid edit once, in one line, and applies the next valid one", async () => {
    const w = setup("expose: lazy\n");
    writeFileSync(w.path, "expose: lazy\nservers: {a: {}}\nconnect_timeout: soon\n");
    await until(() => w.errors.length === 1, "the error");
    expect(w.errors[0]).not.toContain("\n");
    expect(w.errors[0]).toMatch(/^mcphub\.yaml: .*servers\.a.*\(and 1 more: .*connect_timeout.*\); keeping the running config$/);
    // Polls and events for the same bad content do not repeat the line.
    await new Promise((r) => setTimeout(r, 500));
    expect(w.errors).toHaveLength(1);
    writeFileSync(w.path, "expose: all\n");
    await until(() => w.configs.length === 1, "the fixed config");
    expect(w.configs[0]?.config.expose).toBe("all");
  });

  it("reload() re-reads and re-applies on demand (SIGHUP), even when nothing changed", async () => {
    const w = setup("expose: lazy\n");
    w.watcher.reload();
    await until(() => w.configs.length === 1, "the forced reload");
    expect(w.configs[0]?.why).toBe("signal");
  });
});
