// What a confirmation shows of a call's arguments, and what the audit trail keeps (never values).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_SUMMARY_BYTES, summariseArguments } from "../../../src/guard/summary.js";
import { encodeAudit, queryAudit, Telemetry, type AuditRecord } from "../../../src/telemetry/index.js";
import { pruneTelemetry, DAY_MS } from "../../../src/telemetry/files.js";

describe("summariseArguments", () => {
  it("redacts values under secret-looking keys and credential shapes inside strings", () => {
    const s = summariseArguments({
      path: "/srv/data",
      password: "hunter2hunter2",
      nested: { apiKey: "abc123456", note: "use ghp_0123456789abcdefghijABCDEFGHIJ0123 here" },
      header: "Authorization: Bearer abcdefghijklmnop",
    });
    expect(s).toContain('"path":"/srv/data"');
    expect(s).toContain('"password":"[redacted]"');
    expect(s).toContain('"apiKey":"[redacted]"');
    expect(s).not.toMatch(/hunter2|abc123456|ghp_0123|abcdefghijklmnop/);
  });
  it("stays bounded whatever the arguments", () => {
    const big = { list: Array.from({ length: 1000 }, (_, i) => `item ${i}`), text: "x".repeat(100_000), deep: { a: { b: { c: { d: 1 } } } } };
    const s = summariseArguments(big);
    expect(Buffer.byteLength(s)).toBeLessThanOrEqual(MAX_SUMMARY_BYTES);
    expect(s).toContain("(+994 more)");
    expect(s).toContain("(100000 characters)");
    expect(summariseArguments({})).toBe("(none)");
  });
});

describe("audit records", () => {
  // A recent day, so the writer's own pruning (30 days from now) keeps every file of the test.
  const day = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const base: AuditRecord = { ts: day + 12 * 3_600_000, event: "refused", agent: "a", server: "s", tool: "t", namespaced: "s__t", reason: "denied", rule: "agents.a.policy.deny[0]", via: "mount" };

  it("keep exactly the known fields, each of its expected shape", () => {
    const withExtra = { ...base, arguments: { secret: "v" }, reason: "denied because password=hunter2" } as unknown as AuditRecord;
    const line = encodeAudit(withExtra) as string;
    expect(JSON.parse(line)).toEqual({ ts: base.ts, event: "refused", agent: "a", server: "s", tool: "t", namespaced: "s__t", rule: "agents.a.policy.deny[0]", via: "mount" });
    expect(encodeAudit({ ...base, event: "exploded" as AuditRecord["event"] })).toBeUndefined();
  });

  it("are written beside the call records, read back by window, and pruned with them", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "mcphub-audit-"));
    try {
      const t = Telemetry.open({ dataDir });
      t.audit(base);
      t.audit({ ...base, ts: base.ts + 1000, event: "approved", agent: "" });
      t.audit({ ...base, ts: base.ts - 3 * DAY_MS });
      await t.close();
      expect(readdirSync(join(dataDir, "telemetry")).filter((f) => f.startsWith("audit-")).length).toBe(2);
      const r = await queryAudit(dataDir, { sinceMs: DAY_MS, now: base.ts + 2000 });
      expect(r.counts).toEqual({ refused: 1, approved: 1 });
      expect(r.recent.map((x) => x.event)).toEqual(["approved", "refused"]);
      await pruneTelemetry(dataDir, { now: base.ts, retentionDays: 2 });
      const today = `audit-${new Date(day).toISOString().slice(0, 10)}.ndjson`;
      expect(readdirSync(join(dataDir, "telemetry")).sort()).toEqual([today]);
      expect(readFileSync(join(dataDir, "telemetry", today), "utf8").split("\n").filter(Boolean)).toHaveLength(2);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
