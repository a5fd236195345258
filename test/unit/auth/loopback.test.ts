// The loopback redirect listener: only its own path, Host and state are accepted; a redirect that
// arrives before anyone waits is kept; the authorization server's error comes back as such.
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { listenLoopback, PortInUseError } from "../../../src/auth/loopback.js";

function get(port: number, path: string, host = `127.0.0.1:${port}`): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("loopback redirect listener", () => {
  it("accepts only the expected state on its own path and Host, and keeps an early redirect", async () => {
    const l = await listenLoopback(0, "linear");
    try {
      expect(l.redirectUrl).toBe(`http://127.0.0.1:${l.port}/callback`);
      l.expectState("s1");
      expect((await get(l.port, "/callback?code=c&state=other")).status).toBe(400);
      expect((await get(l.port, "/callback?code=c&state=s1", "evil.example:80")).status).toBe(421);
      expect((await get(l.port, "/elsewhere?code=c&state=s1")).status).toBe(404);
      const ok = await get(l.port, "/callback?code=the-code&state=s1");
      expect(ok.status).toBe(200);
      expect(ok.body).toContain("You can close this tab");
      expect(ok.body).not.toContain("the-code");
      expect(await l.wait(1000)).toEqual({ code: "the-code" });
      expect((await get(l.port, "/callback?code=again&state=s1")).body).toContain("already complete");
    } finally {
      await l.close();
    }
  });

  it("returns the authorization server's refusal, and times out with a clear message", async () => {
    const l = await listenLoopback(0, "x");
    try {
      l.expectState("s");
      const waiting = l.wait(10_000);
      await get(l.port, "/callback?error=access_denied&error_description=nope&state=s");
      expect(await waiting).toEqual({ error: "access_denied", description: "nope" });
    } finally {
      await l.close();
    }
    const idle = await listenLoopback(0, "x");
    try {
      await expect(idle.wait(50)).rejects.toThrow("no answer from the browser within 0s");
    } finally {
      await idle.close();
    }
  });

  it("says when a fixed port is taken", async () => {
    const a = await listenLoopback(0, "x");
    try {
      await expect(listenLoopback(a.port, "x")).rejects.toBeInstanceOf(PortInUseError);
    } finally {
      await a.close();
    }
  });
});
