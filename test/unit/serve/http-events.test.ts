// The lean transport's event log: ids that name their stream, replay after an id, forgetting,
// and a per-session bound that drops the oldest events first.
import { describe, expect, it } from "vitest";
import { EventLog, parseEventId } from "../../../src/serve/http/transport/events.js";

describe("EventLog", () => {
  it("replays a stream's events after a given id, oldest first, and only that stream's", () => {
    const log = new EventLog();
    const prime = log.nextId("p1");
    const a = log.nextId("p1");
    log.append("p1", a, "A");
    const other = log.nextId("g");
    log.append("g", other, "G");
    const b = log.nextId("p1");
    log.append("p1", b, "B");
    const at = parseEventId(prime);
    expect(at?.stream).toBe("p1");
    expect(log.after("p1", at?.seq ?? -1)).toEqual([{ id: a, data: "A" }, { id: b, data: "B" }]);
    expect(log.after("p1", parseEventId(a)?.seq ?? -1)).toEqual([{ id: b, data: "B" }]);
    expect(log.after("g", 0)).toEqual([{ id: other, data: "G" }]);
  });

  it("forgets a stream at once, and keeps a completed one for its resume", () => {
    const log = new EventLog();
    const id = log.nextId("p1");
    log.append("p1", id, "x");
    log.markComplete("p1");
    expect(log.isComplete("p1")).toBe(true);
    log.forget("p1");
    expect(log.has("p1")).toBe(false);
    expect(log.after("p1", 0)).toEqual([]);
  });

  it("drops the oldest events when over its bounds, across streams", () => {
    const log = new EventLog({ events: 3, bytes: 1000 });
    const ids = ["p1", "p2", "p1", "p2", "p1"].map((s, i) => {
      const id = log.nextId(s);
      log.append(s, id, `e${i}`);
      return id;
    });
    expect([...log.after("p1", 0), ...log.after("p2", 0)].map((e) => e.data).sort()).toEqual(["e2", "e3", "e4"]);
    expect(log.after("p1", 0).map((e) => e.id)).toEqual([ids[2], ids[4]]);
    const bytes = new EventLog({ events: 100, bytes: 10 });
    for (let i = 0; i < 5; i++) bytes.append("g", bytes.nextId("g"), "12345");
    expect(bytes.after("g", 0).map((e) => e.data)).toEqual(["12345", "12345"]);
  });

  it("stays bounded when many short streams are forgotten while one lives on", () => {
    const log = new EventLog({ events: 50, bytes: 10_000 });
    log.append("g", log.nextId("g"), "kept");
    for (let i = 0; i < 5000; i++) {
      const s = `p${i}`;
      log.append(s, log.nextId(s), "x");
      log.forget(s);
    }
    expect(log.after("g", 0).map((e) => e.data)).toEqual(["kept"]);
    expect((log as unknown as { order: unknown[] }).order.length).toBeLessThan(200);
  });

  it("parses only <stream>.<seq> ids", () => {
    expect(parseEventId("p12.34")).toEqual({ stream: "p12", seq: 34 });
    for (const bad of ["", "p12", ".3", "p1.x", "p1.-2", "p1.1.5x"]) expect(parseEventId(bad)).toBeUndefined();
  });
});
