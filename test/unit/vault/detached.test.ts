import { readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DetachedJournal, VaultTamperedError, type DetachedRecord } from "../../../src/vault/index.js";
import { modeOf, removeTempDirs, tempDataDir, vaultEnv } from "./helpers.js";

afterAll(removeTempDirs);

const RETENTION = 60_000;
/** A pid that cannot belong to a live process (above the kernel's pid_max ceiling). */
const DEAD_PID = 2 ** 22 + 4321;

function record(callId: string, started: number, pid = process.pid): DetachedRecord {
  return { callId, server: "s", tool: "t", namespaced: "s__t", agent: "a", started, owner: { pid, instance: "inst-1" }, state: "pending" };
}

async function openJournal(dataDir?: string) {
  const dir = dataDir ?? (await tempDataDir());
  return { dataDir: dir, journal: await DetachedJournal.open({ dataDir: dir, retentionMs: RETENTION, env: vaultEnv(dir) }) };
}

describe("DetachedJournal", () => {
  it("records pending → done and survives a reopen (restart)", async () => {
    const { journal, dataDir } = await openJournal();
    const now = Date.now();
    await journal.write(record("c1", now));
    expect(await journal.get("c1")).toMatchObject({ state: "pending", owner: { pid: process.pid } });
    const done: DetachedRecord = { ...record("c1", now), state: "done", finished: now + 5, resultJson: '{"content":[{"type":"text","text":"ok ✓"}]}' };
    await journal.write(done);
    const { journal: reopened } = await openJournal(dataDir);
    expect(await reopened.get("c1")).toEqual(done);
    expect(await reopened.get("unknown")).toBeUndefined();
    expect(await modeOf(join(dataDir, "vault", "detached"))).toBe(0o700);
    expect(await modeOf(join(dataDir, "vault", "detached", "c1.rec"))).toBe(0o600);
    expect((await readFile(join(dataDir, "vault", "detached", "c1.rec"))).includes("ok ✓")).toBe(false);
  });

  it("records failures", async () => {
    const { journal } = await openJournal();
    const failed: DetachedRecord = { ...record("c2", 1000), state: "failed", error: "downstream timed out", finished: Date.now() };
    await journal.write(failed);
    expect(await journal.get("c2")).toEqual(failed);
  });

  it("expires finished records after retention and dead-owner pending ones; keeps live pending ones", async () => {
    const { journal, dataDir } = await openJournal();
    const t0 = Date.now();
    await journal.write({ ...record("done", t0), state: "done", finished: t0, resultJson: "{}" });
    await journal.write(record("live-pending", t0));
    await journal.write(record("dead-pending", t0, DEAD_PID));
    const later = t0 + RETENTION;
    expect(await journal.get("done", later)).toBeUndefined();
    expect(await journal.get("live-pending", later)).toBeDefined();
    expect(await journal.get("dead-pending", later - 1)).toBeDefined();
    expect(await journal.get("dead-pending", later)).toBeUndefined();
    expect(await journal.prune(later)).toBe(2);
    expect(await readdir(join(dataDir, "vault", "detached"))).toEqual(["live-pending.rec"]);
  });

  it("detects tampering and records moved to another callId", async () => {
    const { journal, dataDir } = await openJournal();
    await journal.write(record("a", Date.now()));
    await journal.write(record("b", Date.now()));
    const dir = join(dataDir, "vault", "detached");
    await rename(join(dir, "a.rec"), join(dir, "b.rec"));
    await expect(journal.get("b")).rejects.toBeInstanceOf(VaultTamperedError);
    await journal.write(record("c", Date.now()));
    const bytes = await readFile(join(dir, "c.rec"));
    bytes[20]! ^= 1;
    await writeFile(join(dir, "c.rec"), bytes);
    await expect(journal.get("c")).rejects.toBeInstanceOf(VaultTamperedError);
  });

  it("validates records on write", async () => {
    const { journal } = await openJournal();
    await expect(journal.write({ ...record("../x", 1) })).rejects.toThrow(/invalid callId/);
    await expect(journal.write({ ...record("x", 1), state: "done" } as unknown as DetachedRecord)).rejects.toThrow();
  });
});
