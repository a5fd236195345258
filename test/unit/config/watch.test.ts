// Watching the config file: saves by rename and in place are picked up (debounced), identical
// content is ignored, an invalid edit is one error line per distinct content, and reload() (SIGHUP)
// re-applies on demand. A save in progress (truncate, pause, write) is applied only once the
// content stops changing; a complete file that would empty the config is held until it is saved
// again or SIGHUP confirms it.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/schema.js";
import { readConfigState, watchConfig, type ConfigWatcher } from "../../../src/config/watch.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1600; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

function setup(initial: string, extra: { running?: () => Config; settleMs?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "mcphub-watch-"));
  const path = join(dir, "mcphub.yaml");
  writeFileSync(path, initial);
  const configs: { config: Config; why: string }[] = [];
  const errors: string[] = [];
  const held: string[] = [];
  const watcher: ConfigWatcher = watchConfig({
    path,
    label: "mcphub.yaml",
    debounceMs: 50,
    pollMs: 200,
    settleMs: extra.settleMs ?? 150,
    ...(extra.running ? { running: extra.running } : {}),
    onConfig: (config, why) => configs.push({ config, why }),
    onError: (m) => errors.push(m),
    onHold: (m) => held.push(m),
  });
  cleanups.push(() => {
    watcher.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, path, configs, errors, held, watcher };
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

  it("a truncate-pause-write save is applied once, as its final content, never as the empty file", async () => {
    const w = setup("expose: lazy\n", { settleMs: 400 });
    writeFileSync(w.path, "");
    // Longer than the debounce (50 ms), shorter than the settle period (400 ms).
    await new Promise((r) => setTimeout(r, 150));
    writeFileSync(w.path, "expose: all\n");
    await until(() => w.configs.length === 1, "the finished save");
    await new Promise((r) => setTimeout(r, 600));
    expect(w.configs.map((c) => c.config.expose)).toEqual(["all"]);
    expect(w.held).toEqual([]);
    expect(w.errors).toEqual([]);
  });

  it("holds an empty file until it is saved again; a poll of the same save does not count as a second one", async () => {
    const w = setup("expose: lazy\n");
    writeFileSync(w.path, "# nothing here yet\n\n");
    await until(() => w.held.length === 1, "the held line");
    expect(w.held[0]).toBe(
      "mcphub.yaml is empty; not applied, in case it is a save still in progress: save the file again (unchanged) or send SIGHUP to apply it; keeping the running config",
    );
    // Several poll intervals (200 ms) of the same file: still held, said once.
    await new Promise((r) => setTimeout(r, 700));
    expect(w.configs).toEqual([]);
    expect(w.held).toHaveLength(1);
    writeFileSync(w.path, "# nothing here yet\n\n");
    await until(() => w.configs.length === 1, "the confirmed empty config");
    expect(w.configs[0]?.why).toBe("confirmed");
  });

  it("holds an edit that removes every server or every agent of the running config; SIGHUP applies it", async () => {
    const running = { current: undefined as Config | undefined };
    const initial = "servers:\n  a: {command: x}\n  b: {command: y}\nagents:\n  alpha: {type: claude}\n";
    const w = setup(initial, { running: () => running.current as Config });
    const { parseConfigText } = await import("../../../src/config/load.js");
    running.current = parseConfigText(initial, "yaml");
    writeFileSync(w.path, "agents:\n  alpha: {type: claude}\n");
    await until(() => w.held.length === 1, "the held line for servers");
    expect(w.held[0]).toMatch(/^mcphub\.yaml would remove every server \(a, b\); not applied/);
    writeFileSync(w.path, "servers:\n  a: {command: x}\n");
    await until(() => w.held.length === 2, "the held line for agents");
    expect(w.held[1]).toMatch(/^mcphub\.yaml would remove every agent \(alpha\); not applied/);
    expect(w.configs).toEqual([]);
    w.watcher.reload();
    await until(() => w.configs.length === 1, "the SIGHUP");
    expect(w.configs[0]?.why).toBe("signal");
    expect(Object.keys(w.configs[0]?.config.agents ?? {})).toEqual([]);
    // Removing some servers is an ordinary edit.
    running.current = parseConfigText(initial, "yaml");
    writeFileSync(w.path, "servers:\n  a: {command: x}\nagents:\n  alpha: {type: claude}\n");
    await until(() => w.configs.length === 2, "the partial removal");
    expect(w.held).toHaveLength(2);
  });

  it("a reading's stamp belongs to the text it read, even when a save lands during the read", async () => {
    // The read runs on the thread pool while this thread writes: with a single stat before the
    // read, most of these readings paired the new text with the old file's size and times, and
    // the next reading of the same save then looked like a second save (a false "confirmed").
    const dir = mkdtempSync(join(tmpdir(), "mcphub-watch-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "mcphub.yaml");
    const texts = ["servers:\n  a: {command: x}\n", "agents:\n  alpha: {type: claude}\n"];
    writeFileSync(path, texts[0] as string);
    let mismatched = 0;
    for (let i = 0; i < 400; i++) {
      const reading = readConfigState(path);
      // Let the read reach the thread pool (a varying number of turns), then save.
      for (let turn = 0; turn < i % 4; turn++) await new Promise((r) => setImmediate(r));
      writeFileSync(path, texts[(i + 1) % 2] as string);
      const got = await reading;
      const size = Number(got.stamp.split(":")[2]);
      if (size !== Buffer.byteLength(got.text)) mismatched++;
    }
    expect(mismatched).toBe(0);
  });
});
