import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { callRecord, DAY_MS, pruneTelemetry, queryStats, Telemetry, type CallRecord } from "../../../src/telemetry/index.js";

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "mcphub-telemetry-"));
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const dayFile = (ts: number) => join(dataDir, "telemetry", `calls-${new Date(ts).toISOString().slice(0, 10)}.ndjson`);

function rec(over: Partial<CallRecord> = {}): CallRecord {
  return {
    ts: Date.UTC(2026, 10, 20, 12),
    agent: "claude",
    server: "github",
    tool: "search_issues",
    namespaced: "github__search_issues",
    via: "call_tool",
    duration_ms: 10,
    ok: true,
    args_bytes: 2,
    result_bytes: 100,
    est_tokens: 26,
    ...over,
  };
}

describe("Telemetry writer", () => {
  it("creates a 0700 directory and 0600 day files, one valid JSON line per record", async () => {
    const t = Telemetry.open({ dataDir });
    t.record(rec());
    t.record(rec({ ok: false, error_class: "timeout" }));
    await t.close();
    expect(statSync(join(dataDir, "telemetry")).mode & 0o777).toBe(0o700);
    const file = dayFile(rec().ts);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      [rec().ts, "github", "search_issues", "github__search_issues", "claude", "call_tool", true, 10, 2, 100, 26],
      [rec().ts, "github", "search_issues", "github__search_issues", "claude", "call_tool", false, 10, 2, 100, 26, "timeout"],
    ]);
  });

  it("tightens an existing telemetry dir and day file to 0700/0600", async () => {
    mkdirSync(join(dataDir, "telemetry"), { mode: 0o755 });
    writeFileSync(dayFile(rec().ts), "", { mode: 0o644 });
    const t = Telemetry.open({ dataDir });
    t.record(rec());
    await t.close();
    expect(statSync(join(dataDir, "telemetry")).mode & 0o777).toBe(0o700);
    expect(statSync(dayFile(rec().ts)).mode & 0o777).toBe(0o600);
  });

  it("never records argument or result values (canary), nor free-text error messages", async () => {
    const canary = "CANARY-7f3a9c-secret-value";
    const args = { query: canary, token: canary };
    const result = { content: [{ type: "text", text: `found ${canary}` }] };
    // A caller that tries to hand values over: extra properties are not part of the record.
    const smuggled = {
      ...callRecord({
        agent: "claude",
        server: "github",
        tool: "search_issues",
        namespaced: "github__search_issues",
        via: "call_tool",
        duration_ms: 5,
        ok: false,
        error_class: `upstream said: ${canary}`,
        args_bytes: JSON.stringify(args).length,
        result_bytes: JSON.stringify(result).length,
      }),
      arguments: args,
      result,
    } as CallRecord;
    const t = Telemetry.open({ dataDir });
    t.record(smuggled);
    await t.close();
    const files = readdirSync(join(dataDir, "telemetry"));
    expect(files).toHaveLength(1);
    const text = readFileSync(join(dataDir, "telemetry", files[0] as string), "utf8");
    expect(text).not.toContain(canary);
    expect(text).not.toContain("upstream said");
    const report = await queryStats(dataDir, { recent: 1 });
    expect(report.recent?.[0]?.error_class).toBe("error");
    expect(report.totals.bytes_in).toBe(JSON.stringify(args).length);
    expect(JSON.stringify(report)).not.toContain(canary);
  });

  it("writes each record to the file of its own UTC day", async () => {
    const d1 = Date.UTC(2026, 10, 20, 23, 59, 59, 999);
    const d2 = d1 + 1;
    const t = Telemetry.open({ dataDir });
    t.record(rec({ ts: d1 }));
    t.record(rec({ ts: d2 }));
    t.record(rec({ ts: d1 }));
    await t.close();
    expect(readdirSync(join(dataDir, "telemetry")).sort()).toEqual(["calls-2026-11-20.ndjson", "calls-2026-11-21.ndjson"]);
    expect(readFileSync(dayFile(d1), "utf8").trim().split("\n")).toHaveLength(2);
    expect(readFileSync(dayFile(d2), "utf8").trim().split("\n")).toHaveLength(1);
  });

  it("keeps names with quotes, newlines and non-ASCII on one line and reads them back", async () => {
    const t = Telemetry.open({ dataDir });
    t.record(rec({ server: "wéird", tool: 'say "hi"\nthere', namespaced: 'wéird__say "hi"\nthere', agent: "ägent" }));
    await t.close();
    expect(readFileSync(dayFile(rec().ts), "utf8").trim().split("\n")).toHaveLength(1);
    const r = await queryStats(dataDir, { tools: true, recent: 1 });
    expect(r.tools?.[0]).toMatchObject({ server: "wéird", tool: 'say "hi"\nthere', namespaced: 'wéird__say "hi"\nthere' });
    expect(r.recent?.[0]?.agent).toBe("ägent");
  });

  it("counts records after close as dropped and never throws into the caller", async () => {
    const t = Telemetry.open({ dataDir });
    await t.close();
    expect(() => t.record(rec())).not.toThrow();
    expect(t.dropped).toBe(1);
  });

  it("survives its directory disappearing: records are dropped, the caller is unaffected", async () => {
    const t = Telemetry.open({ dataDir });
    t.record(rec());
    await t.flush();
    rmSync(join(dataDir, "telemetry"), { recursive: true, force: true });
    // The open descriptor still accepts the write for the same day; a new day cannot be opened.
    t.record(rec({ ts: rec().ts + DAY_MS }));
    await t.close();
    expect(t.dropped).toBe(1);
  });

  it("8 processes appending 1,000 records each at once lose and tear nothing", async () => {
    const child = join(import.meta.dirname, "append-child.ts");
    const cwd = join(import.meta.dirname, "..", "..", "..");
    const runs = Array.from({ length: 8 }, (_, id) =>
      new Promise<void>((resolve, reject) => {
        const p = spawn(process.execPath, ["--import", "tsx", child, dataDir, String(id), "1000"], { cwd, stdio: ["ignore", "ignore", "pipe"] });
        let err = "";
        p.stderr.on("data", (d: Buffer) => (err += d.toString()));
        p.on("error", reject);
        p.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`child ${id} exited ${code}: ${err}`))));
      }),
    );
    await Promise.all(runs);
    const lines = readdirSync(join(dataDir, "telemetry"))
      .flatMap((f) => readFileSync(join(dataDir, "telemetry", f), "utf8").split("\n"))
      .filter((l) => l !== "");
    expect(lines).toHaveLength(8000);
    const perWriter = new Map<string, number[]>();
    for (const line of lines) {
      const r = JSON.parse(line) as [number, string, string, string, string, string, boolean, number];
      const seen = perWriter.get(r[1]) ?? [];
      seen.push(r[7]);
      perWriter.set(r[1], seen);
    }
    expect(perWriter.size).toBe(8);
    for (const [, durations] of perWriter) {
      // Each writer's records are all there, in its own order.
      expect(durations).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    }
    const report = await queryStats(dataDir, {});
    expect(report.totals.calls).toBe(8000);
    expect(report.totals.errors).toBe(800);
  }, 120_000);
});

describe("retention", () => {
  it("prunes day files wholly older than the retention window, keeps the rest and foreign files", async () => {
    const dir = join(dataDir, "telemetry");
    mkdirSync(dir, { recursive: true });
    const now = Date.UTC(2026, 10, 30, 10);
    for (const day of ["2026-10-30", "2026-10-31", "2026-11-01", "2026-11-29", "2026-11-30"]) {
      writeFileSync(join(dir, `calls-${day}.ndjson`), "");
    }
    writeFileSync(join(dir, "notes.txt"), "");
    const removed = await pruneTelemetry(dataDir, { retentionDays: 30, now });
    expect(removed.sort()).toEqual(["calls-2026-10-30.ndjson"]);
    expect(readdirSync(dir).sort()).toEqual(["calls-2026-10-31.ndjson", "calls-2026-11-01.ndjson", "calls-2026-11-29.ndjson", "calls-2026-11-30.ndjson", "notes.txt"]);
    expect(await pruneTelemetry(dataDir, { retentionDays: 1, now })).toEqual([
      "calls-2026-10-31.ndjson",
      "calls-2026-11-01.ndjson",
    ]);
  });

  it("the writer prunes on open with its configured retention", async () => {
    const dir = join(dataDir, "telemetry");
    mkdirSync(dir, { recursive: true });
    const old = new Date(Date.now() - 5 * DAY_MS).toISOString().slice(0, 10);
    const recent = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);
    writeFileSync(join(dir, `calls-${old}.ndjson`), "");
    writeFileSync(join(dir, `calls-${recent}.ndjson`), "");
    const t = Telemetry.open({ dataDir, retentionDays: 3 });
    await t.close();
    expect(readdirSync(dir)).toEqual([`calls-${recent}.ndjson`]);
  });

  it("rejects a non-positive retention", () => {
    expect(() => Telemetry.open({ dataDir, retentionDays: 0 })).toThrow(/positive/);
  });
});
