// The environment of a sandboxed server. Unsandboxed, a server gets the gateway's environment
// minus what belongs to someone else (downstream/stdio/child-env.ts: the vault passphrase, other
// servers' variables, stale vault names). Inside a sandbox that is kept and narrowed to an
// allow-list, because an ambient variable is as good a way out for a secret as a file
// (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN and friends live in many shells):
//  - what a process needs to run: PATH, HOME, USER, locale, time zone, terminal, XDG folders;
//  - with `network: full`, the proxy and CA bundle variables (the server needs them to get out);
//  - the server's own `env:` block and its vault secrets, always (they were configured for it);
//  - the names (or `PREFIX_*` patterns) listed in `sandbox.env`;
//  - what the runtime needs inside (runtime.ts: npm's cache, offline switches), and TMPDIR=/tmp.
import type { SandboxNetwork } from "../config/sandbox.js";

const BASE = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "NODE_ENV", "PYENV_ROOT", "PYENV_VERSION", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"];
const BASE_PREFIXES = ["LC_"];
const NETWORK = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"];

export interface SandboxEnvInput {
  /** The server's environment after env isolation (downstream/stdio/child-env.ts). */
  env: Record<string, string>;
  /** Names the server was configured with (its `env:` block and vault secrets): always kept. */
  own: readonly string[];
  /** `sandbox.env`: names, or `PREFIX_*` patterns. */
  allow: readonly string[];
  network: SandboxNetwork;
  /** Set inside whatever the gateway had (runtime needs, TMPDIR). */
  set: Record<string, string>;
}

function matches(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => (p.endsWith("*") ? name.startsWith(p.slice(0, -1)) : name === p));
}

export function sandboxEnv(input: SandboxEnvInput): Record<string, string> {
  const own = new Set(input.own);
  const allowed = new Set(input.network === "full" ? [...BASE, ...NETWORK] : BASE);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.env)) {
    if (own.has(k) || allowed.has(k) || BASE_PREFIXES.some((p) => k.startsWith(p)) || matches(k, input.allow)) out[k] = v;
  }
  for (const [k, v] of Object.entries(input.set)) out[k] = v;
  return out;
}

/** The names a sandbox lets through beyond the fixed base, for summaries. */
export function passedNames(input: Pick<SandboxEnvInput, "own" | "allow">): string[] {
  return [...new Set([...input.own, ...input.allow])].sort();
}
