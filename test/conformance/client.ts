// The conformance suite's client entry (`npx conformance client --command "npx tsx
// test/conformance/client.ts"`): it drives mcphub's own downstream layer, not a separate client.
// The scenario's server becomes one configured remote server (validated by the real config
// schema) in a Supervisor with the gateway's OAuthManager, exactly as a gateway process builds
// them. When the server needs sign-in, the product's signIn() runs; only the browser step is
// replaced: the authorization URL is followed over HTTP (the suite's authorization server approves
// at once) until it redirects to mcphub's loopback listener. Then the scenario's tool is called.
//
// Usage: npx tsx test/conformance/client.ts <server-url>   (MCP_CONFORMANCE_SCENARIO names the
// scenario; MCP_CONFORMANCE_CONTEXT carries client credentials for some of them).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { OAuthManager } from "../../src/auth/manager.js";
import { signIn } from "../../src/auth/login.js";
import { validateConfig, type ServerConfig } from "../../src/config/index.js";
import { Supervisor } from "../../src/downstream/supervisor.js";
import { NeedsAuthError, NotConnectedError } from "../../src/downstream/types.js";
import { errorText } from "../../src/util/errors.js";
import { VaultSecretResolver } from "../../src/vault/resolver.js";
import { SecretStore } from "../../src/vault/secrets.js";
import { VERSION } from "../../src/version.js";

const SERVER = "conformance";
/** At most this many sign-ins per run: a server that keeps asking must not loop us. */
const MAX_SIGN_INS = 3;
// Upper bounds only (the suite runs its scenarios in parallel on a machine that may be busy).
const WAIT_MS = 60_000;
const CIMD_URL = "https://conformance-test.local/client-metadata.json";

/** What each scenario calls once connected (none: connecting and listing is the test). */
const CALLS: Record<string, { tool: string; args: Record<string, unknown> } | undefined> = {
  initialize: undefined,
  tools_call: { tool: "add_numbers", args: { a: 5, b: 3 } },
  "elicitation-sep1034-client-defaults": { tool: "test_client_elicitation_defaults", args: {} },
  "sse-retry": { tool: "test_reconnection", args: {} },
};

function log(msg: string): void {
  process.stderr.write(`[mcphub conformance] ${msg}\n`);
}

/** The server's config: what an operator would write for this kind of server. */
function serverConfig(url: string, scenario: string, context: Record<string, unknown>): Record<string, unknown> {
  if (scenario === "auth/basic-cimd") return { url, oauth: { client_metadata_url: CIMD_URL } };
  if (scenario === "auth/pre-registration") {
    return { url, oauth: { client_id: context.client_id, client_secret: "vault://conformance/CLIENT_SECRET" } };
  }
  if (scenario === "auth/client-credentials-basic") {
    return { url, oauth: { grant: "client_credentials", client_id: context.client_id, client_secret: "vault://conformance/CLIENT_SECRET" } };
  }
  if (scenario === "auth/client-credentials-jwt") {
    return {
      url,
      oauth: { grant: "client_credentials", client_id: context.client_id, private_key: "vault://conformance/PRIVATE_KEY", signing_alg: context.signing_algorithm },
    };
  }
  // Everything else: no oauth block at all; sign-in starts from the server's Bearer challenge.
  return { url };
}

/** The test-only browser: follow the authorization URL until it redirects to the loopback. */
async function approveInBrowser(url: URL): Promise<void> {
  let next = url.href;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(next, { redirect: "manual" });
    await res.body?.cancel();
    const location = res.headers.get("location");
    if (res.status < 300 || res.status >= 400 || location === null) throw new Error(`the authorization endpoint answered ${res.status} without a redirect`);
    next = new URL(location, next).href;
    if (new URL(next).hostname === "127.0.0.1") {
      const done = await fetch(next);
      await done.body?.cancel();
      return;
    }
  }
  throw new Error("too many redirects before the loopback redirect");
}

async function main(): Promise<number> {
  const url = process.argv[process.argv.length - 1] ?? "";
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as Record<string, unknown>;
  if (!/^https?:\/\//.test(url)) throw new Error("usage: client.ts <server-url>");
  const dir = mkdtempSync(join(tmpdir(), "mcphub-conformance-"));
  const env: NodeJS.ProcessEnv = { ...process.env, MCPHUB_DATA_DIR: join(dir, "data"), MCPHUB_KEYCHAIN: "off" };
  delete env.MCPHUB_VAULT_PASSPHRASE;
  delete env.MCPHUB_VAULT_PASSPHRASE_FILE;
  const dataDir = join(dir, "data");
  let supervisor: Supervisor | undefined;
  let auth: OAuthManager | undefined;
  try {
    const config = validateConfig({ servers: { [SERVER]: serverConfig(url, scenario, context) } });
    const cfg = config.servers[SERVER] as ServerConfig;
    const vault = await SecretStore.open({ dataDir, env });
    if (typeof context.client_secret === "string") await vault.set("conformance/CLIENT_SECRET", context.client_secret);
    if (typeof context.private_key_pem === "string") await vault.set("conformance/PRIVATE_KEY", context.private_key_pem);

    const secrets = new VaultSecretResolver({ dataDir, env });
    auth = new OAuthManager({ dataDir, env, secrets, log: (level, msg) => log(`${level}: ${msg}`) });
    supervisor = new Supervisor({
      servers: config.servers,
      connectTimeoutMs: 45_000,
      clientInfo: { name: "mcphub", version: VERSION },
      secrets,
      auth,
      log: (level, msg) => log(`${level}: ${msg}`),
      // The gateway's pass-through would send elicitation upstream; here the person accepts every
      // default (the SDK client fills them in because the capability says applyDefaults).
      hooks: {
        capabilities: { elicitation: { form: { applyDefaults: true } } },
        request: async (_origin, req) => {
          if (req.method === "elicitation/create") return { action: "accept", content: {} };
          throw new McpError(ErrorCode.MethodNotFound, `${req.method} is not answered by this client`);
        },
        notification: () => undefined,
        connected: () => undefined,
      },
    });
    supervisor.start();
    const store = await auth.openStore();
    let signIns = 0;
    const signInOnce = async (): Promise<void> => {
      if (++signIns > MAX_SIGN_INS) throw new Error(`still asked to sign in after ${MAX_SIGN_INS} sign-ins; giving up`);
      log(`sign-in ${signIns}`);
      const result = await signIn({ server: SERVER, cfg, store, secret: (ref) => secrets.header(ref), openUrl: approveInBrowser, timeoutMs: WAIT_MS });
      log(`signed in (scope: ${result.scope ?? "none"})`);
    };
    /** A running gateway notices the new sign-in by itself: wait for it to leave needs_auth. */
    const reconnected = (sup: Supervisor) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (sup.snapshot(SERVER)?.state === "needs_auth") return false;
          clearTimeout(timer);
          stop();
          resolve();
          return true;
        };
        const timer = setTimeout(() => {
          stop();
          reject(new Error("the supervisor did not notice the new sign-in"));
        }, WAIT_MS);
        const stop = sup.onChange(() => void check());
        check();
      });

    // Connect; a server that needs sign-in gets it, and the supervisor reconnects by itself.
    for (;;) {
      try {
        await supervisor.waitForServer(SERVER, { timeoutMs: WAIT_MS });
        break;
      } catch (err) {
        const state = supervisor.snapshot(SERVER)?.state;
        if (!(err instanceof NotConnectedError) || state !== "needs_auth") throw err;
        await signInOnce();
        await reconnected(supervisor);
      }
    }
    log(`connected: ${supervisor.snapshot(SERVER)?.tools.map((t) => t.name).join(", ") ?? ""}`);

    const call = CALLS[scenario] ?? (scenario.startsWith("auth/") ? { tool: supervisor.snapshot(SERVER)?.tools[0]?.name ?? "test-tool", args: {} } : undefined);
    if (call) {
      for (;;) {
        try {
          const result = await supervisor.callTool(SERVER, call.tool, call.args, { timeoutMs: WAIT_MS });
          log(`${call.tool}: ${JSON.stringify(result.content)}`);
          break;
        } catch (err) {
          // A broader scope for this call: sign in again (the recorded step-up scope is asked for).
          if (!(err instanceof NeedsAuthError) || !err.stepUp) throw err;
          log(err.message);
          await signInOnce();
        }
      }
    }
    return 0;
  } catch (err) {
    log(`failed: ${errorText(err)}`);
    return 1;
  } finally {
    await supervisor?.close();
    auth?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
