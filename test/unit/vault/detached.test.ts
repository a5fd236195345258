import { readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DetachedJournal, FINISHED_GRACE_MS, VaultTamperedError, type DetachedRecord } from "../../../src/vault/index.js";
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

  it("keeps the task fields: origin, ttl, poll interval, status message, the downstream task, a JSON-RPC error, cancellation", async () => {
    const { journal, dataDir } = await openJournal();
    const t0 = Date.now();
    const task = { origin: "task", ttl: 30_000, pollInterval: 500, updated: t0 + 1, statusMessage: "Gathering sources...", downstreamTask: "d-1" } as const;
    const pending: DetachedRecord = { ...record("t1", t0), ...task, state: "pending" };
    await journal.write(pending);
    expect(await journal.get("t1")).toEqual(pending);
    const failed: DetachedRecord = {
      ...record("t2", t0),
      ...task,
      state: "failed",
      error: "URL elicitation required",
      finished: t0 + 2,
      rpcError: { code: -32042, message: "URL elicitation required", data: { elicitations: [{ url: "https://example.com" }] } },
    };
    await journal.write(failed);
    const cancelled: DetachedRecord = { ...record("t3", t0), ...task, origin: "detach", state: "cancelled", finished: t0 + 3 };
    await journal.write(cancelled);
    const { journal: reopened } = await openJournal(dataDir);
    expect(await reopened.get("t2")).toEqual(failed);
    expect(await reopened.get("t3")).toEqual(cancelled);
    await expect(journal.write({ ...record("t4", t0), origin: "other" } as unknown as DetachedRecord)).rejects.toThrow();
    await expect(journal.write({ ...record("t5", t0), ttl: 0 })).rejects.toThrow();
  });

  it("with a ttl: expires ttl after the start, never while it runs, and keeps a late finish for a grace period", async () => {
    const { journal } = await openJournal();
    const t0 = Date.now();
    const ttl = 2 * FINISHED_GRACE_MS;
    await journal.write({ ...record("early", t0), ttl, state: "done", finished: t0 + 100, resultJson: "{}" });
    await journal.write({ ...record("late", t0), ttl, state: "done", finished: t0 + ttl + 5_000, resultJson: "{}" });
    await journal.write({ ...record("running", t0), ttl });
    await journal.write({ ...record("orphan", t0, DEAD_PID), ttl });
    // ttl, not result_retention (60 s here), decides; a result is readable at least FINISHED_GRACE_MS.
    expect(await journal.get("early", t0 + ttl - 1)).toBeDefined();
    expect(await journal.get("early", t0 + ttl)).toBeUndefined();
    expect(await journal.get("late", t0 + ttl + 5_000 + FINISHED_GRACE_MS - 1)).toBeDefined();
    expect(await journal.get("late", t0 + ttl + 5_000 + FINISHED_GRACE_MS)).toBeUndefined();
    expect(await journal.get("running", t0 + 100 * ttl)).toBeDefined();
    expect(await journal.get("orphan", t0 + ttl - 1)).toBeDefined();
    expect(await journal.get("orphan", t0 + ttl)).toBeUndefined();
    expect(await journal.prune(t0 + ttl)).toBe(2);
    await journal.write({ ...record("short", t0), ttl: 1_000, state: "done", finished: t0 + 500, resultJson: "{}" });
    expect(await journal.get("short", t0 + 500 + FINISHED_GRACE_MS - 1)).toBeDefined();
  });

  it("lists one agent's live records, newest first, without expired or tampered ones", async () => {
    const { journal, dataDir } = await openJournal();
    const t0 = Date.now();
    await journal.write({ ...record("old", t0 - 2_000), state: "done", finished: t0, resultJson: "{}" });
    await journal.write({ ...record("new", t0), ttl: 5_000 });
    await journal.write({ ...record("mid", t0 - 1_000), state: "cancelled", finished: t0 });
    await journal.write({ ...record("theirs", t0), agent: "b" });
    await journal.write({ ...record("gone", t0 - 100_000, DEAD_PID), ttl: 1_000 });
    await journal.write({ ...record("bad", t0) });
    const bad = join(dataDir, "vault", "detached", "bad.rec");
    const bytes = await readFile(bad);
    bytes[24]! ^= 1;
    await writeFile(bad, bytes);
    expect((await journal.list("a")).map((r) => r.callId)).toEqual(["new", "mid", "old"]);
    expect((await journal.list("b")).map((r) => r.callId)).toEqual(["theirs"]);
    expect((await journal.list()).map((r) => r.callId)).toEqual(["new", "theirs", "mid", "old"]);
    expect(await journal.stats()).toEqual({ count: 4, pending: 2 });
  });
});
