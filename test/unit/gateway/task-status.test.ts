// The task view of a detached-registry record: status names, the Task object, what tasks/result
// returns, and the bounds on ttl and poll interval.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { grantedTtl, pollIntervalOf, recordResult, recordState, suggestedPoll, toTask, UNKNOWN_OUTCOME } from "../../../src/gateway/tasks/index.js";
import type { DetachedRecord } from "../../../src/vault/detached.js";

const base = { callId: "c1", server: "s", tool: "t", namespaced: "s__t", agent: "a", started: 1_700_000_000_000, owner: { pid: 1, instance: "i" }, ttl: 60_000 };
const ok = JSON.stringify({ content: [{ type: "text", text: "fine" }] });
const bad = JSON.stringify({ content: [{ type: "text", text: "nope" }], isError: true });

describe("task view of a record", () => {
  it("maps states to the spec's statuses", () => {
    const at = (rec: DetachedRecord, running = false) => recordState(rec, running, { ttl: 5 });
    expect(at({ ...base, state: "pending", statusMessage: "step 1" }, true)).toMatchObject({ status: "working", statusMessage: "step 1" });
    expect(at({ ...base, state: "pending" }, false)).toMatchObject({ status: "failed", statusMessage: UNKNOWN_OUTCOME });
    expect(at({ ...base, state: "done", finished: base.started + 10, resultJson: ok })).toMatchObject({ status: "completed", updated: base.started + 10 });
    expect(at({ ...base, state: "done", finished: base.started + 10, resultJson: bad }).status).toBe("failed");
    expect(at({ ...base, state: "failed", finished: base.started + 10, error: "lost connection" })).toMatchObject({ status: "failed", statusMessage: "lost connection" });
    expect(at({ ...base, state: "cancelled", finished: base.started + 10 }).status).toBe("cancelled");
    // Older records have no ttl: the default stands in.
    const { ttl: _ttl, ...old } = base;
    expect(at({ ...old, state: "pending" }, true).ttl).toBe(5);
  });

  it("builds the Task with ISO timestamps and the callId as task id", () => {
    const t = toTask({ callId: "c1", started: base.started, updated: base.started + 1500, ttl: 60_000, pollInterval: 1000, status: "working" }, base.started + 8000);
    expect(t).toEqual({ taskId: "c1", status: "working", ttl: 60_000, createdAt: "2023-11-14T22:13:20.000Z", lastUpdatedAt: "2023-11-14T22:13:21.500Z", pollInterval: 1000 });
  });

  it("answers tasks/result with exactly what the call would have returned", () => {
    expect(recordResult({ ...base, state: "pending" }, true)).toBeUndefined();
    expect(recordResult({ ...base, state: "pending" }, false)).toEqual({ result: { content: [{ type: "text", text: UNKNOWN_OUTCOME }], isError: true } });
    expect(recordResult({ ...base, state: "done", finished: 1, resultJson: bad })).toEqual({ result: JSON.parse(bad) });
    expect(recordResult({ ...base, state: "failed", finished: 1, error: "timed out" })).toEqual({ result: { content: [{ type: "text", text: "timed out" }], isError: true } });
    const rpc = recordResult({ ...base, state: "failed", finished: 1, error: "x", rpcError: { code: -32042, message: "URL elicitation required", data: { elicitations: [] } } });
    expect(rpc && "error" in rpc && rpc.error).toBeInstanceOf(McpError);
    expect(rpc && "error" in rpc && rpc.error.code).toBe(-32042);
    expect(recordResult({ ...base, state: "cancelled", finished: 1 })).toMatchObject({ error: { code: -32602 } });
  });

  it("bounds ttl and poll interval", () => {
    expect(grantedTtl(undefined, 90_000)).toBe(90_000);
    expect(grantedTtl(null, 90_000)).toBe(90_000);
    expect(grantedTtl(10, 90_000)).toBe(1_000);
    expect(grantedTtl(30_000.7, 90_000)).toBe(30_000);
    expect(grantedTtl(10 ** 12, 90_000)).toBe(90_000);
    expect(pollIntervalOf(undefined)).toBe(1_000);
    expect(pollIntervalOf(0)).toBe(250);
    expect(pollIntervalOf(60_000)).toBe(5_000);
  });

  it("suggests polling a running task at a quarter of its age, from 100 ms up to its ceiling", () => {
    const running = { started: 0, pollInterval: 1000, status: "working" as const };
    expect(suggestedPoll(running, 0)).toBe(100);
    expect(suggestedPoll(running, 200)).toBe(100);
    expect(suggestedPoll(running, 1000)).toBe(250);
    expect(suggestedPoll(running, 3000)).toBe(750);
    expect(suggestedPoll(running, 60_000)).toBe(1000);
    expect(suggestedPoll({ ...running, status: "input_required" }, 1000)).toBe(250);
    // A downstream's own (clamped) suggestion is the ceiling.
    expect(suggestedPoll({ ...running, pollInterval: 5000 }, 60_000)).toBe(5000);
    // A finished task: the ceiling (nothing is left to poll for).
    expect(suggestedPoll({ ...running, status: "completed" }, 10)).toBe(1000);
  });
});
