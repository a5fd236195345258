// Bounded lossless results end to end: receipts, paging a 50 MB result byte-exactly under the
// client's page-chain rules, tamper detection through get_result, receipts across processes and
// restarts, detached calls across a restart, and a canary secret that appears nowhere it should not.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  doc,
  FIXTURES,
  runMcphub,
  startGateway,
  tempHome,
  text,
  waitReady,
  type GatewayClient,
  type TempHome,
} from "../helpers/gateway.js";
import { reassemble } from "../helpers/page-chain.js";

const node = process.execPath;
const RECORDER = join(FIXTURES, "recorder.mjs");
const PROGRESS = join(FIXTURES, "progress-cancel.mjs");

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

async function pageAll(gw: GatewayClient, callId: string): Promise<{ bytes: Buffer; pages: number }> {
  return reassemble((cursor) => gw.call("mcphub_get_result", { callId, cursor }), callId);
}

describe("stored results", () => {
  let home: TempHome;
  let gw: GatewayClient;
  beforeAll(async () => {
    home = tempHome();
    const cfg = home.writeConfig({
      expose: "all",
      agents: { alpha: { servers: ["rec"] }, beta: { servers: ["slow"] } },
      servers: {
        rec: { command: node, args: [RECORDER] },
        slow: { command: node, args: [PROGRESS] },
      },
    });
    gw = await startGateway(home, cfg, { agent: "alpha" });
    await waitReady(gw, ["rec"]);
  });
  afterAll(async () => {
    await gw?.close();
    home?.cleanup();
  });

  it("a small result passes through unchanged", async () => {
    const r = await gw.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 100 } });
    expect(text(r)).toBe("x".repeat(100));
  });

  it("stores a 50 MB result and a client reassembles it byte-exactly under the page-chain rules", async () => {
    const size = 50 * 1024 * 1024;
    const r = await gw.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: size } });
    const receipt = doc(r);
    expect(receipt.status).toBe("stored");
    expect(receipt).toMatchObject({ server: "rec", tool: "big", namespaced: "rec__big", downstream: "big", budgetBytes: 32 * 1024 });
    expect(receipt.namespaced).toBe(`${String(receipt.server)}__${String(receipt.tool)}`);
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(32 * 1024);
    const expected = JSON.stringify({ content: [{ type: "text", text: "x".repeat(size) }] });
    expect(receipt.originalBytes).toBe(Buffer.byteLength(expected));
    const { bytes, pages } = await pageAll(gw, String(receipt.callId));
    expect(pages).toBe(Math.ceil(Buffer.byteLength(expected) / 8192));
    expect(bytes.equals(Buffer.from(expected))).toBe(true);
  });

  it("the cursor beyond the end and unknown ids are soft states", async () => {
    const r = doc(await gw.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 40_000 } }));
    const over = doc(await gw.call("mcphub_get_result", { callId: r.callId, cursor: 10_000_000 }));
    expect(over.status).toBe("cursor_out_of_range");
    const unknown = doc(await gw.call("mcphub_get_result", { callId: "0".repeat(32), cursor: 0 }));
    expect(unknown.status).toBe("unavailable");
    const neg = await gw.call("mcphub_get_result", { callId: r.callId, cursor: -1 });
    expect(neg.isError).toBe(true);
  });

  it("a tampered stored result fails safely through get_result", async () => {
    const r = doc(await gw.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 200_000 } }));
    const file = filesUnder(join(home.dir, "data", "vault")).find((f) => f.includes(String(r.callId)));
    expect(file).toBeDefined();
    const bytes = readFileSync(file as string);
    // Inside the last chunk: the file ends with the sealed view index and its 4-byte length.
    const at = bytes.length - 4 - bytes.readUInt32BE(bytes.length - 4) - 100;
    bytes.writeUInt8(bytes.readUInt8(at) ^ 0x01, at);
    writeFileSync(file as string, bytes);
    const first = await gw.call("mcphub_get_result", { callId: r.callId, cursor: 0 });
    // The first chunk is intact and authenticates alone; the flipped one must not.
    expect(first.isError).toBeFalsy();
    const total = Number(r.originalBytes);
    const last = await gw.call("mcphub_get_result", { callId: r.callId, cursor: total - 50 });
    expect(last.isError).toBe(true);
    expect(text(last)).toMatch(/integrity/);
    expect(last.structuredContent).toBeUndefined();
  });

  it("a receipt is readable by a second process of the same agent and refused to another agent", async () => {
    const r = doc(await gw.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 100_000 } }));
    const cfg = join(home.dir, "mcphub.yaml");
    const same = await startGateway(home, cfg, { agent: "alpha" });
    const other = await startGateway(home, cfg, { agent: "beta" });
    try {
      const { bytes } = await pageAll(same, String(r.callId));
      expect(JSON.parse(bytes.toString()).content[0].text).toHaveLength(100_000);
      const refused = await other.call("mcphub_get_result", { callId: r.callId, cursor: 0 });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/out of scope/);
    } finally {
      await Promise.all([same.close(), other.close()]);
    }
  });
});

describe("receipts fit small budgets", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
  });
  afterAll(() => home?.cleanup());

  for (const budget of [32 * 1024, 900, 512]) {
    it(`budget ${budget} B: receipt and every page fit, preview is valid UTF-8`, async () => {
      const cfg = home.writeConfig(
        { expose: "lazy", response_budget: budget, servers: { rec: { command: node, args: [RECORDER] } } },
        `budget-${budget}.yaml`,
      );
      const gw = await startGateway(home, cfg);
      try {
        await waitReady(gw, ["rec"]);
        // Multi-byte characters so a careless clip would split one.
        const r = await gw.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 3 * budget, char: "é😀" } });
        expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(budget);
        const receipt = doc(r);
        expect(receipt.status).toBe("stored");
        expect(receipt.originalBytes).toBeGreaterThan(budget);
        if (typeof receipt.preview === "string") {
          expect(receipt.preview).toBe(receipt.preview.toWellFormed());
          expect(receipt.preview).not.toContain("\uFFFD");
        }
        const callId = String(receipt.callId);
        const { bytes } = await reassemble(async (cursor) => {
          const page = await gw.call("mcphub_get_result", { callId, cursor });
          expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(budget);
          return page;
        }, callId);
        const original = JSON.parse(bytes.toString("utf8")) as CallToolResult;
        expect(text(original)).toBe("é😀".repeat(Math.floor((3 * budget) / 6)));
      } finally {
        await gw.close();
      }
    });
  }

  it("verbatim and budget 0 return the full result", async () => {
    for (const extra of [{ verbatim: true }, { response_budget: 0 }]) {
      const cfg = home.writeConfig({ expose: "lazy", ...extra, servers: { rec: { command: node, args: [RECORDER] } } }, "verbatim.yaml");
      const gw = await startGateway(home, cfg);
      try {
        await waitReady(gw, ["rec"]);
        const r = await gw.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 100_000 } });
        expect(text(r)).toHaveLength(100_000);
      } finally {
        await gw.close();
      }
    }
  });
});

describe("tools that declare an output schema", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
  });
  afterAll(() => home?.cleanup());

  const BIG = join(FIXTURES, "big-output.mjs");
  const rowsTool = async (gw: GatewayClient): Promise<{ outputSchema?: unknown } | undefined> =>
    (await gw.client.listTools()).tools.find((t) => t.name === "big__rows");

  it("are advertised without it when a receipt may replace the result, so a validating client accepts the receipt", async () => {
    const cfg = home.writeConfig({ expose: "all", response_budget: "1KB", servers: { big: { command: node, args: [BIG] } } }, "schema.yaml");
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["big"]);
      const listed = await rowsTool(gw);
      expect(listed).toBeDefined();
      expect(listed?.outputSchema).toBeUndefined();
      // The SDK Client validates structured content against a listed output schema; a receipt
      // could never match the tool's own schema.
      const stored = await gw.client.callTool({ name: "big__rows", arguments: { count: 200 } });
      expect((stored.structuredContent as Record<string, unknown>).status).toBe("stored");
      const small = await gw.client.callTool({ name: "big__rows", arguments: { count: 2 } });
      expect(small.structuredContent).toEqual({ rows: [{ id: 0, label: "row 0" }, { id: 1, label: "row 1" }] });
      // The schema is still there for whoever asks.
      const described = doc(await gw.call("mcphub_describe_tool", { tool: "big__rows" }));
      expect(described.output_schema).toMatchObject({ type: "object", properties: { rows: { type: "array" } } });
    } finally {
      await gw.close();
    }
  });

  it("keep it when results always pass through unchanged (verbatim)", async () => {
    const cfg = home.writeConfig({ expose: "all", verbatim: true, servers: { big: { command: node, args: [BIG] } } }, "schema-verbatim.yaml");
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["big"]);
      expect((await rowsTool(gw))?.outputSchema).toMatchObject({ type: "object" });
      const full = await gw.client.callTool({ name: "big__rows", arguments: { count: 2000 } });
      expect((full.structuredContent as { rows: unknown[] }).rows).toHaveLength(2000);
    } finally {
      await gw.close();
    }
  });
});

describe("restarts and detached calls", () => {
  let home: TempHome;
  let cfg: string;
  beforeAll(() => {
    home = tempHome();
    cfg = home.writeConfig({
      expose: "lazy",
      servers: { rec: { command: node, args: [RECORDER] }, slow: { command: node, args: [PROGRESS] } },
    });
  });
  afterAll(() => home?.cleanup());

  it("a receipt and a finished detached result survive a restart; a call pending at the restart is unknown", async () => {
    const first = await startGateway(home, cfg);
    await waitReady(first, ["rec", "slow"]);
    const stored = doc(await first.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 80_000 } }));
    expect(stored.status).toBe("stored");
    const accepted = doc(await first.call("mcphub_call_tool", { tool: "rec__store", arguments: { key: "a", value: "b" }, detach: true }));
    expect(accepted).toMatchObject({ status: "accepted", namespaced: "rec__store" });
    expect(Number(accepted.timeoutMs)).toBeGreaterThan(0);
    let finished: CallToolResult | undefined;
    for (let i = 0; i < 200 && !finished; i++) {
      const p = await first.call("mcphub_poll_result", { callId: accepted.callId });
      if ((p.structuredContent as { status?: string } | undefined)?.status === "pending") {
        await new Promise((r) => setTimeout(r, 25));
      } else finished = p;
    }
    expect(text(finished as CallToolResult)).toBe("stored a");
    // Idempotent.
    expect(text(await first.call("mcphub_poll_result", { callId: accepted.callId }))).toBe("stored a");
    const running = doc(await first.call("mcphub_call_tool", { tool: "slow__slow", arguments: { steps: 100000 }, detach: true }));
    expect(doc(await first.call("mcphub_poll_result", { callId: running.callId })).status).toBe("pending");
    await first.close();

    const second = await startGateway(home, cfg);
    try {
      const { bytes } = await pageAll(second, String(stored.callId));
      expect(JSON.parse(bytes.toString()).content[0].text).toHaveLength(80_000);
      expect(text(await second.call("mcphub_poll_result", { callId: accepted.callId }))).toBe("stored a");
      const lost = doc(await second.call("mcphub_poll_result", { callId: running.callId }));
      expect(lost.status).toBe("unknown");
      expect(String(lost.reason).length).toBeGreaterThan(0);
      const never = doc(await second.call("mcphub_poll_result", { callId: "f".repeat(32) }));
      expect(never.status).toBe("unknown");
    } finally {
      await second.close();
    }
  });

  it("at most eight detached calls are in flight", async () => {
    const gw = await startGateway(home, cfg);
    try {
      await waitReady(gw, ["slow"]);
      for (let i = 0; i < 8; i++) {
        const a = doc(await gw.call("mcphub_call_tool", { tool: "slow__slow", arguments: { steps: 100000 }, detach: true }));
        expect(a.status).toBe("accepted");
      }
      const ninth = await gw.call("mcphub_call_tool", { tool: "slow__slow", arguments: { steps: 1 }, detach: true });
      expect(ninth.isError).toBe(true);
      expect(text(ninth)).toMatch(/too many detached calls in flight \(8 of 8\)/);
    } finally {
      await gw.close();
    }
  });
});

describe("secrets", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
  });
  afterAll(() => home?.cleanup());

  it("a canary secret reaches the downstream env and appears nowhere else", async () => {
    const canary = `canary-${createHash("sha256").update(String(Math.random())).digest("hex").slice(0, 24)}`;
    const refused = await runMcphub(home, ["vault", "set", "proj/API_KEY", canary]);
    expect(refused.code).not.toBe(0);
    const set = await runMcphub(home, ["vault", "set", "proj/API_KEY"], { input: `${canary}\n` });
    expect(set.code).toBe(0);
    const cfg = home.writeConfig({
      expose: "lazy",
      response_budget: 512,
      servers: {
        rec: { command: node, args: [RECORDER], vault: "proj" },
        locked: { command: node, args: [RECORDER], vault: "proj", vault_only: ["MISSING"], description: "Billing invoices of the project" },
      },
    });
    const gw = await startGateway(home, cfg);
    const seen: string[] = [];
    try {
      await waitReady(gw, ["rec"]);
      const r = await gw.call("mcphub_call_tool", { tool: "rec__env", arguments: { name: "API_KEY" } });
      seen.push(JSON.stringify(r));
      const env = JSON.parse(text(r)) as { set: boolean; sha256: string };
      expect(env.set).toBe(true);
      expect(env.sha256).toBe(createHash("sha256").update(canary).digest("hex"));
      // A big result goes to the vault (receipt), an error goes through the error path.
      seen.push(JSON.stringify(await gw.call("mcphub_call_tool", { tool: "rec__big", arguments: { bytes: 5000 } })));
      seen.push(JSON.stringify(await gw.call("mcphub_call_tool", { tool: "rec__nope", arguments: {} })));
      // The server whose secret is missing fails closed as `locked`, with a reason; the other works.
      let locked: { name: string; state: string; error?: string } | undefined;
      for (let i = 0; i < 200; i++) {
        const listed = doc(await gw.call("mcphub_list_servers"));
        seen.push(JSON.stringify(listed));
        locked = (listed.servers as { name: string; state: string; error?: string }[]).find((s) => s.name === "locked");
        if (locked?.state === "locked") break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(locked?.state).toBe("locked");
      expect(locked?.error).toMatch(/proj\/MISSING/);
      // Discovery names the locked server, why and what unlocks it, and is never confident.
      const resolved = doc(await gw.call("mcphub_resolve_tool", { query: "list the billing invoices" }));
      seen.push(JSON.stringify(resolved));
      expect(resolved.status).not.toBe("confident");
      expect(resolved.reason_codes).toContain("server_unavailable");
      const down = (resolved.unavailable as { server: string; state: string; reason?: string; fix?: string }[]).find((u) => u.server === "locked");
      expect(down).toMatchObject({ state: "locked", reason: expect.stringMatching(/proj\/MISSING/), fix: expect.stringMatching(/vault passphrase.*vault status/) });
      seen.push(JSON.stringify(doc(await gw.call("mcphub_stats"))));
      // Every process's argv.
      for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
        try {
          seen.push(readFileSync(`/proc/${pid}/cmdline`, "utf8"));
        } catch {
          /* process gone */
        }
      }
    } finally {
      await gw.close();
    }
    seen.push(gw.stderr());
    seen.push(readFileSync(cfg, "utf8"));
    for (const f of filesUnder(home.dir)) seen.push(readFileSync(f).toString("latin1"));
    for (const s of seen) expect(s.includes(canary)).toBe(false);
  });
});
