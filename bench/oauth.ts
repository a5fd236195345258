// What OAuth costs a remote downstream, side by side in one run.
//   npx tsx bench/oauth.ts [--calls 2000]
// `whoami` is called over streamable HTTP on the local OAuth fixture (test/fixtures/oauth-server.ts)
// through mcphub's own downstream session: (a) an open server, no OAuth in the gateway; (b) the
// same open server with the gateway's OAuthManager (every remote request passes the signed fetch,
// which finds no sign-in); (c) an OAuth-protected server, signed in (the token is read from the
// vault and added to each request). Then the one-off costs: a refresh round trip, and reading the
// encrypted record cold (first request of a process) vs warm.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signIn } from "../src/auth/login.js";
import { OAuthManager } from "../src/auth/manager.js";
import { validateConfig, type ServerConfig } from "../src/config/index.js";
import { openSession, type Session } from "../src/downstream/session.js";
import { OAuthStore } from "../src/vault/oauth.js";
import { VaultSecretResolver } from "../src/vault/resolver.js";
import { approveInBrowser, startOAuthFixture } from "../test/fixtures/oauth-server.js";

const argv = process.argv.slice(2);
const i = argv.indexOf("--calls");
const CALLS = i >= 0 ? Number(argv[i + 1]) : 2000;

const dir = mkdtempSync(join(tmpdir(), "mcphub-bench-oauth-"));
const dataDir = join(dir, "data");
const env: NodeJS.ProcessEnv = { ...process.env, MCPHUB_DATA_DIR: dataDir, MCPHUB_KEYCHAIN: "off" };
delete env.MCPHUB_VAULT_PASSPHRASE;
delete env.MCPHUB_VAULT_PASSPHRASE_FILE;

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const cfgFor = (url: string): ServerConfig => validateConfig({ servers: { s: { url } } }).servers.s as ServerConfig;

interface Row {
  label: string;
  p50: number;
  p99: number;
  rate: number;
}

const ROUNDS = 6;

/** Rounds alternate between the paths, so warm-up and the machine's load changes hit all alike. */
async function measureAll(paths: [string, Session][]): Promise<Row[]> {
  const lat = new Map<string, number[]>(paths.map(([l]) => [l, []]));
  const time = new Map<string, number>(paths.map(([l]) => [l, 0]));
  for (const [, session] of paths) for (let k = 0; k < 100; k++) await session.client.callTool({ name: "whoami", arguments: {} });
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with a different path, so no path always runs first.
    for (const [label, session] of [...paths.slice(round % paths.length), ...paths.slice(0, round % paths.length)]) {
      const start = performance.now();
      for (let k = 0; k < CALLS / ROUNDS; k++) {
        const s = performance.now();
        await session.client.callTool({ name: "whoami", arguments: {} });
        lat.get(label)?.push(performance.now() - s);
      }
      time.set(label, (time.get(label) ?? 0) + performance.now() - start);
    }
  }
  return paths.map(([label]) => {
    const l = (lat.get(label) ?? []).sort((x, y) => x - y);
    return { label, p50: quantile(l, 0.5), p99: quantile(l, 0.99), rate: (l.length / (time.get(label) ?? 1)) * 1000 };
  });
}

const open = await startOAuthFixture({ requireAuth: false });
const guarded = await startOAuthFixture();
const secrets = new VaultSecretResolver({ dataDir, env });
const manager = new OAuthManager({ dataDir, env, secrets });
const clientInfo = { name: "bench", version: "0" };
const rows: Row[] = [];
try {
  const a = await openSession({ name: "s", cfg: cfgFor(open.mcpUrl), allServers: {}, clientInfo, timeoutMs: 30_000 });
  const b = await openSession({ name: "s", cfg: cfgFor(open.mcpUrl), allServers: {}, clientInfo, auth: manager, timeoutMs: 30_000 });
  const cfg = cfgFor(guarded.mcpUrl);
  await signIn({ server: "s", cfg, store: await manager.openStore(), secret: (r) => secrets.header(r), openUrl: async (u) => void (await approveInBrowser(u.href)) });
  const c = await openSession({ name: "s", cfg, allServers: {}, clientInfo, auth: manager, timeoutMs: 30_000 });
  rows.push(...(await measureAll([["(a) open server, no OAuth", a], ["(b) open server, OAuthManager", b], ["(c) OAuth server, signed in", c]])));
  await a.close();
  await b.close();

  // One-off costs.
  const refreshMs: number[] = [];
  for (let k = 0; k < 20; k++) {
    guarded.expireAccessTokens();
    const s = performance.now();
    await c.client.callTool({ name: "whoami", arguments: {} });
    refreshMs.push(performance.now() - s);
  }
  await c.close();
  const coldMs: number[] = [];
  const warmMs: number[] = [];
  for (let k = 0; k < 50; k++) {
    const store = await OAuthStore.open({ dataDir, env });
    let s = performance.now();
    await store.get("s");
    coldMs.push(performance.now() - s);
    s = performance.now();
    await store.get("s");
    warmMs.push(performance.now() - s);
  }
  [refreshMs, coldMs, warmMs].forEach((x) => x.sort((p, q) => p - q));

  const base = rows[0] as Row;
  const pad = (s: string, n: number) => s.padEnd(n);
  const num = (n: number, d = 3) => n.toFixed(d).padStart(8);
  process.stdout.write(`${pad(`path (sequential, ${CALLS} calls)`, 34)}  p50 ms    p99 ms   calls/s   p50 vs (a)\n`);
  for (const r of rows) process.stdout.write(`${pad(r.label, 34)}${num(r.p50)}  ${num(r.p99)}  ${r.rate.toFixed(0).padStart(8)}   ${(r.p50 / base.p50).toFixed(2).padStart(6)}\n`);
  process.stdout.write(`\none-off cost                        p50 ms    max ms\n`);
  process.stdout.write(`${pad("call with refresh (401 + refresh)", 34)}${num(quantile(refreshMs, 0.5))}  ${num(refreshMs[refreshMs.length - 1] ?? NaN)}\n`);
  process.stdout.write(`${pad("vault record, cold read", 34)}${num(quantile(coldMs, 0.5))}  ${num(coldMs[coldMs.length - 1] ?? NaN)}\n`);
  process.stdout.write(`${pad("vault record, warm read (stat)", 34)}${num(quantile(warmMs, 0.5))}  ${num(warmMs[warmMs.length - 1] ?? NaN)}\n`);
} finally {
  manager.close();
  await open.close();
  await guarded.close();
  rmSync(dir, { recursive: true, force: true });
}
