// The MCP conformance suite (every server scenario of @modelcontextprotocol/conformance 0.1.13)
// run against `mcphub up` fronting our own conformance fixture, published unprefixed
// (`namespace: false`), once with every tool mounted and once in lazy mode with the server
// pinned. A scenario passes when it reports no FAILURE check (one with 0 checks passes only on
// that condition); the table of every scenario is in the failure message.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, FIXTURES, ROOT, tempHome, type TempHome } from "../helpers/gateway.js";

const node = process.execPath;
const CONFORMANCE = join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const SCENARIO_COUNT = 32;

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

interface ScenarioResult {
  scenario: string;
  passed: number;
  failed: number;
  warnings: number;
  failures: string[];
}

async function startDaemon(home: TempHome, cfg: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(node, [BIN, "--config", cfg, "up", "--listen", "127.0.0.1:0"], { env: home.env, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+\/mcp)/.exec(err);
      // The suite calls tools right after initialize, so wait until the fixture is published.
      if (m?.[1] && /conf: ready/.test(err)) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`daemon exited (${code}): ${err}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

async function runSuite(home: TempHome, url: string, outDir: string): Promise<{ results: ScenarioResult[]; output: string }> {
  const output = await new Promise<string>((resolve) => {
    const child = spawn(node, [CONFORMANCE, "server", "--url", url, "--suite", "all", "-o", outDir], { env: home.env, stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout?.on("data", (d: Buffer) => (text += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (text += d.toString()));
    child.once("close", () => resolve(text));
  });
  const results: ScenarioResult[] = [];
  for (const dir of existsSync(outDir) ? readdirSync(outDir) : []) {
    const file = join(outDir, dir, "checks.json");
    if (!existsSync(file)) continue;
    const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT/.exec(dir)?.[1] ?? dir;
    const checks = JSON.parse(readFileSync(file, "utf8")) as Check[];
    const failed = checks.filter((c) => c.status === "FAILURE");
    results.push({
      scenario,
      passed: checks.filter((c) => c.status === "SUCCESS").length,
      failed: failed.length,
      warnings: checks.filter((c) => c.status === "WARNING").length,
      failures: failed.map((c) => `${c.id}: ${c.errorMessage ?? ""}`),
    });
  }
  return { results: results.sort((a, b) => (a.scenario < b.scenario ? -1 : 1)), output };
}

function table(results: ScenarioResult[]): string {
  return results.map((r) => `${r.failed === 0 ? "pass" : "FAIL"}  ${r.scenario}  checks ${r.passed}/${r.passed + r.failed}${r.warnings ? `, ${r.warnings} warnings` : ""}${r.failures.length ? `  ${r.failures.join("; ")}` : ""}`).join("\n");
}

describe("conformance suite through mcphub up", () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome("mcphub-conformance-");
  });
  afterAll(() => home?.cleanup());

  // Eager: the daemon is awaited until the fixture is ready, also when an earlier mode cached it.
  const fixture = { command: node, args: [join(FIXTURES, "conformance-server.mjs")], namespace: false, start: "eager" };
  const modes: [string, Record<string, unknown>][] = [
    ["expose all", { expose: "all", servers: { conf: fixture } }],
    ["lazy with the tools pinned", { expose: "lazy", pin: ["conf"], servers: { conf: fixture } }],
  ];

  for (const [mode, config] of modes) {
    it(`passes all ${SCENARIO_COUNT} server scenarios (${mode})`, { timeout: 240_000 }, async () => {
      const slug = mode.replace(/\W+/g, "-");
      const cfg = home.writeConfig(config, `${slug}.yaml`);
      const daemon = await startDaemon(home, cfg);
      try {
        const { results, output } = await runSuite(home, daemon.url, join(home.dir, `out-${slug}`));
        const report = `${mode}\n${table(results)}\n\n${output.slice(-2000)}`;
        expect(results.length, report).toBe(SCENARIO_COUNT);
        expect(results.filter((r) => r.failed > 0).map((r) => r.scenario), report).toEqual([]);
        // Every scenario that defines checks ran them (a crashed scenario reports a FAILURE).
        expect(results.reduce((n, r) => n + r.passed, 0), report).toBe(44);
      } finally {
        await daemon.stop();
      }
    });
  }
});
