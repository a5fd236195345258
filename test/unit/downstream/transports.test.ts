// The real server-everything over each transport: stdio (our process-group transport), SSE and
// streamable HTTP (the SDK clients), with headers set on every request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Supervisor } from "../../../src/downstream/supervisor.js";
import { serverEverythingEntry, startServerEverything, type RunningServer } from "../../helpers/servers.js";
import { quietLog, textOf } from "./util.js";

describe("server-everything over every transport", () => {
  let sse: RunningServer;
  let http: RunningServer;
  let sup: Supervisor;

  beforeAll(async () => {
    [sse, http] = await Promise.all([startServerEverything("sse"), startServerEverything("streamableHttp")]);
    sup = new Supervisor({
      servers: {
        stdio: { command: process.execPath, args: [serverEverythingEntry(), "stdio"], enabled: true },
        sse: { url: sse.url, transport: "sse", headers: { "X-Test": "1" }, enabled: true },
        http: { url: http.url, headers: { "X-Test": "1" }, enabled: true },
      },
      connectTimeoutMs: 30_000,
      clientInfo: { name: "mcphub", version: "test" },
      log: quietLog,
    });
    sup.start();
  });

  afterAll(async () => {
    await sup?.close();
    await Promise.all([sse?.close(), http?.close()]);
  });

  for (const name of ["stdio", "sse", "http"]) {
    it(`connects and calls echo over ${name}`, async () => {
      const snap = await sup.waitForServer(name, { timeoutMs: 30_000 });
      expect(snap.state).toBe("ready");
      expect(snap.connected).toBe(true);
      expect(snap.tools.map((t) => t.name)).toContain("echo");
      expect(snap.serverVersion?.name).toBeTruthy();
      expect(snap.generation).toBeGreaterThanOrEqual(1);
      const result = await sup.callTool(name, "echo", { message: `hi ${name}` }, { timeoutMs: 10_000 });
      expect(textOf(result)).toBe(`Echo: hi ${name}`);
    });
  }

  it("lists resources and prompts when the server offers them", () => {
    const snap = sup.snapshot("http");
    expect(snap?.resources.length).toBeGreaterThan(0);
    expect(snap?.prompts.length).toBeGreaterThan(0);
  });

  it("reads a resource and gets a prompt through the supervisor", async () => {
    const snap = sup.snapshot("stdio");
    const resource = snap?.resources[0];
    const prompt = snap?.prompts.find((p) => !p.arguments?.some((a) => a.required));
    expect(resource && prompt).toBeTruthy();
    const read = await sup.readResource("stdio", resource!.uri, { timeoutMs: 10_000 });
    expect(read.contents.length).toBeGreaterThan(0);
    const got = await sup.getPrompt("stdio", prompt!.name, undefined, { timeoutMs: 10_000 });
    expect(got.messages.length).toBeGreaterThan(0);
  });
});
