// HAProxy (Debian's haproxy) in front of several `mcphub up` replicas, in the foreground on an
// ephemeral port, with the session strategy docs/team.md describes: round robin for new sessions,
// then affinity on the Mcp-Session-Id the replica answered with (a stick table keyed by the
// header). Skips with a reason when haproxy is not installed.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

export interface Balancer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export function haproxyMissing(): string | undefined {
  const r = spawnSync("haproxy", ["-v"], { encoding: "utf8" });
  return r.status === 0 ? undefined : "haproxy is not installed; .ci/run installs Debian's haproxy";
}


/** The haproxy.cfg for replicas at these ports (docs/team.md shows the same one). */
export interface BalancerOptions {
  /** `option forwardfor`: the client's address in X-Forwarded-For (docs/team.md, trusted_proxies). */
  forwardfor?: boolean;
}

export function haproxyConfig(port: number, replicas: number[], opts: BalancerOptions = {}): string {
  return [
    "global",
    "  log stderr format raw local0 err",
    "defaults",
    "  mode http",
    "  timeout connect 5s",
    "  timeout client 10m",
    "  timeout server 10m",
    "  timeout check 3s",
    "frontend mcp",
    `  bind 127.0.0.1:${port}`,
    "  default_backend mcphub",
    "backend mcphub",
    "  balance roundrobin",
    "  stick-table type string len 128 size 100k expire 30m",
    "  stick match req.hdr(mcp-session-id)",
    "  stick store-response res.hdr(mcp-session-id)",
    // A replica that stops answering /healthz is taken out within two seconds; a request that
    // finds it dead before that (refused, or an empty answer) is tried on another replica.
    "  option httpchk",
    `  http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host 127.0.0.1:${port}`,
    "  retries 2",
    "  retry-on conn-failure empty-response",
    "  option redispatch",
    ...(opts.forwardfor ? ["  option forwardfor"] : []),
    ...replicas.map((p, i) => `  server r${i + 1} 127.0.0.1:${p} check inter 500ms fall 3 rise 1`),
    "",
  ].join("\n");
}

export async function startHaproxy(dir: string, replicas: number[], port: number, opts: BalancerOptions = {}): Promise<Balancer> {
  const cfg = join(dir, `haproxy-${port}.cfg`);
  writeFileSync(cfg, haproxyConfig(port, replicas, opts));
  const child: ChildProcess = spawn("haproxy", ["-db", "-f", cfg], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited ${child.exitCode}: ${err}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once("error", () => resolve(true)); // the port is taken: haproxy has bound it
      s.listen(port, "127.0.0.1", () => s.close(() => resolve(false)));
    });
    if (up) break;
    if (Date.now() > deadline) throw new Error(`haproxy did not bind ${port}: ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
